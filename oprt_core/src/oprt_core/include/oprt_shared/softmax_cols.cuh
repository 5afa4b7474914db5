// softmax_cols.cuh: softmax over a strided axis whose kept inner dim has unit stride (softmax over axis 0
// of a row-major matrix), with a thread-block cluster per strip of columns (sm_90 and newer).
//
// A strip is kLanes 16-byte packs of columns; the axis is split into segments, one block a segment, and the blocks
// covering one strip's axis merge their per-column (max, sum of exp) before any output is written. Two designs:
// - softmax_cols_onchip_kernel (softmax.cu's first choice, axes of up to 16 x 1024 rows): each block holds its
//   whole segment on chip, in registers and dynamic shared memory, so DRAM sees one read and one write. The blocks
//   of a cluster exchange their pairs by st.async pushes counted on an mbarrier (kXPush) and fold the maxima before
//   the sums (kMerge 4): no cluster barrier and no exp in a dependent chain at the exchange. Without clusters
//   (kXGroup, launch_cols_group at the end) the blocks of a strip exchange through a workspace in ticket order: the
//   f32 fallback where the cluster does not launch.
// - softmax_cols_cluster_kernel (the stash kernel, the on-chip kernel's fallback): each block makes its online
//   (max, sum) per column over its segment (pass 1), the blocks exchange them through distributed shared memory,
//   and each block sweeps its segment again (pass 2, in reverse order) from L2, keeping its first rows (the ones
//   pass 2 reads last) in dynamic shared memory (the stash). Three sweeps of the data cap near two thirds of the
//   copy bandwidth whatever the arithmetic does.
// The on-chip kernel reads 16384^2 over axis 0 at ~78% (16-bit) to ~81% (f32) of the H200's copy bandwidth: what
// holds it is the DRAM order of 128-byte row pieces and the wait for the cluster's slowest block (docs/kernels.md).
// The tune harness (scripts/tune/) includes this header to time configurations the library does not pick.
#pragma once

#include "softmax_rows.cuh"

// The whole file needs thread-block clusters and inline PTX (mbarriers, st.async, cp.async, acquire/release loads,
// %globaltimer; its cluster-free group launch still needs the rest); softmax.cu chooses these kernels only where
// both are there.
#define OPRT_COLS_CLUSTERS (OPRT_HAS_CLUSTERS && OPRT_HAS_PTX)
#if OPRT_COLS_CLUSTERS

namespace oprt_kernels {

struct ColsClusterArgs {
    int64_t L, inner, xs, os;  // axis length; inner extent; x's and out's strides along the axis
    int64_t strips, seg;       // strips of kLanes packs per outer index; rows of the axis per block
    Indexer<2> outer;          // outer index -> x offset (0), out offset (1)
    // rows a thread keeps in dynamic shared memory (0: none): its first `stash` rows, which pass 2 reads
    // last (the likeliest to have left L2 by then), come back from shared memory instead
    int64_t stash;
    // kXGroup (softmax_cols_onchip_kernel without clusters): blocks a strip (nb), strips a
    // chunk of the ticket order (chunk), strips in all (groups = outer x strips), and the workspace (all
    // ones before each launch): the ticket counter, and slots[g][rank][W], each block's (max, sum) per column
    int64_t nb = 0, chunk = 1, groups = 0;
    unsigned *ticket = nullptr;
    unsigned long long *slots = nullptr;
    // kXSplit (tune only): clusters a strip (ncl); per cluster, in ticket order, a published flag and its W merged
    // (max, sum) pairs; the ticket counter above (zeroed with the flags before each launch; null in tune's
    // hardware-order variant: the cluster's index names its strip)
    int64_t ncl = 1;
    unsigned *flags = nullptr;
    float2 *xpairs = nullptr;
};

// How the blocks covering one strip's axis exchange their (max, sum) pairs (softmax_cols_onchip_kernel):
enum ColsExchange : int {
    kXCluster = 0,  // a thread-block cluster of up to 16 blocks, through distributed shared memory
    kXPair = 1,     // tune only: two clusters, through global memory
    kXGroup = 2,    // no cluster: a strip's nb blocks (by ticket) through the workspace
    kXPush = 3,     // a cluster, each block pushing its pairs into every block's shared memory by st.async,
                    // counted by an mbarrier: no cluster barrier at the exchange (ColsPush below)
    kXSplit = 4,    // a strip's axis split over ncl clusters: each cluster as kXPush, then the clusters
                    // of a strip through the workspace (rank 0 publishes the cluster's pairs and a flag; every block
                    // waits for the strip's other flags); a cluster's ticket, taken at its start, names its strip
                    // and part, so that it waits only for clusters that run or will run (tune only: slower than
                    // kXPush at every shape measured)
};

// How a block's second sweep finds its segment (ColsMode):
enum ColsMode : int {
    kColsL2 = 0,      // read again from global memory, hoping for L2 hits (last rows first)
    kColsL2Hint = 1,  // the same with L2 eviction hints: first reads evict_last, second reads and the
                      // writes evict_first
    // (Other hint modes, each line demoted to evict_normal after its last read, evict_last on half the first
    // reads, no evict_last, were none better; loads staged through shared memory by cp.async gained nothing, and
    // cp.async with an L2::cache_hint operand stopped the kernel with "illegal instruction" on the H200, CUDA
    // 13.0, driver 580.)
};

// The per-column statistics of the columns kernels, in shared memory: per-warp partials, this block's (max,
// sum) (read by the other blocks of the cluster) and the column's merged max and 1 / sum.
template <int W, int kWarps> struct ColsStats {
    float wm[kWarps][W], ws[kWarps][W];
    float bm[W], bs[W];
    float gm[W], gi[W], gs[W];
};

__device__ __forceinline__ unsigned long long globaltimer_ns() {
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    return now;
}
__device__ __forceinline__ void st_relaxed_u64(unsigned long long *p, unsigned long long v) {
#if OPRT_PTX_AT_LEAST(700)
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
#else
    *(volatile unsigned long long *)p = v;
#endif
}
__device__ __forceinline__ unsigned long long ld_relaxed_u64(const unsigned long long *p) {
    unsigned long long v;
#if OPRT_PTX_AT_LEAST(700)
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
#else
    v = *(const volatile unsigned long long *)p;
#endif
    return v;
}
// kXGroup's slots: a (max, sum) pair as one 64-bit word, written once; all ones (the workspace's fill
// before the launch) is "not yet" and is never written (it would be two NaNs; another NaN pair stands in)
constexpr unsigned long long kSlotEmpty = ~0ull;
__device__ __forceinline__ unsigned long long pack_pair(float m, float s) {
    const unsigned long long v = (unsigned long long)__float_as_uint(s) << 32 | __float_as_uint(m);
    return v == kSlotEmpty ? 0x7fffffff7fffffffull : v;
}
// Merges each thread's (max, sum of exp(x - max)) per column (lane's V columns) over the row lanes of a warp,
// the warps of the block, then the cluster's blocks through distributed shared memory: st.gm / st.gi / st.gs
// hold the column's max, 1 / sum and sum on return, for the caller to read after a block barrier. One
// cluster barrier; st.bm / st.bs must stay alive until every block of the cluster has read them (a cluster
// barrier, or its arrive + wait, before the block exits).
// kGlobal (kXGroup): the blocks are not a cluster; block q of strip g publishes each column's pair to
// ga->slots[g][q][column] and reads the strip's nb pairs from there, waiting on each until it is written
// (its writer is running or will run: see launch_cols_group). No cluster barrier.
// kPush (kXPush): the blocks push their pairs into each other's `push` slots (ColsPush below); no
// block reads another's shared memory, so st.bm / st.bs need not outlive the call.
// barrier_stamp (tune's timelines; null in the library): thread 0 writes %globaltimer there once the block's own
// warps have all reached the merge, i.e. between waiting for this block and waiting for the others. Where the
// includer defines OPRT_COLS_MERGE_STAMPS (the tune harness) the block has kMergeStamps slots and thread 0 also
// stamps the points inside the merge (COLS_MERGE_STAMP below); the library's build leaves it undefined.
// kMerge: 0 one thread a column folding the 8 warps' (and then the G groups') pairs in a dependent chain; 1 the
// same pairs folded by shuffle trees (P lanes a column, log2(P) levels); 2 the trees with maxsum_merge_fast, every
// merge included: the library's group launch (softmax.cu kColsMerge).
// kMerge 4 (kPush only; the library's pushed launch): the maxima first, then the sums. The kernel
// takes each warp's max per column (a max-only shuffle tree) before its exp pass, so that a thread's exps and sum
// are against its warp's max: the warp's sums add with shuffles; after the block barrier P = kThreads / W threads
// a column take the block's max over the kWarps warps' maxima and scale the warps' sums to it (kWarps exps a
// column); across the cluster every group thread reads all nb ranks' maxima of its column, scales its ranks' sums
// to the column's max, and the groups' sums add. No exp in a dependent chain (with merge 2 a pushed f16 block spent
// ~2.7 us in its in-warp merges and folding the warps' pairs). (Taking the maxima after the block barrier, one exp
// a thread and column, measured between 2 and 4.)
__device__ __forceinline__ void maxsum_merge_fast(float &m, float &s, float m2, float s2) {
    // maxsum_merge with __expf (ex2.approx): the scale of a part's sum errs by ~|m - max| * 2^-24 relatively,
    // a part whose weight exp(m - max) is that much smaller; inside f32 softmax's 130 eps budget
    const float mn = fmaxf(m, m2);
    if (mn == -INFINITY) {
        s += s2;
        return;
    }
    s = (s == 0.f ? 0.f : s * __expf(m - mn)) + (s2 == 0.f ? 0.f : s2 * __expf(m2 - mn));
    m = mn;
}
template <int kMerge> __device__ __forceinline__ void merge_pair(float &m, float &s, float m2, float s2) {
    if constexpr (kMerge == 2) maxsum_merge_fast(m, s, m2, s2);
    else maxsum_merge(m, s, m2, s2);
}
// Folds the P pairs per column st_m[0..P)[c], st_s[..] of W columns with a shuffle tree: thread t takes pair
// t % P of column t / P (+ kThreads / P per further round); the lane holding pair 0 calls put(c, m, s).
template <int kMerge, int kThreads, int P, int W, typename Put>
__device__ __forceinline__ void fold_pairs(const float (*st_m)[W], const float (*st_s)[W], Put put) {
    static_assert(P >= 1 && (P & (P - 1)) == 0 && P <= kWarp, "a power of two up to a warp");
    const int t = threadIdx.x, sub = t % P;
#pragma unroll
    for (int k = 0; k < (W * P + kThreads - 1) / kThreads; ++k) {
        const int c = t / P + k * (kThreads / P);
        float cm = c < W ? st_m[sub][c] : -INFINITY, cs = c < W ? st_s[sub][c] : 0.f;
#pragma unroll
        for (int d = 1; d < P; d *= 2) {
            const float m2 = shfl_xor(cm, d), s2 = shfl_xor(cs, d);
            merge_pair<kMerge>(cm, cs, m2, s2);
        }
        if (sub == 0 && c < W) put(c, cm, cs);
    }
}
// The two halves of a cluster barrier (softmax_rows.cuh's cluster_arrive, cluster_wait): arrive once this block is
// done reading the others' shared memory, wait before it exits (its own shared memory stays alive until all have
// arrived).
// kXPush: timelines put 1.8-3.6 us of a block's ~19 us in a cluster barrier at the exchange, as much with clusters
// of one block, where nothing is waited for: the barrier's
// arrive has release semantics and its wait returns once that release is done, which under the kernel's own
// streaming load takes microseconds. Pushing instead: at its start every block initialises an mbarrier that
// expects nb x W pairs (8 bytes each) and arrives, relaxed, on a cluster barrier that it waits on only at the
// exchange (by then long complete: it only guarantees that every block's mbarrier exists); at the exchange each
// block writes its W pairs into slot [q] of every block's `pair` (its own included) with
// st.async ... mbarrier::complete_tx, whose completion on the receiver's mbarrier releases the data at cluster
// scope, and waits on its own mbarrier (acquire, cluster scope) for the nb x W pairs it receives. No block reads
// another's shared memory, so none has to wait for the others before exiting: a block's pushes complete on a
// receiver that is still waiting for them. A cluster of one block pushes nothing and reads its own pairs
// (compute-sanitizer memcheck flags st.async in a cluster of one: "Cluster needs to have at least 2 blocks",
// though the results are right).
template <int W, int kMaxNb = 16> struct alignas(16) ColsPush {
    float2 pair[kMaxNb][W];  // [rank][column]: rank's (max, sum) of the column
    unsigned long long bar;  // the mbarrier
};
__device__ __forceinline__ void push_init(unsigned long long *bar, unsigned bytes) {
    if (threadIdx.x == 0) {
        mbar_init_armed(bar, bytes);
        mbar_init_fence();
    }
}
__device__ __forceinline__ void push_start(unsigned long long *bar, unsigned bytes) {
    push_init(bar, bytes);
    cluster_arrive_relaxed();
}
// Writes v into rank r's copy of the shared variable at p (kXSplit's ticket broadcast)
__device__ __forceinline__ void st_cluster_u32(const void *p, int r, unsigned v) {
#if OPRT_PTX_AT_LEAST(900)
    unsigned rd;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rd) : "r"(smem_u32(p)), "r"(r));
    asm volatile("st.shared::cluster.u32 [%0], %1;" ::"r"(rd), "r"(v) : "memory");
#endif
}
__device__ __forceinline__ unsigned ld_acquire_u32(const unsigned *p) {
    unsigned v;
#if OPRT_PTX_AT_LEAST(700)
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
#else
    v = *(const volatile unsigned *)p;
#endif
    return v;
}
__device__ __forceinline__ void st_release_u32(unsigned *p, unsigned v) {
#if OPRT_PTX_AT_LEAST(700)
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(p), "r"(v) : "memory");
#else
    *(volatile unsigned *)p = v;
#endif
}
// st.async of 16 bytes (two columns' pairs) into the same offset of rank r's shared memory, completing there on
// the mbarrier at bar's offset
__device__ __forceinline__ void push_pairs(const void *dst, const unsigned long long *bar, int r, float4 v) {
#if OPRT_PTX_AT_LEAST(900)
    unsigned rd, rb;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rd) : "r"(smem_u32(dst)), "r"(r));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rb) : "r"(smem_u32(bar)), "r"(r));
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.f32 [%0], {%1, %2, %3, %4}, [%5];" ::"r"(rd),
                 "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w), "r"(rb)
                 : "memory");
#endif
}
__device__ __forceinline__ void push_wait(unsigned long long *bar) { mbar_wait(bar, 0); }  // its one phase
#ifdef OPRT_COLS_MERGE_STAMPS
// [0] the block's own warps at the merge, [1] this block's pairs folded and published, [2] past the cluster barrier
// (kGlobal: the block barrier), [3] the other blocks' pairs read and merged, [4] past the block barrier after them,
// [5] the column's final fold done
constexpr int kMergeStamps = 6;
// With the merge stamps, thread 0 keeps every stamp of the block (probe_stamp's 8, then these) in shared memory
// and stores them when the block ends (probe_stamp 5): a global store before the cluster barrier makes the
// barrier's release wait for that store, inside the stretch being measured (without the merge stamps the
// timeline stores at once; with the merge stamps the totals measured the same).
__device__ __forceinline__ unsigned long long *probe_shared() {
    __shared__ unsigned long long s[8 + kMergeStamps];
    return s;
}
#define COLS_MERGE_STAMP(i)                                                        \
    do {                                                                           \
        if (barrier_stamp != nullptr && t == 0) probe_shared()[8 + (i)] = globaltimer_ns(); \
    } while (0)
#else
constexpr int kMergeStamps = 1;  // the library: stamp 0 only, stored at once
#define COLS_MERGE_STAMP(i)                                                                   \
    do {                                                                                      \
        if ((i) == 0 && barrier_stamp != nullptr && t == 0) *barrier_stamp = globaltimer_ns(); \
    } while (0)
#endif
// kReady (kXSplit): the cluster barrier that push_start arrives on was completed at the block's start.
template <int kLanes, int kThreads, int V, bool kGlobal = false, int kMerge = 0, int kMaxNb = 16, bool kPush = false,
          bool kReady = false>
__device__ __forceinline__ void cols_merge_stats(float (&m)[V], float (&s)[V], ColsStats<kLanes * V, kThreads / kWarp> &st,
                                                 int nb, const ColsClusterArgs *ga = nullptr, int64_t g = 0,
                                                 int q = 0, unsigned long long *barrier_stamp = nullptr,
                                                 ColsPush<kLanes * V, kPush ? kMaxNb : 1> *push = nullptr) {
    constexpr int W = kLanes * V, kWarps = kThreads / kWarp;
    static_assert((kMerge >= 0 && kMerge <= 2) || (kMerge == 4 && kPush && !kGlobal), "kMerge 0-2, or 4 pushed");
    const int t = threadIdx.x, lane = t % kLanes;
    // the row lanes of a warp: kMerge 4 adds the sums (m is the warp's max already, see the kernel), the others
    // merge the (max, sum) pairs
    if constexpr (kMerge == 4) {
#pragma unroll
        for (int e = 0; e < V; ++e) {
#pragma unroll
            for (int d = kLanes; d < kWarp; d *= 2) s[e] += shfl_xor(s[e], d);
        }
    } else {
#pragma unroll
        for (int d = kLanes; d < kWarp; d *= 2) {
#pragma unroll
            for (int e = 0; e < V; ++e) {
                const float m2 = shfl_xor(m[e], d), s2 = shfl_xor(s[e], d);
                merge_pair<kMerge>(m[e], s[e], m2, s2);
            }
        }
    }
    if (t % kWarp < kLanes) {
#pragma unroll
        for (int e = 0; e < V; ++e) {
            st.wm[t / kWarp][lane * V + e] = m[e];
            st.ws[t / kWarp][lane * V + e] = s[e];
        }
    }
    __syncthreads();
    COLS_MERGE_STAMP(0);
    if constexpr (kMerge == 4) {
        // P = kThreads / W threads a column (consecutive lanes of one warp): the block's max over the warps'
        // maxima, then the warps' sums scaled to it
        constexpr int P = kThreads / W;
        static_assert(P >= 1 && (P & (P - 1)) == 0 && P <= kWarp && kWarps % P == 0, "P threads a column");
        const int c = t / P, sub = t % P;
        float cm = st.wm[0][c];
#pragma unroll
        for (int w = 1; w < kWarps; ++w) cm = fmaxf(cm, st.wm[w][c]);
        float cs = 0.f;
#pragma unroll
        for (int w = sub; w < kWarps; w += P) {
            const float sw = st.ws[w][c];
            cs += cm == -INFINITY || sw == 0.f ? sw : sw * __expf(st.wm[w][c] - cm);
        }
#pragma unroll
        for (int d = 1; d < P; d *= 2) cs += shfl_xor(cs, d);
        if (sub == 0) st.bm[c] = cm, st.bs[c] = cs;
    } else {
        auto put_block = [&](int c, float cm, float cs) {
            st.bm[c] = cm;
            st.bs[c] = cs;
            if constexpr (kGlobal) st_relaxed_u64(ga->slots + (g * nb + q) * W + c, pack_pair(cm, cs));
        };
        if constexpr (kMerge == 0) {
            if (t < W) {
                float cm = -INFINITY, cs = 0.f;
                for (int w = 0; w < kWarps; ++w) maxsum_merge(cm, cs, st.wm[w][t], st.ws[w][t]);
                put_block(t, cm, cs);
            }
        } else {
            fold_pairs<kMerge, kThreads, kWarps, W>(st.wm, st.ws, put_block);
        }
    }
    COLS_MERGE_STAMP(1);
    if constexpr (kGlobal) {
        __syncthreads();  // st.wm is read above before the groups below overwrite it
    } else if constexpr (kPush) {
        static_assert(W % 2 == 0, "two columns' pairs a push");
        __syncthreads();  // st.bm / st.bs written; st.wm read
        if (nb > 1) {     // a block alone reads its own st.bm / st.bs below (see ColsPush)
            if constexpr (!kReady) cluster_wait();  // push_start's arrive: every block's mbarrier is initialised
            for (int i = t; i < nb * (W / 2); i += kThreads) {
                const int r = i / (W / 2), c = i % (W / 2) * 2;
                push_pairs(&push->pair[q][c], &push->bar, r,
                           make_float4(st.bm[c], st.bs[c], st.bm[c + 1], st.bs[c + 1]));
            }
        }
    } else {
        cluster_sync();
    }
    COLS_MERGE_STAMP(2);
    // The blocks' pairs, read through distributed shared memory by every thread at once: G groups of W
    // threads (one column each), group g reading ranks g, g + G, ... with all its loads issued before the
    // first merge (one thread a column reading the 16 ranks in turn would wait out 32 DSMEM round trips in a
    // row), then the groups merged through shared memory.
    constexpr int G = kThreads / W < kWarps ? kThreads / W : kWarps;  // st.wm holds kWarps rows
    constexpr int R = (kMaxNb + G - 1) / G;  // ranks a group reads (clusters of at most 16 blocks, kGlobal strips of kMaxNb)
    static_assert(G >= 1, "a group of W threads per column set");
    if (t < G * W) {
        const int c = t % W, gi = t / W;
        float rm[R], rs[R];
#pragma unroll
        for (int i = 0; i < R; ++i) rm[i] = -INFINITY, rs[i] = 0.f;
        if constexpr (kGlobal) {
            const unsigned long long *sl = ga->slots + g * nb * W + c;
            unsigned long long v[R];
#pragma unroll
            for (int i = 0; i < R; ++i) v[i] = gi + i * G < nb ? ld_relaxed_u64(sl + (gi + i * G) * W) : 0ull;
            const unsigned long long t0 = globaltimer_ns();
#pragma unroll
            for (int i = 0; i < R; ++i) {
                const int r = gi + i * G;
                if (r >= nb) continue;
                while (v[i] == kSlotEmpty) {
                    __nanosleep(32);
                    v[i] = ld_relaxed_u64(sl + r * W);
                    // 10 s: a writer that never ran (the launcher's residency check rules it out); a trap fails
                    // the launch where a hang would stop the process
                    if (globaltimer_ns() - t0 > 10000000000ull) __trap();
                }
                rm[i] = __uint_as_float((unsigned)v[i]), rs[i] = __uint_as_float((unsigned)(v[i] >> 32));
            }
        } else if constexpr (kPush) {
            if (nb > 1) push_wait(&push->bar);
            if constexpr (kMerge == 4) {
                // the column's max over every rank, then this group's ranks' sums scaled to it
                float cm = -INFINITY;
#pragma unroll
                for (int r = 0; r < kMaxNb; ++r)
                    if (r < nb) cm = fmaxf(cm, nb > 1 ? push->pair[r][c].x : st.bm[c]);
                float cs = 0.f;
#pragma unroll
                for (int i = 0; i < R; ++i) {
                    const int r = gi + i * G;
                    if (r < nb) {
                        const float mr = nb > 1 ? push->pair[r][c].x : st.bm[c];
                        const float sr = nb > 1 ? push->pair[r][c].y : st.bs[c];
                        cs += cm == -INFINITY || sr == 0.f ? sr : sr * __expf(mr - cm);
                    }
                }
                st.ws[gi][c] = cs;  // the per-warp partials were consumed before the pushes
                if (gi == 0) st.gm[c] = cm;
            } else {
#pragma unroll
                for (int i = 0; i < R; ++i) {
                    const int r = gi + i * G;
                    if (r < nb) {
                        rm[i] = nb > 1 ? push->pair[r][c].x : st.bm[c];
                        rs[i] = nb > 1 ? push->pair[r][c].y : st.bs[c];
                    }
                }
            }
        } else {
#if OPRT_PTX_AT_LEAST(900)
            cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
#pragma unroll
            for (int i = 0; i < R; ++i) {
                const int r = gi + i * G;
                if (r < nb) {
                    rm[i] = *cluster.map_shared_rank(&st.bm[c], r);
                    rs[i] = *cluster.map_shared_rank(&st.bs[c], r);
                }
            }
#endif
        }
        if constexpr (kMerge != 4) {
            float cm = -INFINITY, cs = 0.f;
#pragma unroll
            for (int i = 0; i < R; ++i) merge_pair<kMerge>(cm, cs, rm[i], rs[i]);
            st.wm[gi][c] = cm;  // the per-warp partials were consumed before the cluster barrier
            st.ws[gi][c] = cs;
        }
    }
    COLS_MERGE_STAMP(3);
    __syncthreads();
    COLS_MERGE_STAMP(4);
    auto put_column = [&](int c, float cm, float cs) {
        st.gm[c] = cm;
        st.gi[c] = 1.f / cs;
        st.gs[c] = cs;
    };
    if constexpr (kMerge == 4) {
        if (t < W) {
            float cs = st.ws[0][t];
#pragma unroll
            for (int k = 1; k < G; ++k) cs += st.ws[k][t];
            put_column(t, st.gm[t], cs);
        }
    } else if constexpr (kMerge == 0) {
        if (t < W) {
            float cm = -INFINITY, cs = 0.f;
#pragma unroll
            for (int k = 0; k < G; ++k) maxsum_merge(cm, cs, st.wm[k][t], st.ws[k][t]);
            put_column(t, cm, cs);
        }
    } else {
        fold_pairs<kMerge, kThreads, G, W>(st.wm, st.ws, put_column);
    }
    COLS_MERGE_STAMP(5);
}
#undef COLS_MERGE_STAMP

// kLanes threads across a strip (a 16-byte pack each), kThreads / kLanes rows in flight, kUnroll packs
// loaded per thread per trip. Grid: clusters of nb blocks (nb = ceil(L / seg) <= kMaxCluster), one
// cluster per (outer index, strip).
// kMode: a ColsMode.
template <typename T, int kLanes, int kThreads, int kUnroll, int kMode = kColsL2>
__global__ void __launch_bounds__(kThreads, 1024 / kThreads)  // 64 registers a thread: 2 blocks of 512 an SM
softmax_cols_cluster_kernel(T *__restrict__ out, const T *__restrict__ x, ColsClusterArgs a) {
    constexpr int V = Pack<T>::N;
    constexpr int W = kLanes * V;            // columns of a strip
    constexpr int RL = kThreads / kLanes;    // row lanes
    constexpr int kWarps = kThreads / kWarp;
    static_assert(kWarp % kLanes == 0 && kThreads % kWarp == 0, "lanes of a strip divide a warp");
    __shared__ ColsStats<W, kWarps> st;
    extern __shared__ uint4 stash[];  // [a.stash][kThreads]: this block's first rows
    const int t = threadIdx.x, lane = t % kLanes, rl = t / kLanes;
    const int nb = cluster_blocks(), q = cluster_rank();
    const int64_t cid = (int64_t)blockIdx.x / nb;
    const int64_t strip = cid % a.strips, o = cid / a.strips;
    int64_t off[2];
    a.outer.offsets(o, off);
    const int64_t col = strip * W + (int64_t)lane * V;
    const bool live_col = col < a.inner;  // inner % V == 0: a pack is all in or all out
    const int64_t r0 = (int64_t)q * a.seg, end = r0 + a.seg < a.L ? r0 + a.seg : a.L;
    const int K = (int)((a.seg + RL - 1) / RL);  // rows a thread visits (some past `end`)
    const T *px = x + off[0] + col + (r0 + rl) * a.xs;
    T *po = out + off[1] + col + (r0 + rl) * a.os;
    const int64_t xstep = RL * a.xs, ostep = RL * a.os;
    auto valid = [&](int k) { return live_col && k < K && r0 + rl + (int64_t)k * RL < end; };

    // pass 1: online (max, sum) per column over this thread's rows, kUnroll loads in flight
    const uint64_t pol_first = kMode == kColsL2Hint ? l2_policy(false) : 0;
    const uint64_t pol_last = kMode == kColsL2Hint ? l2_policy(true) : 0;
    float m[V], s[V];
#pragma unroll
    for (int e = 0; e < V; ++e) m[e] = -INFINITY, s[e] = 0.f;
    for (int k0 = 0; k0 < K; k0 += kUnroll) {
        uint4 raw[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const T *p = px + (k0 + u) * xstep;
            raw[u] = !valid(k0 + u)        ? make_uint4(0u, 0u, 0u, 0u)
                     : kMode == kColsL2Hint ? ld_policy(p, pol_last)
                                            : oprt_vendor::ldg(reinterpret_cast<const uint4 *>(p));
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
            if (k0 + u < a.stash) stash[(int64_t)(k0 + u) * kThreads + t] = raw[u];
        float tmax[V];
#pragma unroll
        for (int e = 0; e < V; ++e) tmax[e] = -INFINITY;
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            if (!valid(k0 + u)) continue;
            float f[V];
            unpack_floats<T>(raw[u], f);
#pragma unroll
            for (int e = 0; e < V; ++e) tmax[e] = fmaxf(tmax[e], f[e]);
        }
        // the running max moves on few trips once a column has seen some rows: the rescale (an exp a
        // column) runs only where some lane of the warp needs it (a warp-uniform branch)
        bool grow = false;
#pragma unroll
        for (int e = 0; e < V; ++e) grow |= tmax[e] > m[e];
        if (oprt_vendor::warp_any(grow)) {
#pragma unroll
            for (int e = 0; e < V; ++e) {
                const float mn = fmaxf(m[e], tmax[e]);
                if (mn == -INFINITY) continue;
                s[e] = s[e] == 0.f ? 0.f : s[e] * exp_t<T>(m[e] - mn);
                m[e] = mn;
            }
        }
        // the exps are taken against mu: the max, or 0 while a column has seen only -inf (then a -inf adds
        // exp(-inf) = 0 where exp(-inf - -inf) would be a NaN; a NaN still adds a NaN)
        float mu[V];
#pragma unroll
        for (int e = 0; e < V; ++e) mu[e] = m[e] == -INFINITY ? 0.f : m[e];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            if (!valid(k0 + u)) continue;
            float f[V];
            unpack_floats<T>(opaque(raw[u]), f);
#pragma unroll
            for (int e = 0; e < V; ++e) s[e] += exp_t<T>(f[e] - mu[e]);
        }
    }
    cols_merge_stats<kLanes, kThreads>(m, s, st, nb);
    __syncthreads();
    float inv[V];
#pragma unroll
    for (int e = 0; e < V; ++e) {
        m[e] = st.gm[lane * V + e];
        inv[e] = st.gi[lane * V + e];
    }
    // pass 2: this thread's rows again, last read first (the likeliest still in L2), and the writes
    for (int k0 = 0; k0 < K; k0 += kUnroll) {
        uint4 raw[kUnroll];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int k = K - 1 - (k0 + u);
            const T *p = px + k * xstep;
            raw[u] = !(k >= 0 && valid(k)) ? make_uint4(0u, 0u, 0u, 0u)
                     : k < a.stash           ? stash[(int64_t)k * kThreads + t]
                     : kMode == kColsL2Hint  ? ld_policy(p, pol_first)
                                             : oprt_vendor::ldg(reinterpret_cast<const uint4 *>(p));
        }
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            const int k = K - 1 - (k0 + u);
            if (k < 0 || !valid(k)) continue;
            float f[V];
            unpack_floats<T>(raw[u], f);
            Pack<T> p;
#pragma unroll
            for (int e = 0; e < V; ++e) p.v[e] = from_f<T>(exp_t<T>(f[e] - m[e]) * inv[e]);
            if constexpr (kMode == kColsL2Hint) st_policy(po + k * ostep, p, pol_first);
            else store_pack(po + k * ostep, p);
        }
    }
    cluster_sync();  // st.bm / st.bs stay alive until every block of the cluster has read them
}

// ---- whole segments on chip ------------------------------------------------------------------------------
// Every pass above re-reads its segment from L2 or DRAM: the bare pattern caps near two thirds of the copy
// bandwidth. Here each block keeps its whole segment on chip: kRegRows rows a thread in registers, kSmemRows in
// dynamic shared memory (filled by cp.async, no registers held), so DRAM sees one read and one write. A cluster of
// up to 16 blocks covers the axis: 16 x 1024 rows at 256 threads x 32 rows (128 KB a block, 2 blocks an SM).
// Strips are 128 bytes or more and two blocks share an SM: narrower strips read badly, and one block an SM leaves
// its load and store phases without overlap.

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem) {
#if OPRT_PTX_AT_LEAST(800)
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
#endif
}
__device__ __forceinline__ void cp_async_wait_all() {
#if OPRT_PTX_AT_LEAST(800)
    asm volatile("cp.async.wait_all;" ::: "memory");
#endif
}

// kLanes threads across a strip (a 16-byte pack each), RL = kThreads / kLanes row lanes; thread (lane, rl)
// holds rows r0 + rl + k * RL of its pack, k < kRegRows in registers, the next kSmemRows in shared memory.
// Grid: clusters of nb = ceil(L / a.seg) blocks, a.seg <= RL * (kRegRows + kSmemRows); one cluster per
// (outer index, strip). Dynamic shared memory: kSmemRows * kThreads * 16 bytes.
// kHint: loads and stores evict_first in L2 (the data is read once and written once).
// kStoreExp: the sum pass overwrites each held pack with exp(x - the thread's max) rounded to T, and the
// writing pass multiplies it by exp(thread max - column max) / sum: one exp an element instead of two.
// (A share of the 16-bit exps on the FMA pipe, a cubic for 2^x, was no better: the pass is latency-bound.)
// Timestamps for the tune harness (stamps non-null): block b writes globaltimer readings (ns) at its start, once
// thread 0's loads have landed, before the exchange, after it, after its writes and at exit to
// stamps[8 * b + 0..5], its SM to stamps[8 * b + 6] and its cluster's size to stamps[8 * b + 7]. (An admission
// gate here, at most `window` blocks loading at a time in ticket order, was no better.)
// kX (a ColsExchange): kXGroup launches without clusters (launch_cols_group): each block takes a ticket at
// its start and the ticket names its strip and rank, so that a block waits only for blocks that are running
// or will be (see launch_cols_group), and the strip's blocks exchange through the workspace.
// kXPair (tune only): two clusters cover a strip's axis, clusters 2c and 2c + 1,
// and exchange their merged (max, sum) through global memory: pair_slots[cluster][W], then pair_flags[cluster]
// = epoch (a value no earlier launch on these buffers used).
struct ColsProbe {
    unsigned long long *stamps = nullptr;
    unsigned long long *barrier = nullptr;  // [block]: when the block's own warps reached the merge
    float2 *pair_slots = nullptr;
    unsigned *pair_flags = nullptr;
    unsigned epoch = 0;
};
__device__ __forceinline__ void probe_stamp(const ColsProbe &p, int i) {
    if (p.stamps != nullptr && threadIdx.x == 0) {
        const unsigned long long now = globaltimer_ns();
#ifdef OPRT_COLS_MERGE_STAMPS
        unsigned long long *row = probe_shared();  // stored to p.stamps when the block ends (i == 5, below)
#else
        unsigned long long *row = p.stamps + 8 * (size_t)blockIdx.x;
#endif
        row[i] = now;
        if (i == 0) {
            unsigned sm;
            asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
            row[6] = sm;
            row[7] = (unsigned long long)cluster_blocks();
        }
#ifdef OPRT_COLS_MERGE_STAMPS
        if (i == 5) {
            for (int k = 0; k < 8; ++k) p.stamps[8 * (size_t)blockIdx.x + k] = row[k];
            if (p.barrier != nullptr)
                for (int k = 0; k < kMergeStamps; ++k) p.barrier[kMergeStamps * (size_t)blockIdx.x + k] = row[8 + k];
        }
#endif
    }
}

template <typename T, int kLanes, int kThreads, int kRegRows, int kSmemRows, bool kHint = false, bool kStoreExp = true,
          int kX = kXCluster, int kMerge = 0, int kMaxNb = 16>
__global__ void __launch_bounds__(kThreads, (512 / kThreads) > 0 ? 512 / kThreads : 1)  // <= 128 registers
softmax_cols_onchip_kernel(T *__restrict__ out, const T *__restrict__ x, ColsClusterArgs a, ColsProbe probe) {
    constexpr int V = Pack<T>::N;
    constexpr int W = kLanes * V;          // columns of a strip
    constexpr int RL = kThreads / kLanes;  // row lanes
    constexpr int kWarps = kThreads / kWarp;
    static_assert(kWarp % kLanes == 0 && kThreads % kWarp == 0, "lanes of a strip divide a warp");
    __shared__ ColsStats<W, kWarps> st;
    extern __shared__ uint4 held[];  // [kSmemRows][kThreads]
    const int t = threadIdx.x, lane = t % kLanes, rl = t / kLanes;
    constexpr bool kPair = kX == kXPair, kGroup = kX == kXGroup, kSplit = kX == kXSplit, kPush = kX == kXPush || kSplit;
    // kXPush's slots and mbarrier (a one-pair array otherwise: unused)
    __shared__ ColsPush<W, kPush ? kMaxNb : 1> push;
    int nb, q;
    int64_t cid;
    if constexpr (kGroup) {
        // tickets in chunks of a.chunk strips: within a chunk, rank-major (the chunk's strips side by side
        // for each rank's band of rows); a.chunk 1: one strip's blocks after another
        __shared__ unsigned ticket;
        // the counter starts all ones: the first ticket is 0xffffffff + 1
        if (t == 0) ticket = atomicAdd(a.ticket, 1u) + 1u;
        __syncthreads();
        const int64_t tk = ticket, first = tk / (a.chunk * a.nb) * a.chunk;
        const int64_t here = a.groups - first < a.chunk ? a.groups - first : a.chunk, j = tk - first * a.nb;
        nb = (int)a.nb, q = (int)(j / here), cid = first + j % here;
    } else {
        nb = cluster_blocks(), q = cluster_rank(), cid = (int64_t)blockIdx.x / nb;
    }
    if constexpr (kSplit) {
        // every block's mbarrier, then the cluster's ticket (rank 0 takes it and writes it into every rank's
        // shared memory), then one cluster barrier for both: the ticket names the strip and part this cluster loads
        __shared__ unsigned ctk;
        if (nb > 1) push_init(&push.bar, (unsigned)(nb * W * sizeof(float2)));
        if (a.ticket != nullptr && q == 0 && t == 0) {
            const unsigned tk = atomicAdd(a.ticket, 1u);
            for (int r = 0; r < nb; ++r) st_cluster_u32(&ctk, r, tk);
        }
        cluster_arrive();
        cluster_wait();
        if (a.ticket != nullptr) cid = ctk;
    }
    // kPair: clusters 2c, 2c + 1 share a strip; kSplit: clusters (tickets) a.ncl x s .. a.ncl x s + a.ncl - 1
    const int64_t sc = kPair ? cid / 2 : kSplit ? cid / a.ncl : cid;
    const int64_t strip = sc % a.strips, o = sc / a.strips;
    int64_t off[2];
    a.outer.offsets(o, off);
    const int64_t col = strip * W + (int64_t)lane * V;
    const bool live_col = col < a.inner;  // inner % V == 0: a pack is all in or all out
    const int64_t r0 = ((kPair ? (cid % 2) * nb : kSplit ? (cid % a.ncl) * nb : 0) + q) * a.seg;
    const int64_t end = r0 + a.seg < a.L ? r0 + a.seg : a.L;
    const T *px = x + off[0] + col + (r0 + rl) * a.xs;
    T *po = out + off[1] + col + (r0 + rl) * a.os;
    const int64_t xstep = RL * a.xs, ostep = RL * a.os;
    // rows left to this thread: k < n are valid
    const int64_t left = live_col && end > r0 + rl ? (end - r0 - rl + RL - 1) / RL : 0;
    const int n = left < kRegRows + kSmemRows ? (int)left : kRegRows + kSmemRows;
    const uint64_t pol = kHint ? l2_policy(false) : 0;
    probe_stamp(probe, 0);
    if constexpr (kPush && !kSplit)
        if (nb > 1) push_start(&push.bar, (unsigned)(nb * W * sizeof(float2)));

    uint4 reg[kRegRows];
#pragma unroll
    for (int k = 0; k < kRegRows; ++k)
        reg[k] = k >= n ? make_uint4(0u, 0u, 0u, 0u)
                 : kHint ? ld_policy(px + k * xstep, pol)
                         : oprt_vendor::ldg(reinterpret_cast<const uint4 *>(px + k * xstep));
#pragma unroll
    for (int k = 0; k < kSmemRows; ++k)
        if (kRegRows + k < n) cp_async16(&held[k * kThreads + t], px + (kRegRows + k) * xstep);

    // max, then the sum of exp(x - max) (against 0 while a column has seen only -inf: exp(-inf) adds 0, a
    // NaN still adds a NaN), over the rows this thread holds
    float m[V], s[V];
#pragma unroll
    for (int e = 0; e < V; ++e) m[e] = -INFINITY, s[e] = 0.f;
#pragma unroll
    for (int k = 0; k < kRegRows; ++k) {
        if (k >= n) break;
        float f[V];
        unpack_floats<T>(reg[k], f);
#pragma unroll
        for (int e = 0; e < V; ++e) m[e] = fmaxf(m[e], f[e]);
    }
    cp_async_wait_all();  // this thread's own copies: visible to it, no block barrier needed
#pragma unroll 4
    for (int k = 0; k < kSmemRows; ++k) {
        if (kRegRows + k >= n) break;
        float f[V];
        unpack_floats<T>(held[k * kThreads + t], f);
#pragma unroll
        for (int e = 0; e < V; ++e) m[e] = fmaxf(m[e], f[e]);
    }
    probe_stamp(probe, 1);
    if constexpr (kMerge == 4) {
        // the warp's max per column (see cols_merge_stats): the exps below are against it
#pragma unroll
        for (int e = 0; e < V; ++e) {
#pragma unroll
            for (int d = kLanes; d < kWarp; d *= 2) m[e] = fmaxf(m[e], shfl_xor(m[e], d));
        }
    }
    float mu[V];
#pragma unroll
    for (int e = 0; e < V; ++e) mu[e] = m[e] == -INFINITY ? 0.f : m[e];
    auto add_exps = [&](uint4 &raw) {
        float f[V];
        unpack_floats<T>(opaque(raw), f);
#pragma unroll
        for (int e = 0; e < V; ++e) {
            f[e] = exp_t<T>(f[e] - mu[e]);
            s[e] += f[e];
        }
        if constexpr (kStoreExp) raw = pack_floats<T>(f);
    };
#pragma unroll
    for (int k = 0; k < kRegRows; ++k) {
        if (k >= n) break;
        add_exps(reg[k]);
    }
#pragma unroll 4
    for (int k = 0; k < kSmemRows; ++k) {
        if (kRegRows + k >= n) break;
        add_exps(held[k * kThreads + t]);
    }
    float mt[V];  // the max the exps above are against (this thread's, kMerge 4 its warp's), before the merges
#pragma unroll
    for (int e = 0; e < V; ++e) mt[e] = m[e];
    probe_stamp(probe, 2);
    cols_merge_stats<kLanes, kThreads, V, kGroup, kMerge, kMaxNb, kPush, kSplit>(
        m, s, st, nb, &a, cid, q, probe.barrier ? probe.barrier + kMergeStamps * blockIdx.x : nullptr, &push);
    if constexpr (!kGroup && !kPush) cluster_arrive();  // done with the other blocks' st.bm / st.bs
    __syncthreads();
    if constexpr (kPair) {
        // the cluster's rank 0 publishes its (max, sum); every block waits for the partner cluster's and merges
        // (the same merge, commutative, in both clusters)
        if (q == 0 && t < W) {
            __stcg(&probe.pair_slots[cid * W + t], make_float2(st.gm[t], st.gs[t]));
            __threadfence();
        }
        __syncthreads();
        if (t == 0) {
            if (q == 0) atomicExch(&probe.pair_flags[cid], probe.epoch);
            const unsigned long long t0 = globaltimer_ns();
            while (*(volatile unsigned *)&probe.pair_flags[cid ^ 1] != probe.epoch) {
                __nanosleep(64);
                if (globaltimer_ns() - t0 > 200000000ull) __trap();  // 0.2 s: the partner never ran
            }
            __threadfence();
        }
        __syncthreads();
        if (t < W) {
            const float2 other = ld_cg(&probe.pair_slots[(cid ^ 1) * W + t]);
            float cm = st.gm[t], cs = st.gs[t];
            maxsum_merge(cm, cs, other.x, other.y);
            st.gm[t] = cm, st.gi[t] = 1.f / cs;
        }
        __syncthreads();
    }
    if constexpr (kSplit) {
        // the strip's clusters: rank 0 publishes this cluster's (max, sum) a column, then its flag (release); every
        // block waits for the strip's other flags (acquire) and folds the a.ncl parts in part order, so that every
        // cluster of the strip computes the same bits
        const int64_t G = a.ncl, part = cid % G, base = cid - part;
        if (G > 1) {
            if (q == 0) {
                if (t < W) {
                    __stcg(&a.xpairs[cid * W + t], make_float2(st.gm[t], st.gs[t]));
                    __threadfence();
                }
                __syncthreads();
                if (t == 0) st_release_u32(&a.flags[cid], 1u);
            }
            if (t < G && t != part) {
                const unsigned long long t0 = globaltimer_ns();
                while (ld_acquire_u32(&a.flags[base + t]) == 0u) {
                    __nanosleep(64);
                    // 10 s: a cluster that never ran (the launcher's residency check rules it out); a trap fails
                    // the launch where a hang would stop the process
                    if (globaltimer_ns() - t0 > 10000000000ull) __trap();
                }
            }
            __syncthreads();
            if (t < W) {
                float cm = -INFINITY, cs = 0.f;
                for (int64_t j = 0; j < G; ++j) {
                    const float2 p =
                        j == part ? make_float2(st.gm[t], st.gs[t]) : ld_cg(&a.xpairs[(base + j) * W + t]);
                    if (j == 0) cm = p.x, cs = p.y;
                    else maxsum_merge_fast(cm, cs, p.x, p.y);
                }
                st.gm[t] = cm, st.gi[t] = 1.f / cs, st.gs[t] = cs;
            }
            __syncthreads();
        }
    }
    probe_stamp(probe, 3);
    float inv[V];
#pragma unroll
    for (int e = 0; e < V; ++e) {
        m[e] = st.gm[lane * V + e];
        inv[e] = st.gi[lane * V + e];
        if constexpr (kStoreExp) {
            // the held exps are exp(x - mt) (against 0 where mt is -inf): out = that * exp(mt - M) / sum. A
            // thread that saw only -inf (or NaN) holds 0s (or NaN) and gets exp(-inf - M) = 0 times 1 / sum:
            // 0 where the sum is finite, NaN where a NaN or +inf elsewhere made the column's sum NaN (as on
            // the direct path; forcing the scale to 0 there would write 0s). A column of only -inf gives NaN, as
            // exp(-inf - -inf) does on the direct path.
            inv[e] = m[e] == -INFINITY ? NAN : expf(mt[e] - m[e]) * inv[e];
        }
    }
    auto emit = [&](const uint4 &raw, int k) {
        float f[V];
        unpack_floats<T>(raw, f);
        Pack<T> p;
#pragma unroll
        for (int e = 0; e < V; ++e)
            p.v[e] = from_f<T>(kStoreExp ? f[e] * inv[e] : exp_t<T>(f[e] - m[e]) * inv[e]);
        if constexpr (kHint) st_policy(po + k * ostep, p, pol);
        else store_pack(po + k * ostep, p);
    };
#pragma unroll
    for (int k = 0; k < kRegRows; ++k) {
        if (k >= n) break;
        emit(opaque(reg[k]), k);
    }
#pragma unroll 4
    for (int k = 0; k < kSmemRows; ++k) {
        if (kRegRows + k >= n) break;
        emit(held[k * kThreads + t], kRegRows + k);
    }
    probe_stamp(probe, 4);
    if constexpr (!kGroup && !kPush) cluster_wait();  // st.bm / st.bs stay alive until every block of the cluster has read them
    probe_stamp(probe, 5);
}

// Sets a kernel attribute to value on the current device unless set[dev] records a value at least as
// large there (a function's attribute is per device; set[] is the caller's per-kernel static record, a
// benign race: every writer writes what it has set). An unknown device is always set, never recorded.
constexpr int kAttrDevices = 64;
inline gpuError_t func_attribute_at_least(const void *kernel, cudaFuncAttribute attr, int value,
                                           int (&set)[kAttrDevices]) {
    int dev = 0;
    const bool known = gpuGetDevice(&dev) == gpuSuccess && dev >= 0 && dev < kAttrDevices;
    (void)gpuGetLastError();
    if (known && set[dev] >= value) return gpuSuccess;
    const gpuError_t err = cudaFuncSetAttribute(kernel, attr, value);
    if (err != gpuSuccess) {
        (void)gpuGetLastError();
        return err;
    }
    if (known) set[dev] = value;
    return gpuSuccess;
}

// Why the last launch_cols_cluster call launched nothing (diagnostics for the tune harness; not thread-safe).
inline const char *&cols_cluster_refusal() {
    static const char *why = "";
    return why;
}

// The end of both columns launchers: opts `kernel` in to clusters of more than kMaxCluster blocks and to
// `dyn` bytes of dynamic shared memory above 48 KB on the current device (allowed16 / allowed: the caller's
// per-kernel records, see func_attribute_at_least), then launches `blocks` blocks in clusters of nb. False
// (no error pending, cols_cluster_refusal() says why) where an attribute or the launch is refused.
template <typename... P, typename... A>
bool launch_cols_clusters(void (*kernel)(P...), int (&allowed16)[kAttrDevices], int (&allowed)[kAttrDevices],
                          int64_t blocks, int threads, int64_t nb, size_t dyn, gpuStream_t stream, A &&...args) {
    const char *&why = cols_cluster_refusal();
    gpuError_t err = gpuSuccess;
    if (nb > kMaxCluster)
        err = func_attribute_at_least((const void *)kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1,
                                      allowed16);
    if (err == gpuSuccess && dyn > 48 * 1024)
        err = func_attribute_at_least((const void *)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn,
                                      allowed);
    if (err == gpuSuccess) err = launch_clusters(kernel, blocks, threads, nb, dyn, stream, std::forward<A>(args)...);
    why = err == gpuSuccess ? "" : gpuGetErrorString(err);
    return err == gpuSuccess;
}

// Launches one configuration: segments of seg_target rows (fewer blocks where L is shorter), clusters of
// up to kMaxCluster blocks, at most max_blocks_per_sm resident blocks an SM (dynamic shared memory as the
// limiter; 0: no cap), meant to keep the segments in flight in L2 (they mostly are not: see the header);
// stash: each thread's first rows in the dynamic shared memory that max_blocks_per_sm blocks an SM leave
// (ColsClusterArgs::stash; none without a cap or where the SM's shared memory is unknown). False (nothing
// launched, no error pending) where the device, the build or the shape does not allow it: then the
// caller's fallback runs.
// max_cluster: 8 (portable) or 16 (a non-portable size, allowed on the kernel here; sm_90 has it).
template <typename T, int kLanes, int kThreads, int kUnroll, int kMode = kColsL2>
bool launch_cols_cluster(gpuStream_t stream, T *out, const T *x, ColsClusterArgs a, int64_t outer,
                         int64_t seg_target, int max_blocks_per_sm, int max_cluster = kMaxCluster,
                         bool stash = false) {
    constexpr int V = Pack<T>::N;
    constexpr int64_t RL = kThreads / kLanes;
    const char *&why = cols_cluster_refusal();
    why = "shape or device";
    if (!cluster_launch_supported() || a.inner % V != 0 || a.L < 1 || seg_target < 1) return false;
    int64_t nb = (a.L + seg_target - 1) / seg_target;
    if (nb > max_cluster || max_cluster > 16) return false;
    a.seg = (a.L + nb - 1) / nb;
    a.seg = (a.seg + RL - 1) / RL * RL;
    nb = (a.L + a.seg - 1) / a.seg;
    a.strips = (a.inner + (int64_t)kLanes * V - 1) / ((int64_t)kLanes * V);
    const int64_t clusters = outer * a.strips;
    if (clusters > 0x7fffffff / nb) return false;
    auto kernel = softmax_cols_cluster_kernel<T, kLanes, kThreads, kUnroll, kMode>;
    static int built = 0;
    why = "not built for sm_90";
    if (!kernel_built_for_sm90((const void *)kernel, built)) return false;
    const DeviceLimits lim = device_limits();
    size_t dyn = 0;
    a.stash = 0;
    const size_t static_smem = sizeof(float) * (2 * (kThreads / kWarp) + 4) * kLanes * V;
    if (max_blocks_per_sm > 0 && lim.smem_per_sm > 0) {
        dyn = smem_cap_request(lim.smem_per_sm, max_blocks_per_sm, static_smem);
        if (stash) {
            // all that max_blocks_per_sm blocks may have (capped at the per-block limit), a whole number of
            // stash rows of kThreads 16-byte packs, at most the rows a thread visits
            size_t most = (size_t)lim.smem_per_sm / (size_t)max_blocks_per_sm;
            most = most > static_smem + 1024 ? most - static_smem - 1024 : 0;
            // sm_90's per-block opt-in limit (227 KB): binds only where an SM holds more than one block may
            if (most > 227 * 1024 - static_smem) most = 227 * 1024 - static_smem;
            const int64_t K = (a.seg + RL - 1) / RL;
            const int64_t rows = (int64_t)(most / (16 * (size_t)kThreads));
            a.stash = rows < K ? rows : K;
            const size_t need = (size_t)a.stash * 16 * kThreads;
            if (need > dyn) dyn = need;
        }
    }
    static int allowed16[kAttrDevices], allowed[kAttrDevices];
    return launch_cols_clusters(kernel, allowed16, allowed, clusters * nb, kThreads, nb, dyn, stream, out, x, a);
}

// The blocks softmax_cols_onchip_kernel puts on an axis of L rows (each holds at most RL * (kRegRows + kSmemRows)).
template <int kLanes, int kThreads, int kRegRows, int kSmemRows> constexpr int64_t cols_onchip_blocks(int64_t L) {
    constexpr int64_t kCap = (int64_t)(kThreads / kLanes) * (kRegRows + kSmemRows);
    return (L + kCap - 1) / kCap;
}

// Launches softmax_cols_onchip_kernel: segments of at most RL * (kRegRows + kSmemRows) rows, as few blocks
// a cluster as cover the axis (at most 16: sizes above 8 are opted in). False (nothing launched, no error
// pending) where the device, the build or the shape does not allow it, or the cluster does not fit.
template <typename T, int kLanes, int kThreads, int kRegRows, int kSmemRows, bool kHint = false,
          bool kStoreExp = true, int kMerge = 0, int kX = kXCluster>
bool launch_cols_onchip(gpuStream_t stream, T *out, const T *x, ColsClusterArgs a, int64_t outer,
                        ColsProbe probe = {}) {
    static_assert(kX == kXCluster || kX == kXPush, "a cluster exchange");
    constexpr int V = Pack<T>::N;
    constexpr int64_t RL = kThreads / kLanes;
    const char *&why = cols_cluster_refusal();
    why = "shape or device";
    if (!cluster_launch_supported() || a.inner % V != 0 || a.L < 1) return false;
    const int64_t nb = cols_onchip_blocks<kLanes, kThreads, kRegRows, kSmemRows>(a.L);
    if (nb > 16) return false;
    a.seg = (a.L + nb - 1) / nb;
    a.seg = (a.seg + RL - 1) / RL * RL;  // <= a block's rows, a multiple of RL
    a.strips = (a.inner + (int64_t)kLanes * V - 1) / ((int64_t)kLanes * V);
    a.stash = 0;
    const int64_t clusters = outer * a.strips;
    if (clusters > 0x7fffffff / nb) return false;
    auto kernel = softmax_cols_onchip_kernel<T, kLanes, kThreads, kRegRows, kSmemRows, kHint, kStoreExp, kX, kMerge>;
    static int built = 0;
    why = "not built for sm_90";
    if (!kernel_built_for_sm90((const void *)kernel, built)) return false;
    static int allowed16[kAttrDevices], allowed[kAttrDevices];
    return launch_cols_clusters(kernel, allowed16, allowed, clusters * nb, kThreads, nb,
                                (size_t)kSmemRows * kThreads * 16, stream, out, x, a, probe);
}

// ---- strips without clusters ---------------------------------------------------------------------------------
// A cluster of 16 blocks needs 16 free slots in one GPC at once: on the H200 ~209 of 264 slots stay
// resident, and that residency costs clusters of 16 ~10 points of cudaMemcpy against clusters of one.
// launch_cols_group launches the same on-chip kernel without clusters (kXGroup): every slot refills as soon
// as a block exits, and a strip's nb blocks exchange their (max, sum) pairs through the workspace.
// Waiting is safe by construction: a block's ticket (an atomic taken at its start) fixes its strip and
// rank, so every ticket below the highest taken belongs to a running or finished block; the blocks of a
// fully ticketed chunk all reach the exchange and exit; only the chunk being ticketed can wait on blocks not
// yet started, at most chunk x nb - 1 of them, and the launcher keeps chunk x nb within half the device's
// resident blocks, so a slot always frees for the next ticket.
// The workspace, filled with ones by the launch (stream-ordered, before the kernel): the ticket counter (256
// bytes), then the slots, a 64-bit (max, sum) word a block and column.
constexpr size_t kGroupTicketBytes = 256;
inline size_t cols_group_workspace(int64_t groups, int64_t nb, int64_t cols) {
    return kGroupTicketBytes + (size_t)groups * (size_t)nb * (size_t)cols * sizeof(unsigned long long);
}
// Blocks a strip (at most kMaxNb: 16 in the library, 32 in one tune variant), the strips, and the workspace
// launch_cols_group needs for them (0: the shape does not qualify); the same arithmetic as the launcher, for
// descriptor creation.
template <typename T, int kLanes, int kThreads, int kRegRows, int kSmemRows, int kMaxNb = 16>
size_t cols_group_workspace_for(int64_t L, int64_t inner, int64_t outer) {
    constexpr int V = Pack<T>::N, W = kLanes * V;
    constexpr int64_t RL = kThreads / kLanes, kCap = RL * (kRegRows + kSmemRows);
    if (inner % V != 0 || L < 1 || inner < 1 || outer < 1) return 0;
    const int64_t nb = (L + kCap - 1) / kCap, strips = (inner + W - 1) / W;
    if (nb > kMaxNb || outer > 0x7fffffff / strips || outer * strips > 0x7fffffff / nb) return 0;
    return cols_group_workspace(outer * strips, nb, W);
}

// Launches softmax_cols_onchip_kernel<..., kXGroup>: segments of at most RL * (kRegRows + kSmemRows) rows,
// nb = ceil(L / that) <= kMaxNb blocks a strip, tickets in chunks of `chunk` strips (fewer where the device holds
// too few blocks). False (nothing launched, no error pending; cols_cluster_refusal() says why) where the
// build, the shape, the workspace or the device's residency does not allow it.
template <typename T, int kLanes, int kThreads, int kRegRows, int kSmemRows, bool kStoreExp = true, int kMerge = 0,
          int kMaxNb = 16>
bool launch_cols_group(gpuStream_t stream, T *out, const T *x, ColsClusterArgs a, int64_t outer, void *ws,
                       size_t ws_size, int64_t chunk = 1, ColsProbe probe = {}) {
    constexpr int V = Pack<T>::N, W = kLanes * V;
    constexpr int64_t RL = kThreads / kLanes, kCap = RL * (kRegRows + kSmemRows);
    const char *&why = cols_cluster_refusal();
    why = "shape";
    const size_t need = cols_group_workspace_for<T, kLanes, kThreads, kRegRows, kSmemRows, kMaxNb>(a.L, a.inner, outer);
    if (need == 0 || chunk < 1) return false;
    why = "workspace too small";
    if (ws == nullptr || ws_size < need) return false;
    const int64_t nb = (a.L + kCap - 1) / kCap;  // <= kMaxNb: cols_group_workspace_for checked
    a.seg = (a.L + nb - 1) / nb;
    a.seg = (a.seg + RL - 1) / RL * RL;  // <= kCap: kCap is a multiple of RL
    a.strips = (a.inner + W - 1) / W;
    a.stash = 0;
    a.groups = outer * a.strips, a.nb = nb;
    auto kernel = softmax_cols_onchip_kernel<T, kLanes, kThreads, kRegRows, kSmemRows, false, kStoreExp, kXGroup,
                                             kMerge, kMaxNb>;
    static int built = 0;
    why = "not built for sm_90";
    if (!kernel_built_for_sm90((const void *)kernel, built)) return false;
    const size_t dyn = (size_t)kSmemRows * kThreads * 16;
    static int allowed[kAttrDevices];
    gpuError_t err = gpuSuccess;
    if (dyn > 48 * 1024)
        err = func_attribute_at_least((const void *)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn, allowed);
    int per_sm = 0;
    if (err == gpuSuccess) err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, dyn);
    if (err != gpuSuccess) {
        (void)gpuGetLastError();
        why = gpuGetErrorString(err);
        return false;
    }
    const int64_t resident = (int64_t)per_sm * device_limits().sm_count;
    why = "too few resident blocks";
    if (2 * nb > resident) return false;
    while (chunk > 1 && 2 * chunk * nb > resident) chunk /= 2;
    a.chunk = chunk;
    a.ticket = static_cast<unsigned *>(ws);
    a.slots = reinterpret_cast<unsigned long long *>(static_cast<char *>(ws) + kGroupTicketBytes);
    err = cudaMemsetAsync(ws, 0xff, need, stream);
    if (err == gpuSuccess) {
        kernel<<<(unsigned)(a.groups * nb), kThreads, dyn, stream>>>(out, x, a, probe);
        err = gpuGetLastError();
    }
    why = err == gpuSuccess ? "" : gpuGetErrorString(err);
    return err == gpuSuccess;
}

}  // namespace oprt_kernels

#endif  // OPRT_COLS_CLUSTERS

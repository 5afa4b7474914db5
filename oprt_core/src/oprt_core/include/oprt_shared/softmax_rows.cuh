// softmax_rows.cuh: softmax over contiguous, 16-byte aligned rows of a uniform row stride (the common
// case: the last axis of a dense tensor), with the row shape a compile-time configuration.
//
// softmax.cu picks the configuration (fast_rows_config) and falls back to its generic kernels for
// everything else; the tune harness (scripts/tune/) includes this header to time other configurations of the same
// kernel. On the H200 the generic group kernel spent ~42 registers on
// index bookkeeping (an Indexer, a row loop, per-pack bounds), which capped occupancy where these rows
// need it most; this kernel has one row per group, no loop and no division, and reaches 96-100% of
// cudaMemcpy on the tuned shapes.
// In place (out == x): each element is read once, through the read-only path, by the thread that later writes it,
// and never after a store (the shifted rows' shared first and last chunks: each row reads and writes only its own
// elements); a second pass over x would break in-place calls.
#pragma once

#include <type_traits>
#include <utility>

#include "common.cuh"

#if OPRT_HAS_CLUSTERS
#include <cooperative_groups.h>
#endif

namespace oprt_kernels {

// ---- thread-block clusters (OPRT_HAS_CLUSTERS, sm_90 and newer; the callers launch clusters only there) ----------
// Without either, one block a cluster, and the calls that only a cluster launch reaches trap.
#define OPRT_CLUSTERS_ON_DEVICE (OPRT_HAS_CLUSTERS && OPRT_CUDA_ARCH >= 900)
__device__ __forceinline__ int cluster_blocks() {
#if OPRT_CLUSTERS_ON_DEVICE
    return (int)cooperative_groups::this_cluster().num_blocks();
#else
    return 1;
#endif
}
__device__ __forceinline__ int cluster_rank() {
#if OPRT_CLUSTERS_ON_DEVICE
    return (int)cooperative_groups::this_cluster().block_rank();
#else
    return 0;
#endif
}
__device__ __forceinline__ void cluster_sync() {
#if OPRT_CLUSTERS_ON_DEVICE
    cooperative_groups::this_cluster().sync();
#else
    oprt_vendor::trap();
#endif
}
// exp(d) of the fast rows and columns kernels: 16-bit outputs take ex2.approx.ftz of d * log2(e) (an FMUL
// and one MUFU op instead of expf's ~8 instructions: the 16-bit axis-0 kernel was instruction-bound under ncu).
// Error added: the FMUL's rounding and that of log2(e) as an f32, ~1.2 |d| * 2^-24 relative together (the
// size of the (x - max) rounding the budget already carries; only d > ln(atol), about -87, is checked), and
// ex2.approx's 2^-22: ~7e-6 at most, far inside 2 * eps(f16 / bf16) (2e-3 / 1.6e-2). A result below f32's
// smallest normal flushes to 0: that output is below the f32-tiny atol. f32 keeps expf. Without PTX: exp2f of the
// same product.
template <typename T> __device__ __forceinline__ float exp_t(float d) {
    if constexpr (sizeof(T) == 2) {
#if OPRT_PTX_AT_LEAST(0)
        float y;
        asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(d * 1.4426950408889634f));
        return y;
#else
        return exp2f(d * 1.4426950408889634f);
#endif
    } else {
        return expf(d);
    }
}

// Merges the (max, sum of exp(x - max)) of two disjoint parts; an empty part (or one of only -inf) is
// (-inf, 0) and adds nothing. A NaN sum propagates, also from a part whose max is -inf (fmaxf skips NaN,
// so a part of only NaN and -inf is (-inf, NaN)): its NaN must survive a merge with empty parts.
__device__ __forceinline__ void maxsum_merge(float &m, float &s, float m2, float s2) {
    const float mn = fmaxf(m, m2);
    if (mn == -INFINITY) {  // both maxima -inf: each sum is 0 or NaN
        s += s2;
        return;
    }
    s = (s == 0.f ? 0.f : s * expf(m - mn)) + (s2 == 0.f ? 0.f : s2 * expf(m2 - mn));
    m = mn;
}

// The (max, sum) of every block of the cluster merged (maxsum_merge), returned to every thread: thread 0
// publishes its block's pair in `slot[0..1]` (shared memory), then every thread reads all blocks' slots
// through distributed shared memory: one cluster barrier. Slots must stay alive until every block has
// read them (a cluster_sync() before any block exits).
__device__ __forceinline__ void cluster_combine_maxsum(float &m, float &s, float *slot) {
#if OPRT_CLUSTERS_ON_DEVICE
    namespace cg = cooperative_groups;
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) slot[0] = m, slot[1] = s;
    cluster.sync();
    // (reading the blocks' pairs one per lane and merging them by shuffles, as the columns kernels do, made
    // 65536-wide 16-bit rows, clusters of 2, ~3 points slower in oprt-bench; f32 (4) unchanged)
    const int nb = (int)cluster.num_blocks();
    m = -INFINITY, s = 0.f;
    for (int q = 0; q < nb; ++q) {
        const float *r = cluster.map_shared_rank(slot, q);
        maxsum_merge(m, s, r[0], r[1]);
    }
#else
    (void)m, (void)s, (void)slot;
    oprt_vendor::trap();
#endif
}

// ---- mbarriers and split cluster barriers (inline PTX, sm_90; also softmax_cols.cuh's) ------------------------------
__device__ __forceinline__ unsigned smem_u32(const void *p) { return (unsigned)__cvta_generic_to_shared(p); }
// Arms the mbarrier's current phase: one arrival, expecting `bytes` of complete_tx.
__device__ __forceinline__ void mbar_arm(unsigned long long *bar, unsigned bytes) {
#if OPRT_PTX_AT_LEAST(900)
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
#else
    (void)bar, (void)bytes;
#endif
}
// One thread: the mbarrier initialised (one arrival a phase) and its first phase armed for `bytes`.
__device__ __forceinline__ void mbar_init_armed(unsigned long long *bar, unsigned bytes) {
#if OPRT_PTX_AT_LEAST(900)
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_u32(bar)) : "memory");
    mbar_arm(bar, bytes);
#else
    (void)bar, (void)bytes;
#endif
}
// After mbar_init_armed: the initialisations visible to the cluster (then a cluster barrier before any remote use).
__device__ __forceinline__ void mbar_init_fence() {
#if OPRT_PTX_AT_LEAST(900)
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
// Waits (acquire, cluster scope) until the mbarrier's phase of this parity has completed.
__device__ __forceinline__ void mbar_wait(unsigned long long *bar, unsigned parity) {
#if OPRT_PTX_AT_LEAST(900)
    unsigned done = 0;
    while (!done)
        asm volatile(
            "{\n .reg .pred p;\n mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
            " selp.u32 %0, 1, 0, p;\n}"
            : "=r"(done)
            : "r"(smem_u32(bar)), "r"(parity)
            : "memory");
#else
    (void)bar, (void)parity;
#endif
}
// The two halves of a cluster barrier: arrive (release, or relaxed where nothing needs publishing), then wait
// (acquire).
__device__ __forceinline__ void cluster_arrive() {
#if OPRT_PTX_AT_LEAST(900)
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void cluster_arrive_relaxed() {
#if OPRT_PTX_AT_LEAST(900)
    asm volatile("barrier.cluster.arrive.relaxed.aligned;" ::: "memory");
#endif
}
__device__ __forceinline__ void cluster_wait() {
#if OPRT_PTX_AT_LEAST(900)
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
#endif
}

// The cluster's (max, sum) exchange by pushes instead of a cluster barrier (the persistent rows kernel; the fast
// cluster rows under OPRT_NVIDIA_SOFTMAX_PUSH=1, with one set): a cluster barrier's arrive has release semantics, and
// under the kernel's own streaming its wait returned microseconds later (the timelines of the columns kernels,
// softmax_cols.cuh's kXPush); in the persistent kernel a barrier a row would also wait for the next row's loads. Each
// block keeps two slot sets, one a row in turn (row k of the cluster: set k % 2), each with an mbarrier that expects nb
// pushes of 8 bytes: at the exchange thread q < nb writes the block's (max, sum) into slot [rank] of block q's set by
// st.async ... mbarrier::complete_tx (its completion releases the pair at cluster scope), then every thread waits on
// its own set's mbarrier (acquire, cluster scope; the set's u-th use completes phase u, parity u & 1) and folds the nb
// pairs from its own shared memory; thread 0 then arms the set for its next use. A set is pushed into again only for
// the row two later, which a block reaches only after every block of the cluster has pushed the row between, each after
// the block barrier that follows its threads' reads of the set: no pair is overwritten before it is read. Clusters of
// one block exchange nothing.
struct alignas(16) PersistPush {
    float2 pair[2][16];      // [set][rank]: rank's (max, sum)
    unsigned long long bar[2];
};

// Both slot sets' mbarriers initialised and armed for nb pushes of 8 bytes (thread 0), then this block's relaxed
// arrive on the cluster barrier that the first push waits on.
__device__ __forceinline__ void persist_init(PersistPush &x, unsigned bytes) {
    if (threadIdx.x == 0) {
        mbar_init_armed(&x.bar[0], bytes);
        mbar_init_armed(&x.bar[1], bytes);
        mbar_init_fence();
    }
    cluster_arrive_relaxed();
}
// v into slot `dst` of rank's shared memory by st.async, completing on rank's mbarrier at bar's offset.
__device__ __forceinline__ void persist_push(float2 *dst, unsigned long long *bar, int rank, float2 v) {
#if OPRT_PTX_AT_LEAST(900)
    unsigned rd, rb;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rd) : "r"(smem_u32(dst)), "r"(rank));
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(rb) : "r"(smem_u32(bar)), "r"(rank));
    asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];" ::"r"(rd),
                 "f"(v.x), "f"(v.y), "r"(rb)
                 : "memory");
#else
    (void)dst, (void)bar, (void)rank, (void)v;
    oprt_vendor::trap();
#endif
}

// The scale of this block's exps from the cluster's pairs (k: the cluster's row count so far, whose parity names the
// slot set): push, wait, fold, re-arm. nb == 1: the block's own pair.
__device__ __forceinline__ float persist_exchange(PersistPush &x, float2 own, int nb, int rank, int64_t k) {
    const int set = (int)(k & 1);
    float gm = own.x, gs = own.y;
    if (nb > 1) {
        if ((int)threadIdx.x < nb) persist_push(&x.pair[set][rank], &x.bar[set], (int)threadIdx.x, own);
        mbar_wait(&x.bar[set], (unsigned)((k >> 1) & 1));
        gm = -INFINITY, gs = 0.f;
        for (int q0 = 0; q0 < nb; q0 += 4) {  // four pairs' loads in flight before their folds
            float2 v[4];
#pragma unroll
            for (int j = 0; j < 4; ++j) v[j] = q0 + j < nb ? x.pair[set][q0 + j] : make_float2(-INFINITY, 0.f);
#pragma unroll
            for (int j = 0; j < 4; ++j) maxsum_merge(gm, gs, v[j].x, v[j].y);
        }
        if (threadIdx.x == 0) mbar_arm(&x.bar[set], (unsigned)nb * 8u);  // the set's next use (row k + 2)
    }
    return gm == -INFINITY ? __int_as_float(0x7fffffff) : expf(own.x - gm) / gs;
}

// Row r of x starts at x + r * xrs, of out at out + r * ors (elements; each 16-byte aligned).
struct FastRowsArgs {
    int64_t rows, L, xrs, ors;
};

// Max (kMax) or sum over the G threads of a row: shuffles within a warp for G <= kWarp (groups of G
// consecutive lanes), through shared memory for a block row (G == blockDim.x, a multiple of kWarp).
template <int G, bool kMax> __device__ __forceinline__ float fast_row_reduce(float v, float *smem) {
    constexpr int kLanes = G < kWarp ? G : kWarp;
    using Op = std::conditional_t<kMax, MaxOp, SumOp>;
    v = oprt_warp::group_allreduce<kLanes>(DeviceWarp{}, v, Op{});
    if constexpr (G > kWarp) {
        if (threadIdx.x % kWarp == 0) smem[threadIdx.x / kWarp] = v;
        __syncthreads();
        v = smem[0];
#pragma unroll
        for (int k = 1; k < G / kWarp; ++k) v = kMax ? fmaxf(v, smem[k]) : v + smem[k];
        __syncthreads();
    }
    return v;
}

// The V floats of a 16-byte pack of T, converted word by word with plain integer and conversion
// instructions (a bf16 is a float's high half).
template <typename T, int V> __device__ __forceinline__ void unpack_floats(const uint4 &u, float (&f)[V]) {
    static_assert(V * sizeof(T) == 16, "a 16-byte pack");
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        if constexpr (sizeof(T) == 4) {
            f[k] = __uint_as_float(w[k]);
        } else if constexpr (std::is_same<T, bf16_t>::value) {
            f[2 * k] = __uint_as_float(w[k] << 16);
            f[2 * k + 1] = __uint_as_float(w[k] & 0xffff0000u);
        } else {
            const float2 t = oprt_vendor::half2_bits_to_float2(w[k]);
            f[2 * k] = t.x;
            f[2 * k + 1] = t.y;
        }
    }
}

// The 16-byte pack of T holding V floats (round to nearest even), 16-bit types converted two at a time
// (one cvt.rn.{f16,bf16}x2.f32 per pair; the PTX of one conversion per element kept them apart).
template <typename T, int V> __device__ __forceinline__ uint4 pack_floats(const float (&f)[V]) {
    static_assert(V * sizeof(T) == 16, "a 16-byte pack");
    uint32_t w[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        if constexpr (sizeof(T) == 4) {
            w[k] = __float_as_uint(f[k]);
        } else if constexpr (std::is_same<T, bf16_t>::value) {
            w[k] = oprt_vendor::floats_to_bf162_bits(f[2 * k], f[2 * k + 1]);
        } else {
            w[k] = oprt_vendor::floats_to_half2_bits(f[2 * k], f[2 * k + 1]);
        }
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// The same bits, opaque to the compiler: converting them again cannot reuse the floats of an earlier
// conversion. Without it the kRaw kernels kept every converted value live from the max to the scaling
// (bf16 256 x 8 packs: 70-170 bytes of spills at the 64-register cap); with it a pack costs 4 registers. An empty
// asm statement, kept with the PTX capability (without it: the bits as they are).
__device__ __forceinline__ uint4 opaque(uint4 u) {
#if OPRT_HAS_PTX
    asm volatile("" : "+r"(u.x), "+r"(u.y), "+r"(u.z), "+r"(u.w));
#endif
    return u;
}

// A pack of -inf; the elements [lo, hi) of the pack at p loaded one by one, the others -inf: a shifted row's first
// and last packs read nothing outside the row (no bytes past a tensor's end, none of a neighbouring row that an
// in-place call writes), and what they do not hold never reaches the max, the sum or the stores.
template <typename T> __device__ __forceinline__ uint4 ninf_pack() {
    const uint32_t w = sizeof(T) == 4 ? 0xff800000u : std::is_same<T, bf16_t>::value ? 0xff80ff80u : 0xfc00fc00u;
    return make_uint4(w, w, w, w);
}
template <typename T> __device__ __forceinline__ uint4 load_part(const T *p, int lo, int hi) {
    constexpr int V = Pack<T>::N;
    const uint4 ninf = ninf_pack<T>();
    uint32_t w[4] = {ninf.x, ninf.y, ninf.z, ninf.w};
#pragma unroll
    for (int e = 0; e < V; ++e) {
        if (e < lo || e >= hi) continue;
        if constexpr (sizeof(T) == 4) {
            w[e] = reinterpret_cast<const uint32_t *>(p)[e];
        } else {
            const uint32_t b = reinterpret_cast<const uint16_t *>(p)[e];
            const int sh = (e % 2) * 16;
            w[e / 2] = (w[e / 2] & ~(0xffffu << sh)) | (b << sh);
        }
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// G threads per row, P packs of V elements per thread (a row of up to G * P * V elements, all of it in
// registers between the max, the sum and the scaling: one read, one write), kBlock / G rows per block,
// one row per group. kFull: every row is exactly G * P * V long (no bounds checks). kRaw (for 16-bit
// rows too long for their P * V floats to fit) keeps 16-byte packs of T instead (4 registers per pack):
//   kRaw == 1: the loaded packs, exp computed twice (in the sum and in the scaling);
//   kRaw == kRawExp (2): the loaded packs until the sum, which overwrites them with exp(x - max) rounded
//   to T; the scaling multiplies those: one exp per element. The exp unit is the limit of 16-bit rows
//   (2 exps an element at 8 elements a clock an SM need all 16 MUFU.EX2 a clock); the extra rounding
//   stays inside the budget (half an ulp of T, and in f16 an exp that falls below
//   the normal range loses at most 3e-8 absolutely before a scale <= 1, under the f16 atol 6e-8).
// Groups past the last row (G < kWarp only: they share a warp with live rows) load nothing, take part
// in the shuffles and store nothing.
// kShift: rows of any length and 16-byte phase (odd widths, odd row strides): each row is laid out as the run of
// whole 16-byte chunks that holds it, starting d = (row start mod 16) / sizeof(T) elements before it; the first and
// last chunk, which the row may share with its neighbours, are loaded and stored element by element (load_part: the
// elements outside the row are -inf, never read), every other one as a pack. out's rows must have the same phase as
// x's (the caller checks it); G * P * V must hold L + V - 1 elements.
// kCluster (sm_90 and newer, G == kBlock): a cluster of blocks per row, block q of the cluster holding
// elements [q * G * P * V, (q + 1) * G * P * V) of it; the blocks' maxima and sums are combined through
// distributed shared memory in one exchange of (max, sum) pairs (cluster_combine_maxsum: each block's sum
// is taken against its own max and rescaled), so rows of up to 8 blocks' registers are still read once.
// kPush (with kCluster): the pairs pushed into each other's shared memory instead (persist_exchange, one slot set;
// no cluster barrier at the exchange or before the block exits).
constexpr int kRawExp = 2;
template <typename T, int G, int P, int kBlock, bool kFull, int kRaw, bool kCluster = false, bool kShift = false,
          bool kPush = false>
__global__ void __launch_bounds__(kBlock, (kBlock <= 1024 ? 1024 / kBlock : 1))
softmax_fast_rows_kernel(T *__restrict__ out, const T *__restrict__ x, FastRowsArgs a) {
    static_assert(G <= kWarp ? (G & (G - 1)) == 0 : G == kBlock && G % kWarp == 0, "G: lanes of a warp or the block");
    static_assert(!kCluster || G == kBlock, "a cluster row is made of block rows");
    static_assert(!kPush || kCluster, "pushes exchange between a cluster's blocks");
    constexpr int V = Pack<T>::N;
    __shared__ float smem[G > kWarp ? G / kWarp : 1];
    __shared__ float stat[kCluster ? 2 : 1];
    __shared__ PersistPush push;  // kPush only (unused otherwise, and dropped)
    const int gl = threadIdx.x % G;
    int64_t row, seg = 0;  // seg: the first element of the row this block holds
    const int nb = kCluster ? cluster_blocks() : 1;
    if constexpr (kCluster) {
        row = (int64_t)blockIdx.x / nb;
        seg = (int64_t)cluster_rank() * G * P * V;
        if constexpr (kPush) {
            // every block's mbarriers initialised before any push (the wait after the loads)
            if (nb > 1) persist_init(push, (unsigned)nb * 8u);
        }
    } else {
        row = (int64_t)blockIdx.x * (kBlock / G) + threadIdx.x / G;
    }
    static_assert(!(kShift && kFull), "a shifted row has partial packs");
    const bool live = row < a.rows;
    // a whole warp (or block) past the end: nothing to share with (never a cluster's block: the grid is rows x nb, and
    // every block of a cluster takes part in its barriers or pushes)
    if (!kCluster && G >= kWarp && !live) return;
    const T *xrow = x + (live ? row : 0) * a.xrs;
    // kShift: the row's elements before its first 16-byte boundary (0..V-1); the row is read from that many earlier
    const int64_t d = kShift ? (int64_t)((reinterpret_cast<uintptr_t>(xrow) % 16) / sizeof(T)) : 0;
    // this thread's first element of the row; pack p is p * G * V elements further (a constant offset)
    const T *px = xrow - d + seg + gl * V;
    T *po = out + row * a.ors - d + seg + gl * V;
    const int64_t rem = a.L + d - seg - (int64_t)gl * V;  // elements of the (shifted) row from px on
    // packs of this thread that hold some of the row: ok(p) is one integer compare (a 64-bit bound kept live per pack
    // made the partial 16-bit 512 x 8 kernels spill ~200 bytes at their 64-register cap)
    const int64_t np_row = rem <= 0 ? 0 : (rem + G * V - 1) / (G * V);
    const int nvalid = !live ? 0 : kFull || np_row >= P ? P : (int)np_row;
    auto ok = [&](int p) { return kFull ? live : p < nvalid; };
    // kShift: the elements [lo, hi) of pack p are the row's (lo > 0 only in the row's first pack, hi < V in its last)
    // (as ints: the row's first element is in pack 0 of thread 0 of the first block, its last in pack nvalid - 1)
    const int head = kShift && seg == 0 && gl == 0 ? (int)d : 0;
    const int tail = !kShift || nvalid == 0 || rem - (int64_t)(nvalid - 1) * G * V >= V
                         ? V
                         : (int)(rem - (int64_t)(nvalid - 1) * G * V);
    auto lo = [&](int p) { return p == 0 ? head : 0; };
    auto hi = [&](int p) { return p == nvalid - 1 ? tail : V; };

    uint4 raw[kRaw ? P : 1];
    float v[kRaw ? 1 : P][V];
    float m = -INFINITY;
#pragma unroll
    for (int p = 0; p < P; ++p) {
        // a pack past the row holds -inf: it adds 0 to the sum with no test in the later loops (kRaw: a `continue`
        // there made the partial 16-bit 512 x 8 kernels spill ~200 bytes at their 64-register cap)
        uint4 q;
        if (kShift && ok(p) && (lo(p) > 0 || hi(p) < V))
            q = load_part<T>(px + p * G * V, lo(p), hi(p));  // the row's first or last pack: its own elements only
        else
            q = ok(p) ? oprt_vendor::ldg(reinterpret_cast<const uint4 *>(px + p * G * V)) : ninf_pack<T>();
        if constexpr (kRaw) raw[p] = q;
        float f[V];
        unpack_floats<T>(q, f);
#pragma unroll
        for (int e = 0; e < V; ++e) {
            if constexpr (!kRaw) v[p][e] = f[e];
            m = fmaxf(m, f[e]);
        }
    }
    if constexpr (kPush)
        if (nb > 1) cluster_wait();
    m = fast_row_reduce<G, true>(m, smem);
    // kCluster: m is this block's max; a block of only -inf contributes (-inf, 0): it sums exp(x - 0) = 0
    // and scales by 0 (its outputs are 0, or NaN where the whole row is -inf)
    const float mb = m;  // kCluster: this block's max, for the scale
    if (kCluster && m == -INFINITY) m = 0.f;
    float s = 0.f;
#pragma unroll
    for (int p = 0; p < P; ++p) {
        if (!kRaw && !ok(p)) continue;
        float f[V];
        if constexpr (kRaw) unpack_floats<T>(opaque(raw[p]), f);
#pragma unroll
        for (int e = 0; e < V; ++e) {
            const float ex = exp_t<T>((kRaw ? f[e] : v[p][e]) - m);
            if constexpr (!kRaw) v[p][e] = ex;
            if constexpr (kRaw == kRawExp) f[e] = ex;
            s += ex;
        }
        if constexpr (kRaw == kRawExp) raw[p] = pack_floats<T>(f);
    }
    s = fast_row_reduce<G, false>(s, smem);
    // scale: what exp(x - m) is multiplied by (kCluster: this block's max against the row's, over the
    // row's sum; a row of only -inf gives NaN like exp(-inf - -inf) does)
    float scale;
    if constexpr (kPush) {
        scale = persist_exchange(push, make_float2(mb, s), nb, cluster_rank(), 0);
    } else if constexpr (kCluster) {
        float gm = mb, gs = s;
        cluster_combine_maxsum(gm, gs, stat);
        scale = gm == -INFINITY ? __int_as_float(0x7fffffff) : expf(mb - gm) / gs;
    } else {
        scale = 1.f / s;
    }
#pragma unroll
    for (int p = 0; p < P; ++p) {
        if (!ok(p)) continue;
        float f[V];
        if constexpr (kRaw) unpack_floats<T>(opaque(raw[p]), f);
        float o[V];
#pragma unroll
        for (int e = 0; e < V; ++e) o[e] = (kRaw == kRawExp ? f[e] : kRaw ? exp_t<T>(f[e] - m) : v[p][e]) * scale;
        const uint4 u = pack_floats<T>(o);
        Pack<T> q;
        memcpy(&q, &u, 16);
        if (kShift && (lo(p) > 0 || hi(p) < V)) {  // the row's first or last pack: its own elements only
            const int l = lo(p), h = hi(p);
#pragma unroll
            for (int e = 0; e < V; ++e)
                if (e >= l && e < h) po[p * G * V + e] = q.v[e];
        } else {
            store_pack(po + p * G * V, q);
        }
    }
    // the stat slots stay alive until every block has read them (kPush: no block reads another's shared memory)
    if constexpr (kCluster && !kPush) cluster_sync();
}

// Launches one configuration; the grid has a block per kBlock / G rows (the caller checks it fits).
template <typename T, int G, int P, int kBlock, int kRaw = 0, bool kShift = false>
void launch_fast_rows(gpuStream_t stream, T *out, const T *x, const FastRowsArgs &a) {
    constexpr int64_t kRowsPerBlock = kBlock / G;
    const unsigned grid = (unsigned)((a.rows + kRowsPerBlock - 1) / kRowsPerBlock);
    if constexpr (kShift)
        softmax_fast_rows_kernel<T, G, P, kBlock, false, kRaw, false, true><<<grid, kBlock, 0, stream>>>(out, x, a);
    else if (a.L == (int64_t)G * P * Pack<T>::N)
        softmax_fast_rows_kernel<T, G, P, kBlock, true, kRaw><<<grid, kBlock, 0, stream>>>(out, x, a);
    else
        softmax_fast_rows_kernel<T, G, P, kBlock, false, kRaw><<<grid, kBlock, 0, stream>>>(out, x, a);
}

#if OPRT_HAS_CLUSTERS
// Whether `kernel`'s loaded code was compiled for sm_90 or newer: a library built only for older
// architectures (OPRT_CUDA_ARCHS=80) runs on a Hopper GPU through JIT-compiled compute_80 PTX, where the
// cluster parts are __trap(). `state` caches the answer (0 unknown, 1 yes, 2 no; a benign race: every
// writer writes the same value; a process mixing architectures takes the first device's answer).
inline bool kernel_built_for_sm90(const void *kernel, int &state) {
    if (state == 0) {
        cudaFuncAttributes attr;
        const bool ok = cudaFuncGetAttributes(&attr, kernel) == gpuSuccess && attr.ptxVersion >= 90;
        (void)gpuGetLastError();
        state = ok ? 1 : 2;
    }
    return state == 1;
}

// The portable cluster size. (Clusters of 16, Hopper's non-portable largest, ran at 35-64% of cudaMemcpy
// on 65536-wide rows against 74-81% at 8: not used by these kernels. The on-chip columns kernel does use 16, opted
// in per kernel: softmax_cols.cuh.)
constexpr int kMaxCluster = 8;

// The cluster scheduling policy preference of this thread's cluster launches below (the default: no attribute),
// set for a scope by ClusterPolicyScope. On the pushed axis-0 launch "spread" is no better; "load balancing" lets an
// SM take two blocks of one cluster, which helps 16-bit clusters of fewer than 16 blocks (f16 4096^2 +4-5 points)
// and not clusters of 16 or f32 (their exchange and loads grow): softmax.cu takes it for 16-bit clusters of fewer
// than 16 blocks.
inline cudaClusterSchedulingPolicy &cluster_policy() {
    thread_local cudaClusterSchedulingPolicy policy = cudaClusterSchedulingPolicyDefault;
    return policy;
}
struct ClusterPolicyScope {
    explicit ClusterPolicyScope(cudaClusterSchedulingPolicy p) : prev(cluster_policy()) { cluster_policy() = p; }
    ~ClusterPolicyScope() { cluster_policy() = prev; }
    ClusterPolicyScope(const ClusterPolicyScope &) = delete;
    ClusterPolicyScope &operator=(const ClusterPolicyScope &) = delete;
    cudaClusterSchedulingPolicy prev;
};
// Launches `kernel` over `blocks` blocks of `threads` in clusters of `nb` (a 1-D grid; blocks % nb == 0),
// with `smem` bytes of dynamic shared memory. A refused launch leaves no error pending.
// The configuration of such a launch (also what cudaOccupancyMaxActiveClusters takes); `attr` is the caller's
// storage for the cluster attribute (and cluster_policy()'s where it is not the default), which the configuration
// points to.
inline cudaLaunchConfig_t cluster_config(int64_t blocks, int threads, int64_t nb, size_t smem, gpuStream_t stream,
                                         cudaLaunchAttribute (&attr)[2]) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3((unsigned)blocks, 1, 1);
    cfg.blockDim = dim3((unsigned)threads, 1, 1);
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = (unsigned)nb;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    if (cluster_policy() != cudaClusterSchedulingPolicyDefault) {
        attr[1].id = cudaLaunchAttributeClusterSchedulingPolicyPreference;
        attr[1].val.clusterSchedulingPolicyPreference = cluster_policy();
        cfg.numAttrs = 2;
    }
    return cfg;
}
template <typename... P, typename... A>
gpuError_t launch_clusters(void (*kernel)(P...), int64_t blocks, int threads, int64_t nb, size_t smem,
                            gpuStream_t stream, A &&...args) {
    cudaLaunchAttribute attr[2];
    const cudaLaunchConfig_t cfg = cluster_config(blocks, threads, nb, smem, stream, attr);
    const gpuError_t err = cudaLaunchKernelEx(&cfg, kernel, std::forward<A>(args)...);
    if (err != gpuSuccess) (void)gpuGetLastError();
    return err;
}

// Lets `kernel` launch clusters of more than kMaxCluster blocks (the non-portable size, up to 16) on the current
// device; `allowed` remembers per device that it did. False (no error left pending) where the device refuses.
inline bool allow_nonportable_clusters(const void *kernel, int (&allowed)[64]) {
    int dev = 0;
    const bool known = gpuGetDevice(&dev) == gpuSuccess && dev >= 0 && dev < 64;
    (void)gpuGetLastError();
    if (known && allowed[dev]) return true;
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != gpuSuccess) {
        (void)gpuGetLastError();
        return false;
    }
    if (known) allowed[dev] = 1;
    return true;
}

// Launches one cluster configuration: ceil(L / (G * P * V)) blocks a row (kShift: of L + V - 1), at most
// max_cluster (more than kMaxCluster: a non-portable size, opted in on the kernel here). False (nothing launched, no
// error left pending) where the device, the build or the shape does not allow it.
template <typename T, int G, int P, int kRaw = 0, bool kShift = false>
bool launch_fast_cluster_rows(gpuStream_t stream, T *out, const T *x, const FastRowsArgs &a,
                              int max_cluster = kMaxCluster, bool push = false) {
    const int64_t per_block = (int64_t)G * P * Pack<T>::N;
    const int64_t nb = (a.L + (kShift ? Pack<T>::N - 1 : 0) + per_block - 1) / per_block;
    if (nb < 1 || nb > max_cluster || a.rows > 0x7fffffff / max_cluster || !cluster_launch_supported()) return false;
    const bool full = !kShift && a.L == nb * per_block;
    // push: the exchange by pushes (kPush) instead of cluster barriers
    auto pick = [&](auto kPush) -> void (*)(T *, const T *, FastRowsArgs) {
        constexpr bool kP = decltype(kPush)::value;
        return kShift ? softmax_fast_rows_kernel<T, G, P, G, false, kRaw, true, true, kP>
               : full ? softmax_fast_rows_kernel<T, G, P, G, true, kRaw, true, false, kP>
                      : softmax_fast_rows_kernel<T, G, P, G, false, kRaw, true, false, kP>;
    };
    void (*kernel)(T *, const T *, FastRowsArgs) = push ? pick(std::true_type{}) : pick(std::false_type{});
    const int which = (full ? 1 : 0) + (push ? 2 : 0);  // the kernel, for the per-kernel caches
    static int built[4];
    static int allowed16[4][64];
    if (!kernel_built_for_sm90((const void *)kernel, built[which])) return false;
    if (nb > kMaxCluster && !allow_nonportable_clusters((const void *)kernel, allowed16[which])) return false;
    return launch_clusters(kernel, a.rows * nb, G, nb, 0, stream, out, x, a) == gpuSuccess;
}

// ---- persistent cluster rows: the next row loading while the cluster works on this one ---------------------------
// The fast cluster rows above launch a cluster a row: each block loads its part, reduces, exchanges with its cluster
// and stores, and the SM's next block starts loading only once a block exits (two blocks an SM overlap those phases
// only where they happen to be out of step). Here the grid is as many clusters as are co-resident (one 512-thread block
// an SM, cudaOccupancyMaxActiveClusters), cluster c takes rows c, c + C, c + 2C, ... (C clusters), and each thread
// holds two rows' packs in registers: the next row's loads are issued once this row's max and sum are taken, and stay
// in flight through its exchange and stores and the next row's first loop. The packs stay 16-byte packs of T (uint4, 4
// registers each; exp(x - max) overwrites them, rounded to T for 16-bit as kRawExp does, exact for f32): 2 x P x 4
// registers of rows. Blocks of a row hold P packs a thread, 512 x P x V elements, up to 16 blocks a cluster (more than
// 8: the non-portable cluster size, opted in). The blocks' (max, sum) pairs are pushed into each other's shared memory
// (persist_exchange below), with no cluster barrier a row.
constexpr int kPersistThreads = 512;

// One row as a thread sees it; the three counts share a register (two rows are live at once: the 16-bit shifted kernel
// with 8 packs spilled with them apart).
template <typename T> struct PersistRow {
    const T *px;        // this thread's first pack of the row (of the shifted row under kShift)
    T *po;
    int counts;         // nvalid | head << 8 | tail << 16:
    // nvalid: packs of this thread that hold some of the row; kShift: the row's elements [head, V) of its first
    // pack, [0, tail) of its last
    __device__ __forceinline__ int nvalid() const { return counts & 0xff; }
    __device__ __forceinline__ int head() const { return (counts >> 8) & 0xff; }
    __device__ __forceinline__ int tail() const { return counts >> 16; }
};

template <typename T, int P, bool kShift>
__device__ __forceinline__ PersistRow<T> persist_row_at(T *out, const T *x, const FastRowsArgs &a, int64_t row,
                                                       int64_t seg) {
    constexpr int G = kPersistThreads, V = Pack<T>::N;
    const int gl = threadIdx.x;
    const T *xrow = x + row * a.xrs;
    const int64_t d = kShift ? (int64_t)((reinterpret_cast<uintptr_t>(xrow) % 16) / sizeof(T)) : 0;
    PersistRow<T> r;
    r.px = xrow - d + seg + gl * V;
    r.po = out + row * a.ors - d + seg + gl * V;
    const int64_t rem = a.L + d - seg - (int64_t)gl * V;
    const int64_t np_row = rem <= 0 ? 0 : (rem + G * V - 1) / (G * V);
    const int nvalid = np_row >= P ? P : (int)np_row;
    const int head = kShift && seg == 0 && gl == 0 ? (int)d : 0;
    const int tail = !kShift || nvalid == 0 || rem - (int64_t)(nvalid - 1) * G * V >= V
                         ? V
                         : (int)(rem - (int64_t)(nvalid - 1) * G * V);
    r.counts = nvalid | head << 8 | tail << 16;
    return r;
}

// The row's packs into registers (a pack past the row: -inf; kShift: the first and last pack element by element).
template <typename T, int P, bool kShift>
__device__ __forceinline__ void persist_load(uint4 (&raw)[P], const PersistRow<T> &r) {
    constexpr int G = kPersistThreads, V = Pack<T>::N;
#pragma unroll
    for (int p = 0; p < P; ++p) {
        const int lo = p == 0 ? r.head() : 0, hi = p == r.nvalid() - 1 ? r.tail() : V;
        if (p >= r.nvalid())
            raw[p] = ninf_pack<T>();
        else if (kShift && (lo > 0 || hi < V))
            raw[p] = load_part<T>(r.px + p * G * V, lo, hi);
        else
            raw[p] = oprt_vendor::ldg(reinterpret_cast<const uint4 *>(r.px + p * G * V));
    }
}

// A row's first half, from its packs: the block's max, exp(x - max) in place and the block's sum; returns the
// block's (max, sum) (a block of only -inf: (-inf, 0)), which every thread holds.
template <typename T, int P>
__device__ __forceinline__ float2 persist_reduce(uint4 (&raw)[P], float *smem) {
    constexpr int G = kPersistThreads, V = Pack<T>::N;
    float m = -INFINITY;
#pragma unroll
    for (int p = 0; p < P; ++p) {
        float f[V];
        unpack_floats<T>(opaque(raw[p]), f);
#pragma unroll
        for (int e = 0; e < V; ++e) m = fmaxf(m, f[e]);
    }
    m = fast_row_reduce<G, true>(m, smem);
    const float mb = m;  // its exps are 0 where the block holds only -inf (scale NaN where the whole row does)
    if (m == -INFINITY) m = 0.f;
    float s = 0.f;
#pragma unroll
    for (int p = 0; p < P; ++p) {
        float f[V];
        unpack_floats<T>(opaque(raw[p]), f);
#pragma unroll
        for (int e = 0; e < V; ++e) {
            f[e] = exp_t<T>(f[e] - m);
            s += f[e];
        }
        raw[p] = pack_floats<T>(f);
    }
    s = fast_row_reduce<G, false>(s, smem);
    return make_float2(mb, s);
}

// A row's second half: the exps scaled by `scale` and stored (kShift: the row's first and last pack element by
// element).
template <typename T, int P, bool kShift>
__device__ __forceinline__ void persist_store(uint4 (&raw)[P], const PersistRow<T> &r, float scale) {
    constexpr int G = kPersistThreads, V = Pack<T>::N;
#pragma unroll
    for (int p = 0; p < P; ++p) {
        if (p >= r.nvalid()) continue;
        float f[V];
        unpack_floats<T>(opaque(raw[p]), f);
#pragma unroll
        for (int e = 0; e < V; ++e) f[e] *= scale;
        const uint4 u = pack_floats<T>(f);
        Pack<T> q;
        memcpy(&q, &u, 16);
        const int lo = p == 0 ? r.head() : 0, hi = p == r.nvalid() - 1 ? r.tail() : V;
        if (kShift && (lo > 0 || hi < V)) {  // the row's first or last pack: its own elements only
#pragma unroll
            for (int e = 0; e < V; ++e)
                if (e >= lo && e < hi) r.po[p * G * V + e] = q.v[e];
        } else {
            store_pack(r.po + p * G * V, q);
        }
    }
}

template <typename T, int P, bool kShift>
__global__ void __launch_bounds__(kPersistThreads, 1)
softmax_rows_persist_kernel(T *__restrict__ out, const T *__restrict__ x, FastRowsArgs a) {
#if OPRT_CLUSTERS_ON_DEVICE && OPRT_PTX_AT_LEAST(900)
    constexpr int V = Pack<T>::N;
    __shared__ float smem[kPersistThreads / kWarp];
    __shared__ PersistPush push;
    const int nb = cluster_blocks();
    const int rank = cluster_rank();
    const int64_t clusters = gridDim.x / nb;
    const int64_t seg = (int64_t)rank * kPersistThreads * P * V;
    if (nb > 1) persist_init(push, (unsigned)nb * 8u);  // every block's mbarriers initialised before any push
    uint4 b0[P], b1[P];
    PersistRow<T> r0{}, r1{};
    int64_t row = blockIdx.x / nb;  // < rows: the grid has at most one cluster a row
    r0 = persist_row_at<T, P, kShift>(out, x, a, row, seg);
    persist_load<T, P, kShift>(b0, r0);
    if (nb > 1) cluster_wait();
    // two rows a trip, so that each register set is named statically; the next row's loads are issued between a
    // row's reduction and its exchange, and stay in flight through the exchange and the stores
    for (int64_t k = 0; row < a.rows; row += 2 * clusters, k += 2) {
        const int64_t next = row + clusters;
        const float2 own0 = persist_reduce<T, P>(b0, smem);
        if (next < a.rows) {
            r1 = persist_row_at<T, P, kShift>(out, x, a, next, seg);
            persist_load<T, P, kShift>(b1, r1);
        }
        persist_store<T, P, kShift>(b0, r0, persist_exchange(push, own0, nb, rank, k));
        if (next >= a.rows) break;
        const float2 own1 = persist_reduce<T, P>(b1, smem);
        if (next + clusters < a.rows) {
            r0 = persist_row_at<T, P, kShift>(out, x, a, next + clusters, seg);
            persist_load<T, P, kShift>(b0, r0);
        }
        persist_store<T, P, kShift>(b1, r1, persist_exchange(push, own1, nb, rank, k + 1));
    }
    // no block reads another's shared memory: a block may exit once its own pairs have arrived
#else
    (void)out, (void)x, (void)a;
    oprt_vendor::trap();  // launched only where cluster_launch_supported() and the kernel was built for sm_90
#endif
}

// The persistent kernel with P packs a thread: its blocks a row, ceil(span / (512 P V)) (span: L, kShift L + V - 1),
// and how many of its clusters of that size are co-resident (cudaOccupancyMaxActiveClusters, cached per device and
// size; clusters of more than 8 opted in). 0 clusters where the device, the build or the shape does not allow it.
template <typename T, int P, bool kShift> struct PersistConfig {
    static int64_t blocks(int64_t span) {
        return (span + kPersistThreads * P * Pack<T>::N - 1) / (kPersistThreads * P * Pack<T>::N);
    }
    static int resident(int64_t nb, gpuStream_t stream) {
        if (nb < 1 || nb > 16 || !cluster_launch_supported()) return 0;
        static int built;
        if (!kernel_built_for_sm90((const void *)softmax_rows_persist_kernel<T, P, kShift>, built)) return 0;
        static int allowed16[64];
        if (nb > kMaxCluster &&
            !allow_nonportable_clusters((const void *)softmax_rows_persist_kernel<T, P, kShift>, allowed16))
            return 0;
        int dev = 0;
        if (gpuGetDevice(&dev) != gpuSuccess || dev < 0 || dev >= 64) {
            (void)gpuGetLastError();
            return 0;
        }
        static int known[64][17];  // 0 unknown, -1 none, else the count
        if (known[dev][nb] == 0) {
            cudaLaunchAttribute attr[2];
            const cudaLaunchConfig_t cfg = cluster_config(nb, kPersistThreads, nb, 0, stream, attr);
            int n = 0;
            if (cudaOccupancyMaxActiveClusters(&n, (const void *)softmax_rows_persist_kernel<T, P, kShift>, &cfg) !=
                gpuSuccess) {
                (void)gpuGetLastError();
                n = 0;
            }
            known[dev][nb] = n > 0 ? n : -1;
        }
        return known[dev][nb] > 0 ? known[dev][nb] : 0;
    }
    // The share of the GPU's blocks doing useful work: co-resident clusters x blocks, times the blocks' capacity the
    // row fills.
    static double score(int64_t span, gpuStream_t stream) {
        const int64_t nb = blocks(span);
        return (double)resident(nb, stream) * (double)span / (double)(kPersistThreads * P * Pack<T>::N);
    }
    static bool launch(gpuStream_t stream, T *out, const T *x, const FastRowsArgs &a, int64_t span) {
        const int64_t nb = blocks(span);
        const int n = resident(nb, stream);
        if (n < 1 || a.rows < 1) return false;
        const int64_t clusters = std::min<int64_t>(a.rows, n);  // at most one a row
        return launch_clusters(softmax_rows_persist_kernel<T, P, kShift>, clusters * nb, kPersistThreads, nb, 0,
                               stream, out, x, a) == gpuSuccess;
    }
};

// The persistent kernel for rows of up to 16 blocks of 512 x 8 packs, with 8 or 4 packs a thread: the one whose
// co-resident blocks hold more of the rows at a time (PersistConfig::score: the blocks the GPU places, the capacity
// the row leaves empty; f32 50257: 7 blocks of 8192 elements rather than 4 of 16384).
template <typename T, bool kShift>
bool launch_persist_rows(gpuStream_t stream, T *out, const T *x, const FastRowsArgs &a) {
    using P8 = PersistConfig<T, 8, kShift>;
    using P4 = PersistConfig<T, 4, kShift>;
    const int64_t span = a.L + (kShift ? Pack<T>::N - 1 : 0);
    const double s4 = P4::score(span, stream);
    if (s4 > 0 && s4 > P8::score(span, stream)) return P4::launch(stream, out, x, a, span);
    return P8::launch(stream, out, x, a, span);
}
#else
// No clusters (vendor.h): the cluster launches never happen; callers fall back to the block kernels.
template <typename T, int G, int P, int kRaw = 0, bool kShift = false>
bool launch_fast_cluster_rows(gpuStream_t, T *, const T *, const FastRowsArgs &, int = 8, bool = false) {
    return false;
}
template <typename T, bool kShift>
bool launch_persist_rows(gpuStream_t, T *, const T *, const FastRowsArgs &) {
    return false;
}
#endif  // OPRT_HAS_CLUSTERS

}  // namespace oprt_kernels

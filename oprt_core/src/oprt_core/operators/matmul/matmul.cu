// matmul.cu: oprt.h's matmul (entry points from oprt_entry.h around a plan and a launch).
//
// A portable tiled kernel (matmul_tiled), the same source on NVIDIA and MetaX: no tensor-core instructions, no
// warp-width assumption. Each block computes kBM x kBN outputs of one product (one batch index), in a grid-stride
// loop over every (batch, row tile, column tile); each of its 256 threads keeps kTM x kTN accumulators in f32. Per
// kBK-deep step the block stages a (kBM x kBK) tile of a and a (kBK x kBN) tile of b in shared memory, converted to
// f32 (16-bit and fp8 products are then exact in f32, as the budget in README.md assumes), zero-filled
// past the edges (odd M, N and K), and every thread adds its kBK products an output with fmaf in order of k.
//  - fp8: e4m3 a and b (their loads converted to f32 exactly: cuda_fp8.h's __nv_fp8_e4m3 on NVIDIA, a bit decode
//    on MetaX, vendor_*.h) with a bf16 out and c; f32 accumulation on the CUDA cores (no fp8 tensor cores here: the
//    CUTLASS sm_90 kernels below run the K-major ones on them where built).
//  - Any strides (oprt_plan_matmul's (B, rows, cols) views): a transposed operand is read along its unit stride, the
//    threads of a warp taking consecutive elements along whichever of the tile's two dims has the smaller stride.
//  - A thread's outputs are rows ty + 16 i and columns tx + 16 j of the tile: a warp's shared-memory reads of b are
//    consecutive words (no bank conflicts), those of a one word for 16 threads (a broadcast), and its stores to a
//    row-major out consecutive elements.
// The epilogue: out = alpha * acc, plus beta * c (in f32, one fmaf) where the plan reads c (has_c: c given and
// beta != 0); each output element's c is read by the thread that then writes that element, so out may be c itself
// (the launch checks allow exactly that alias, nothing else).
// allow_tf32 is accepted and not used: the products are full f32. Loads are element by element (no 16-byte packs
// yet) and there is no double buffering: a baseline for correctness on every layout, not a peak kernel.
//
// oprt_nvidia built with the CUTLASS headers (OPRT_HAS_CUTE, docs/building.md) first offers each product to the
// CUTLASS sm_90 kernels (sm90/matmul_sm90.cu: f16, bf16, f32 with allow_tf32, e4m3 a and b with K-major a and b;
// aligned row- or column-major operands; an H100/H200-class device), which name their tile configuration in
// last_launch(); whatever they decline, at plan time or at launch, runs here. OPRT_NVIDIA_MATMUL=tiled (read when the
// descriptor is created) keeps every product on the tiled kernel (tests).
#include "common.cuh"
#include "oprt_entry.h"

#if defined(OPRT_HAS_CUTE) && !defined(OPRT_VENDOR_MACA)
#include <stdlib.h>
#include <string.h>

#include "sm90/matmul_sm90.h"
#define OPRT_MATMUL_SM90 1
#else
#define OPRT_MATMUL_SM90 0
#endif

using namespace oprt_kernels;

namespace {

constexpr int kBM = 64, kBN = 64, kBK = 16;                  // block tile
constexpr int kTM = 4, kTN = 4;                              // outputs a thread, rows x columns
constexpr int kTX = kBN / kTN, kTY = kBM / kTM;              // threads along the columns, the rows: 16 x 16
constexpr int kThreads = kTX * kTY;                          // 256
constexpr int kPad = 4;                                      // shared-memory row padding (words)
static_assert(kBM * kBK % kThreads == 0 && kBK * kBN % kThreads == 0, "matmul: a tile's loads split evenly");

struct MatmulArgs {
    int64_t m, n, k;
    int64_t a_bs, a_rs, a_cs, b_bs, b_rs, b_cs, o_bs, o_rs, o_cs;
    int64_t c_bs, c_rs, c_cs;  // c's strides where has_c
    int64_t tiles_n, tiles_per_batch, tiles;
    float alpha, beta;
    int32_t has_c;             // 1: out = alpha * acc + beta * c; 0: c is not read
    int32_t a_along_k;  // consecutive threads load consecutive k of a (its unit stride is along K), else along M
    int32_t b_along_n;  // consecutive threads load consecutive n of b, else along K
};

// TIn: a's and b's element type, T: out's and c's (e4m3_t and bf16_t for fp8 inputs, else one type)
template <typename TIn, typename T>
__global__ void __launch_bounds__(kThreads)
matmul_tiled_kernel(T *out, const TIn *__restrict__ a, const TIn *__restrict__ b, const T *c, MatmulArgs p) {
    __shared__ float as[kBK][kBM + kPad];
    __shared__ float bs[kBK][kBN + kPad];
    const int tid = threadIdx.x;
    const int tx = tid % kTX, ty = tid / kTX;
    for (int64_t t = blockIdx.x; t < p.tiles; t += gridDim.x) {
        const int64_t q = t / p.tiles_per_batch, r = t % p.tiles_per_batch;
        const int64_t m0 = (r / p.tiles_n) * kBM, n0 = (r % p.tiles_n) * kBN;
        const TIn *pa = a + q * p.a_bs;
        const TIn *pb = b + q * p.b_bs;
        float acc[kTM][kTN];
#pragma unroll
        for (int i = 0; i < kTM; ++i)
#pragma unroll
            for (int j = 0; j < kTN; ++j) acc[i][j] = 0.f;
        for (int64_t k0 = 0; k0 < p.k; k0 += kBK) {
#pragma unroll
            for (int e = 0; e < kBM * kBK / kThreads; ++e) {
                const int idx = tid + e * kThreads;
                const int i = p.a_along_k ? idx / kBK : idx % kBM;
                const int l = p.a_along_k ? idx % kBK : idx / kBM;
                const int64_t gi = m0 + i, gl = k0 + l;
                as[l][i] = gi < p.m && gl < p.k ? to_f(pa[gi * p.a_rs + gl * p.a_cs]) : 0.f;
            }
#pragma unroll
            for (int e = 0; e < kBK * kBN / kThreads; ++e) {
                const int idx = tid + e * kThreads;
                const int l = p.b_along_n ? idx / kBN : idx % kBK;
                const int j = p.b_along_n ? idx % kBN : idx / kBK;
                const int64_t gl = k0 + l, gj = n0 + j;
                bs[l][j] = gl < p.k && gj < p.n ? to_f(pb[gl * p.b_rs + gj * p.b_cs]) : 0.f;
            }
            __syncthreads();
#pragma unroll
            for (int l = 0; l < kBK; ++l) {
                float av[kTM], bv[kTN];
#pragma unroll
                for (int i = 0; i < kTM; ++i) av[i] = as[l][ty + kTY * i];
#pragma unroll
                for (int j = 0; j < kTN; ++j) bv[j] = bs[l][tx + kTX * j];
#pragma unroll
                for (int i = 0; i < kTM; ++i)
#pragma unroll
                    for (int j = 0; j < kTN; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
            }
            __syncthreads();  // the tiles are read before the next step overwrites them
        }
        T *po = out + q * p.o_bs;
        const T *pc = p.has_c ? c + q * p.c_bs : nullptr;
#pragma unroll
        for (int i = 0; i < kTM; ++i) {
            const int64_t gi = m0 + ty + kTY * i;
            if (gi >= p.m) continue;
#pragma unroll
            for (int j = 0; j < kTN; ++j) {
                const int64_t gj = n0 + tx + kTX * j;
                if (gj >= p.n) continue;
                float v = p.alpha * acc[i][j];
                if (pc != nullptr) v = fmaf(p.beta, to_f(pc[gi * p.c_rs + gj * p.c_cs]), v);  // read, then written
                po[gi * p.o_rs + gj * p.o_cs] = from_f<T>(v);
            }
        }
    }
}

struct MatmulState {
    oprt_matmul_plan_t plan;
#if OPRT_MATMUL_SM90
    oprt_sm90::Plan sm90;  // config kNone: the tiled kernel
#endif
};

inline int64_t abs64(int64_t v) { return v < 0 ? -v : v; }

template <typename TIn, typename T>
oprt_status_t launch_matmul(const MatmulState *st, void *workspace, size_t workspace_size, void *out_, const void *a_,
                            const void *b_, const void *c_, gpuStream_t stream) {
    const oprt_matmul_plan_t *p = &st->plan;
    note_launch("none");
    if (p->batch == 0 || p->m == 0 || p->n == 0) return OPRT_STATUS_SUCCESS;  // no output element
#if OPRT_MATMUL_SM90
    if (st->sm90.config != oprt_sm90::kNone) {
        bool launched = false;
        note_launch(oprt_sm90::config_name(st->sm90));
        // c is read only where the plan says so (given, beta != 0); out may be c itself: each tile's c is loaded
        // before that tile's out is stored
        gpuError_t err = oprt_sm90::launch(st->sm90, out_, a_, b_, p->has_c ? c_ : nullptr, p->c_bs, p->c_rs,
                                           p->c_cs, p->alpha, p->has_c ? p->beta : 0.f, workspace, workspace_size,
                                           stream, &launched);
        if (err != gpuSuccess) return gpu_status(err, "matmul CUTLASS kernel");
        if (launched) return OPRT_STATUS_SUCCESS;
        note_launch("none");  // declined at launch (device, alignment): the tiled kernel below
    }
#else
    (void)workspace;
    (void)workspace_size;
#endif
    MatmulArgs g{};
    g.m = p->m;
    g.n = p->n;
    g.k = p->k;
    g.a_bs = p->a_bs;
    g.a_rs = p->a_rs;
    g.a_cs = p->a_cs;
    g.b_bs = p->b_bs;
    g.b_rs = p->b_rs;
    g.b_cs = p->b_cs;
    g.o_bs = p->o_bs;
    g.o_rs = p->o_rs;
    g.o_cs = p->o_cs;
    g.tiles_n = ceil_div(p->n, (int64_t)kBN);
    g.tiles_per_batch = ceil_div(p->m, (int64_t)kBM) * g.tiles_n;
    g.tiles = p->batch * g.tiles_per_batch;
    g.alpha = p->alpha;
    g.has_c = p->has_c;
    g.beta = p->beta;
    g.c_bs = p->c_bs;
    g.c_rs = p->c_rs;
    g.c_cs = p->c_cs;
    // along the dim of the smaller stride, an extent-1 dim's stride aside
    g.a_along_k = p->k > 1 && (p->m <= 1 || abs64(p->a_cs) <= abs64(p->a_rs));
    g.b_along_n = p->n > 1 && (p->k <= 1 || abs64(p->b_cs) <= abs64(p->b_rs));
    note_launch("matmul_tiled");
    matmul_tiled_kernel<TIn, T><<<grid_all(g.tiles, 1), kThreads, 0, stream>>>(
        static_cast<T *>(out_), static_cast<const TIn *>(a_), static_cast<const TIn *>(b_),
        p->has_c ? static_cast<const T *>(c_) : nullptr, g);
    return check_launch("matmul kernel");
}

oprt_status_t plan_matmul(MatmulState *s, size_t *workspace, const oprt_tensor_desc_t *out,
                          const oprt_tensor_desc_t *a, const oprt_tensor_desc_t *b, const oprt_tensor_desc_t *c,
                          float alpha, float beta, int32_t allow_tf32) {
    OPRT_CHECK(oprt_plan_matmul(&s->plan, out, a, b, c, alpha, beta, allow_tf32));
    *workspace = 0;
#if OPRT_MATMUL_SM90
    const char *force = getenv("OPRT_NVIDIA_MATMUL");
    if (force != nullptr && strcmp(force, "tiled") == 0)
        s->sm90 = oprt_sm90::Plan{}, s->sm90.config = oprt_sm90::kNone;
    else
        oprt_sm90::plan(&s->plan, device_limits().sm_count, &s->sm90);
    *workspace = s->sm90.workspace;  // 0 where the plan declined (kNone)
#endif
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t run_matmul(const MatmulState *s, void *workspace, void *out, const void *a, const void *b,
                         const void *c, oprt_stream_t stream) {
#if OPRT_MATMUL_SM90
    const size_t ws = s->sm90.workspace;  // the entry point checked it is there (0 where the plan declined)
#else
    const size_t ws = 0;
#endif
    if (s->plan.in_dtype == OPRT_DTYPE_F8E4M3)  // e4m3 a and b, bf16 out and c (oprt_plan_matmul's one mix)
        return launch_matmul<e4m3_t, bf16_t>(s, workspace, ws, out, a, b, c, (gpuStream_t)stream);
    return dispatch_dtype(s->plan.dtype, [&](auto tag) {
        return launch_matmul<decltype(tag), decltype(tag)>(s, workspace, ws, out, a, b, c, (gpuStream_t)stream);
    });
}

}  // namespace

extern "C" {
OPRT_DEFINE_OP(matmul, MatmulState, plan_matmul, run_matmul)
}  // extern "C"

// cross_entropy.cu: oprt.h's cross_entropy (entry points from oprt_entry.h around a plan and a launch).
//
// One pass over the logits: a block a row (grid-stride over rows), each thread keeping an online (max, sum of
// exp(x - max)) in f32 over its share of the row, merged across the block (block_reduce_maxsum); thread 0 then
// reads the target's logit once more (one element, from L1/L2) and writes loss = max + log(sum) - x[target], or 0
// for an ignored row, NaN for a target outside [0, V) (torch asserts instead).
//  - packed (xent_rows_kernel<T, true>): logits contiguous along the classes: a scalar head up to the row's first
//    16-byte boundary (rows of an odd width start anywhere), then 16-byte packs, kLoads of them loaded before they
//    are folded into the state, each with one rescale (the pack's max first), then a scalar tail.
//  - strided (xent_rows_kernel<T, false>): any stride along the classes, scalar loads.
// Threads a block by the row's width: 128 up to 2048 classes, 256 up to 16384, 512 up to 65536, else 1024 (a
// vocabulary of 256K: 32 packs of bf16 a thread).
// reduction mean: the rows kernel writes each row's loss and whether it counts to the workspace (2 floats a row),
// and xent_mean_kernel (one block) sums both and writes sum / count (NaN for no row counted, as torch).
// exp is __expf (ex2.approx of a product); its error, with the argument's rounding, is within the budget of
// README.md (the weighted mean of |x - max| over a row is at most ln V). log is logf.
#include "common.cuh"
#include "oprt_entry.h"

using namespace oprt_kernels;

namespace {

struct XentArgs {
    int64_t rows, v, xi;  // rows x v logits, xi the stride along the classes
    int64_t ignore_index;
    int32_t ndim;         // the plan's leading dims: row r -> offsets in logits, target and out
    int64_t shape[OPRT_MAX_NDIM], xs[OPRT_MAX_NDIM], ts[OPRT_MAX_NDIM], os[OPRT_MAX_NDIM];
    int32_t mean;
};

__device__ __forceinline__ void row_offsets(const XentArgs &a, int64_t r, int64_t &xo, int64_t &to, int64_t &oo) {
    xo = to = oo = 0;
    for (int i = a.ndim - 1; i >= 0; --i) {
        const int64_t e = a.shape[i], q = r % e;
        xo += q * a.xs[i];
        to += q * a.ts[i];
        oo += q * a.os[i];
        r /= e;
    }
}

__device__ __forceinline__ float quiet_nan() { return __uint_as_float(0x7fc00000u); }

// Folds a group of values, whose max is gm, into the state: one rescale of the sum, then an exp a value.
template <int N> __device__ __forceinline__ void fold(MaxSum &st, const float (&f)[N], float gm) {
    if (gm == -INFINITY) return;  // every value -inf: exp(-inf) = 0 adds nothing
    if (gm > st.m) {
        st.s = st.s == 0.f ? 0.f : st.s * __expf(st.m - gm);
        st.m = gm;
    }
#pragma unroll
    for (int e = 0; e < N; ++e) st.s += __expf(f[e] - st.m);
}

// A 16-byte pack folded into the state: its max first, then one rescale at most.
template <typename T> __device__ __forceinline__ void fold_pack(MaxSum &st, const Pack<T> &q) {
    constexpr int V = Pack<T>::N;
    float f[V];
    pack_to_f(q, f);
    float gm = f[0];
#pragma unroll
    for (int e = 1; e < V; ++e) gm = fmaxf(gm, f[e]);
    fold(st, f, gm);
}

constexpr int kLoads = 4;  // packs a thread loads before folding them: memory-level parallelism

template <typename T, bool kPacked>
__global__ void __launch_bounds__(kMaxThreadsPerBlock)
xent_rows_kernel(T *__restrict__ out, const T *__restrict__ x, const int64_t *__restrict__ target,
                 float *__restrict__ ws, XentArgs a) {
    __shared__ float smem[2 * kMaxThreadsPerBlock / kWarp];
    for (int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {
        int64_t xo, to, oo;
        row_offsets(a, row, xo, to, oo);
        const int64_t cls = target[to];
        const bool ignored = cls == a.ignore_index;  // the same for the whole block
        float loss = 0.f;
        if (!ignored) {
            const T *px = x + xo;
            MaxSum st{-INFINITY, 0.f};
            if constexpr (kPacked) {
                constexpr int V = Pack<T>::N;
                const int64_t head = head_to_align(px, a.v);
                const int64_t np = (a.v - head) / V;
                const T *pp = px + head;
                for (int64_t i = threadIdx.x; i < head; i += blockDim.x) st = maxsum_add(st, to_f(px[i]));
                const int64_t step = blockDim.x;
                int64_t p = threadIdx.x;
                for (; p + (kLoads - 1) * step < np; p += kLoads * step) {  // kLoads packs in flight, then folded
                    Pack<T> q[kLoads];
#pragma unroll
                    for (int u = 0; u < kLoads; ++u) q[u] = load_pack(pp + (p + u * step) * V);
#pragma unroll
                    for (int u = 0; u < kLoads; ++u) fold_pack(st, q[u]);
                }
                for (; p < np; p += step) fold_pack(st, load_pack(pp + p * V));
                for (int64_t i = head + np * V + threadIdx.x; i < a.v; i += blockDim.x)
                    st = maxsum_add(st, to_f(px[i]));
            } else {
                for (int64_t i = threadIdx.x; i < a.v; i += blockDim.x) st = maxsum_add(st, to_f(px[i * a.xi]));
            }
            st = block_reduce_maxsum(st, smem);
            if (threadIdx.x == 0)
                loss = cls >= 0 && cls < a.v ? st.m + logf(st.s) - to_f(px[cls * a.xi]) : quiet_nan();
        }
        if (threadIdx.x == 0) {
            if (a.mean) {
                ws[row] = loss;
                ws[a.rows + row] = ignored ? 0.f : 1.f;
            } else {
                out[oo] = from_f<T>(loss);
            }
        }
    }
}

// One block: the sum of the rows' losses over the number of rows counted (both in the workspace).
template <typename T>
__global__ void __launch_bounds__(kMaxThreadsPerBlock)
xent_mean_kernel(T *__restrict__ out, const float *__restrict__ ws, int64_t rows) {
    __shared__ float smem[kMaxThreadsPerBlock / kWarp];
    float s = 0.f, c = 0.f;
    for (int64_t r = threadIdx.x; r < rows; r += blockDim.x) {
        s += ws[r];
        c += ws[rows + r];
    }
    s = block_reduce(s, SumOp{}, 0.f, smem);
    c = block_reduce(c, SumOp{}, 0.f, smem);
    if (threadIdx.x == 0) out[0] = from_f<T>(s / c);  // no row counted: 0 / 0, NaN
}

struct XentState {
    oprt_xent_plan_t plan;
};

template <typename T>
oprt_status_t launch_xent(const XentState *st, void *ws_, void *out_, const void *x_, const void *t_,
                          gpuStream_t stream) {
    const oprt_xent_plan_t *p = &st->plan;
    note_launch("none");
    T *out = static_cast<T *>(out_);
    const T *x = static_cast<const T *>(x_);
    const int64_t *target = static_cast<const int64_t *>(t_);
    float *ws = static_cast<float *>(ws_);
    const bool mean = p->reduction == OPRT_REDUCTION_MEAN;
    if (p->rows == 0) {
        if (!mean) return OPRT_STATUS_SUCCESS;
        note_launch("xent_mean");
        xent_mean_kernel<T><<<1, kBlock, 0, stream>>>(out, ws, 0);  // the mean of no row: NaN
        return check_launch("cross_entropy mean kernel");
    }
    XentArgs a{};
    a.rows = p->rows;
    a.v = p->v;
    a.xi = p->x_inner;
    a.ignore_index = p->ignore_index;
    a.ndim = p->ndim;
    for (int i = 0; i < p->ndim; ++i) {
        a.shape[i] = p->shape[i];
        a.xs[i] = p->x_strides[i];
        a.ts[i] = p->t_strides[i];
        a.os[i] = p->out_strides[i];
    }
    a.mean = mean;
    const int threads = p->v <= 2048 ? 128 : p->v <= 16384 ? 256 : p->v <= 65536 ? 512 : kMaxThreadsPerBlock;
    const unsigned grid = grid_all(p->rows, 1);
    if (p->x_inner == 1 || p->v == 1) {
        note_launch("xent_rows_packed");
        xent_rows_kernel<T, true><<<grid, threads, 0, stream>>>(out, x, target, ws, a);
    } else {
        note_launch("xent_rows_strided");
        xent_rows_kernel<T, false><<<grid, threads, 0, stream>>>(out, x, target, ws, a);
    }
    OPRT_CHECK(check_launch("cross_entropy kernel"));
    if (mean) {
        note_launch_also("xent_mean");
        xent_mean_kernel<T><<<1, kMaxThreadsPerBlock, 0, stream>>>(out, ws, p->rows);
        return check_launch("cross_entropy mean kernel");
    }
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t plan_cross_entropy(XentState *s, size_t *workspace, const oprt_tensor_desc_t *out,
                                 const oprt_tensor_desc_t *logits, const oprt_tensor_desc_t *target,
                                 int32_t ignore_index, int32_t reduction) {
    OPRT_CHECK(oprt_plan_cross_entropy(&s->plan, out, logits, target, ignore_index, reduction));
    *workspace = reduction == OPRT_REDUCTION_MEAN ? (size_t)(2 * s->plan.rows) * sizeof(float) : 0;
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t run_cross_entropy(const XentState *s, void *workspace, void *out, const void *logits,
                                const void *target, oprt_stream_t stream) {
    return dispatch_dtype(s->plan.dtype, [&](auto tag) {
        return launch_xent<decltype(tag)>(s, workspace, out, logits, target, (gpuStream_t)stream);
    });
}

}  // namespace

extern "C" {
OPRT_DEFINE_OP(cross_entropy, XentState, plan_cross_entropy, run_cross_entropy)
}  // extern "C"

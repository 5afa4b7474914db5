// add_rms_norm.cu: oprt.h's add_rms_norm (entry points from oprt_entry.h around a plan and a launch); h = x + residual
// and out = rms_norm(h) * weight: the rows path of norm.cuh (kAdd), or the generic kernel below (norm.cuh says
// how each handles in-place calls).
#include "norm.cuh"
#include "oprt_entry.h"

using namespace oprt_kernels;

namespace {

// add_rms_norm, any layout: row r of out, h, x, residual at the offsets of idx, elements at i * oi, hi, xi, ri.
struct AddNormGenericArgs {
    int64_t rows, n, xi, oi, ri, hi, ws;
    float eps;
    Indexer<4> idx;  // row r -> (out, h, x, residual offsets)
};

// G == kWarp: a warp per row; G == kBlock: a block per row. The first pass writes h (rounded to the dtype) and sums
// its squares; the second reads h back (each element by the thread that wrote it) and writes out.
template <typename T, int G>
__global__ void __launch_bounds__(kBlock)
add_norm_generic_kernel(T *out, T *h, const T *x, const T *res, const T *__restrict__ w, AddNormGenericArgs a) {
    __shared__ float smem[kBlock / kWarp];
    constexpr int kRowsPerBlock = kBlock / G;
    const int gl = threadIdx.x % G;
    auto reduce = [&](float v) {
        if constexpr (G == kWarp) return warp_reduce(v, SumOp{});
        else return block_reduce(v, SumOp{}, 0.f, smem);
    };
    for (int64_t row = (int64_t)blockIdx.x * kRowsPerBlock + threadIdx.x / G; row < a.rows;
         row += (int64_t)gridDim.x * kRowsPerBlock) {
        int64_t off[4];
        a.idx.offsets(row, off);
        T *po = out + off[0], *ph = h + off[1];
        const T *px = x + off[2], *pr = res + off[3];
        float s = 0.f;
        for (int64_t i = gl; i < a.n; i += G) {
            const T hv = from_f<T>(to_f(px[i * a.xi]) + to_f(pr[i * a.ri]));
            ph[i * a.hi] = hv;
            const float v = to_f(hv);
            s += v * v;
        }
        const float r = rsqrtf(reduce(s) / (float)a.n + a.eps);
        for (int64_t i = gl; i < a.n; i += G) po[i * a.oi] = from_f<T>(to_f(ph[i * a.hi]) * r * to_f(w[i * a.ws]));
    }
}

struct AddNormState {
    oprt_add_rows_plan_t plan;
    NormConfig config;
};

template <typename T>
oprt_status_t launch_add_norm(const AddNormState *st, void *out_, void *h_, const void *x_, const void *r_,
                              const void *w_, gpuStream_t stream) {
    const oprt_add_rows_plan_t *q = &st->plan;
    const oprt_rows_plan_t *p = &q->rows;
    note_launch("none");
    if (p->numel == 0) return OPRT_STATUS_SUCCESS;
    T *out = static_cast<T *>(out_), *h = static_cast<T *>(h_);
    const T *x = static_cast<const T *>(x_), *res = static_cast<const T *>(r_), *w = static_cast<const T *>(w_);
    constexpr int64_t V = Pack<T>::N, S = sizeof(T);
    const int64_t n = p->n;
    // rows path: unit inner strides (or one element a row), one row stride each, all of it 16-byte aligned
    const bool unit = n == 1 || (p->x_inner == 1 && p->out_inner == 1 && q->res_inner == 1 && q->h_inner == 1 &&
                                 p->vec_strides[0] == 1);
    const bool one = p->ndim == 1;
    const int64_t xrs = one ? p->x_strides[0] : 0, ors = one ? p->out_strides[0] : 0;
    const int64_t rrs = one ? q->res_strides[0] : 0, hrs = one ? q->h_strides[0] : 0;
    const bool rows = unit && p->ndim <= 1 && n % V == 0 && (xrs * S) % 16 == 0 && (ors * S) % 16 == 0 &&
                      (rrs * S) % 16 == 0 && (hrs * S) % 16 == 0 && aligned16(x) && aligned16(out) &&
                      aligned16(res) && aligned16(h) && aligned16(w);
    if (rows && launch_rows<T, false, true>(stream, out, x, w, res, NormRowsArgs{p->rows, n, xrs, ors, p->eps, rrs, hrs},
                                            st->config, h)) {
        note_launch(n / V <= 64 ? "add_norm_rows_warp" : "add_norm_rows_block");
        return check_launch("add_rms_norm kernel");
    }
    AddNormGenericArgs a{};
    a.rows = p->rows;
    a.n = n;
    a.xi = p->x_inner;
    a.oi = p->out_inner;
    a.ri = q->res_inner;
    a.hi = q->h_inner;
    a.ws = p->vec_strides[0];
    a.eps = p->eps;
    a.idx.ndim = p->ndim;
    for (int i = 0; i < p->ndim; ++i) {
        a.idx.ext[i] = p->shape[i];
        a.idx.stride[0][i] = p->out_strides[i];
        a.idx.stride[1][i] = q->h_strides[i];
        a.idx.stride[2][i] = p->x_strides[i];
        a.idx.stride[3][i] = q->res_strides[i];
    }
    if (n <= 1024) {
        note_launch("add_norm_generic_warp");
        add_norm_generic_kernel<T, kWarp><<<grid_for(p->rows, kBlock / kWarp, 8), kBlock, 0, stream>>>(
            out, h, x, res, w, a);
    } else {
        note_launch("add_norm_generic_block");
        add_norm_generic_kernel<T, kBlock><<<grid_for(p->rows, 1, 8), kBlock, 0, stream>>>(out, h, x, res, w, a);
    }
    return check_launch("add_rms_norm kernel");
}

oprt_status_t plan_add_rms_norm(AddNormState *s, size_t *workspace, const oprt_tensor_desc_t *out,
                                const oprt_tensor_desc_t *h, const oprt_tensor_desc_t *x,
                                const oprt_tensor_desc_t *residual, const oprt_tensor_desc_t *weight, float eps) {
    *workspace = 0;
    s->config = norm_config();
    return oprt_plan_add_rms_norm(&s->plan, out, h, x, residual, weight, eps);
}

oprt_status_t run_add_rms_norm(const AddNormState *s, void *, void *out, void *h, const void *x, const void *residual,
                               const void *weight, oprt_stream_t stream) {
    return dispatch_dtype(s->plan.rows.dtype, [&](auto tag) {
        return launch_add_norm<decltype(tag)>(s, out, h, x, residual, weight, (gpuStream_t)stream);
    });
}

}  // namespace

extern "C" {
OPRT_DEFINE_OP(add_rms_norm, AddNormState, plan_add_rms_norm, run_add_rms_norm)
}  // extern "C"

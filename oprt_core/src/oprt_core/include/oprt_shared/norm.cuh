// norm.cuh: the kernels and launchers rms_norm, layer_norm and add_rms_norm share (operators/<op>/<op>.cu: each
// op's plan and launch behind OPRT_DEFINE_OP).
//
// In place (add_rms_norm's out or h over x or residual): each element of x and residual is read once, through the
// read-only path, by the thread that later writes it, and never again after a store; a change that re-reads x or
// residual after writing out or h breaks in-place calls.
//
// Paths, chosen per launch from the plan and the pointers:
//  - rows (norm_rows_kernel): every row of x and out holds n contiguous elements, 16-byte aligned, at one row
//    stride, weight (and bias) contiguous and aligned, n a multiple of the pack width, and the row fits the
//    registers of a block (n <= kRowsMaxPacks packs). The row is read once into registers, reduced (rms: the sum
//    of squares; layer: the mean, then the sum of squared deviations from the registers, an exact two-pass
//    variance), scaled and written: one read and one write per element, the vectors read through L1/L2.
//    Rows of up to 64 packs take G = 1..32 lanes of a warp (several rows a block; 33-64 packs: 2 a lane); longer rows a block of
//    ceil(packs / P) threads (rounded to a warp) with P packs each: P = 2 up to 512 packs, 4 up to 2048, 8 beyond
//    (OPRT_NVIDIA_NORM_P and OPRT_NVIDIA_NORM_RAW override it, for tuning: NormConfig).
//  - generic (norm_generic_kernel): any layout: a warp per row (rows of up to 1024 elements) or a block of 256
//    threads per row, scalar loads at the plan's strides, f32 sums; layer_norm makes three passes over the row
//    (mean, variance, write), rms_norm two. Rows past the registers' reach (n > kRowsMaxPacks packs) read x again
//    from L2 / memory in each pass.
//
// add_rms_norm (two outputs, h = x + residual and out = rms_norm(h) * weight) takes the same two paths: the rows
// path (residual and h on the same row layout as x and out) adds each residual pack to x's as it loads them, rounds
// the sum to the dtype and stores it to h at once, and keeps the rounded h in its registers for the sum of squares
// and the scaled write (x, residual read once, h and out written once); add_norm_generic_kernel (any layout, in
// add_rms_norm.cu) writes h in its first pass and reads it back in the second. Each element is read before it is
// written, by the thread that writes it, so out and h may each be x or residual (in place); no launch re-reads x
// after writing.
#pragma once

#include <cstdlib>
#include <cstring>

#include "common.cuh"
#include "softmax_rows.cuh"  // unpack_floats, pack_floats, fast_row_reduce

using namespace oprt_kernels;

namespace {

constexpr int kRowsMaxPacks = 8192;  // 1024 threads x 8 packs: 64 K 16-bit or 32 K f32 elements

struct NormRowsArgs {
    int64_t rows, n, xrs, ors;  // row r of x at x + r * xrs, of out at out + r * ors (elements)
    float eps;
    int64_t rrs, hrs;  // add_rms_norm: row r of residual at residual + r * rrs, of h at h + r * hrs
};

// G threads per row (G <= kWarp: a group of lanes, kBlock / G rows a block; G == 0: the block is the row, of
// blockDim.x threads), P packs of V elements each per thread. kLayer: layer norm (mean subtracted, bias added).
// kRaw (16-bit only) keeps the loaded 16-byte packs (4 registers each, against 8 for their floats) and converts
// them again in each pass: 16-bit rows of 8 packs a thread at 1024 threads need it (64 floats would pass the
// 64-register cap); elsewhere it halves the registers a row holds, for more rows in flight.
template <int G, int P> constexpr int rows_threads() { return G != 0 ? kBlock : P <= 2 ? 256 : P <= 4 ? 512 : 1024; }

// kAdd (add_rms_norm): b is the residual and hout the output h; out, hout, x and b may alias pairwise (in place), so
// kAdd launches pass no restrict-qualified alias assumptions on them (the loads are ldg before any store of the same
// elements, by the same thread).
template <typename T, int G, int P, bool kLayer, bool kRaw, bool kAdd = false>
__global__ void __launch_bounds__(rows_threads<G, P>())
norm_rows_kernel(T *out, const T *x, const T *__restrict__ w, const T *b, NormRowsArgs a, T *hout = nullptr) {
    constexpr int V = Pack<T>::N;
    constexpr bool kBlockRow = G == 0;
    __shared__ float smem[kBlockRow ? kMaxThreadsPerBlock / kWarp : 1];
    const int g = kBlockRow ? (int)blockDim.x : G;
    const int gl = kBlockRow ? (int)threadIdx.x : (int)threadIdx.x % G;
    const int64_t row = kBlockRow ? (int64_t)blockIdx.x : (int64_t)blockIdx.x * (kBlock / G) + threadIdx.x / G;
    const bool live = row < a.rows;
    if ((kBlockRow || G == kWarp) && !live) return;  // a whole warp (or block) past the end
    const T *px = x + (live ? row : 0) * a.xrs + (int64_t)gl * V;
    T *po = out + row * a.ors + (int64_t)gl * V;
    const T *pr = kAdd ? b + (live ? row : 0) * a.rrs + (int64_t)gl * V : nullptr;
    T *ph = kAdd ? hout + row * a.hrs + (int64_t)gl * V : nullptr;
    const int64_t rem = a.n - (int64_t)gl * V;  // elements of the row from px on
    auto ok = [&](int p) { return live && (int64_t)p * g * V < rem; };
    auto reduce = [&](float v) {
        if constexpr (kBlockRow) return block_reduce(v, SumOp{}, 0.f, smem);
        else return fast_row_reduce<G, false>(v, smem);
    };

    static_assert(!kRaw || sizeof(T) == 2, "raw packs: 16-bit rows");
    uint4 raw[kRaw ? P : 1] = {};  // (each pack is stored before it is read: the zeros are optimised away)
    float v[kRaw ? 1 : P][V];
    // pack p's floats: from the registers, or converted again from the raw pack
    auto floats = [&](int p, float (&f)[V]) {
        if constexpr (kRaw) unpack_floats<T>(opaque(raw[p]), f);
        else
#pragma unroll
            for (int e = 0; e < V; ++e) f[e] = v[p][e];
    };
    float s = 0.f;
#pragma unroll
    for (int p = 0; p < P; ++p) {
        uint4 q = ok(p) ? oprt_vendor::ldg(reinterpret_cast<const uint4 *>(px + (int64_t)p * g * V))
                        : make_uint4(0u, 0u, 0u, 0u);
        float f[V];
        unpack_floats<T>(q, f);
        if constexpr (kAdd) {
            if (ok(p)) {  // h = x + residual, rounded to the dtype, stored, and normalised as stored
                float fr[V];
                unpack_floats<T>(oprt_vendor::ldg(reinterpret_cast<const uint4 *>(pr + (int64_t)p * g * V)), fr);
#pragma unroll
                for (int e = 0; e < V; ++e) f[e] += fr[e];
                const uint4 hq = pack_floats<T>(f);
                Pack<T> hp;
                memcpy(&hp, &hq, 16);
                store_pack(ph + (int64_t)p * g * V, hp);
                unpack_floats<T>(hq, f);
                q = hq;
            }
        }
        if constexpr (kRaw) raw[p] = q;
#pragma unroll
        for (int e = 0; e < V; ++e) {
            if constexpr (!kRaw) v[p][e] = f[e];
            s += kLayer ? f[e] : f[e] * f[e];
        }
    }
    s = reduce(s);
    const float inv_n = 1.f / (float)a.n;
    float mean = 0.f;
    if constexpr (kLayer) {
        mean = s * inv_n;
        float d2 = 0.f;
#pragma unroll
        for (int p = 0; p < P; ++p) {
            if (!ok(p)) continue;
            float f[V];
            floats(p, f);
#pragma unroll
            for (int e = 0; e < V; ++e) {
                const float d = f[e] - mean;
                d2 += d * d;
            }
        }
        s = reduce(d2);
    }
    const float r = rsqrtf(s * inv_n + a.eps);
#pragma unroll
    for (int p = 0; p < P; ++p) {
        if (!ok(p)) continue;
        const int64_t off = (int64_t)gl * V + (int64_t)p * g * V;
        float f[V], wf[V], bf[V], o[V];
        floats(p, f);
        unpack_floats<T>(oprt_vendor::ldg(reinterpret_cast<const uint4 *>(w + off)), wf);
        if constexpr (kLayer && !kAdd) unpack_floats<T>(oprt_vendor::ldg(reinterpret_cast<const uint4 *>(b + off)), bf);
#pragma unroll
        for (int e = 0; e < V; ++e) o[e] = kLayer ? (f[e] - mean) * r * wf[e] + bf[e] : f[e] * r * wf[e];
        const uint4 u = pack_floats<T>(o);
        Pack<T> q;
        memcpy(&q, &u, 16);
        store_pack(po + (int64_t)p * g * V, q);
    }
}

// Any layout: row r's elements at x + xo(r) + i * xi (out likewise, weight at w + i * ws, bias at b + i * bs).
struct NormGenericArgs {
    int64_t rows, n, xi, oi, ws, bs;
    float eps;
    Indexer<2> idx;  // the leading dims: row r -> (x offset, out offset)
};

// G == kWarp: a warp per row (kBlock / kWarp rows a block); G == kBlock: a block per row. Grid-stride over rows.
template <typename T, int G, bool kLayer>
__global__ void __launch_bounds__(kBlock)
norm_generic_kernel(T *__restrict__ out, const T *__restrict__ x, const T *__restrict__ w, const T *__restrict__ b,
                    NormGenericArgs a) {
    __shared__ float smem[kBlock / kWarp];
    constexpr int kRowsPerBlock = kBlock / G;
    const int gl = threadIdx.x % G;
    auto reduce = [&](float v) {
        if constexpr (G == kWarp) return warp_reduce(v, SumOp{});
        else return block_reduce(v, SumOp{}, 0.f, smem);
    };
    for (int64_t row = (int64_t)blockIdx.x * kRowsPerBlock + threadIdx.x / G; row < a.rows;
         row += (int64_t)gridDim.x * kRowsPerBlock) {
        int64_t off[2];
        a.idx.offsets(row, off);
        const T *px = x + off[1];
        T *po = out + off[0];
        const float inv_n = 1.f / (float)a.n;
        float mean = 0.f;
        if constexpr (kLayer) {
            float s = 0.f;
            for (int64_t i = gl; i < a.n; i += G) s += to_f(px[i * a.xi]);
            mean = reduce(s) * inv_n;
        }
        float s = 0.f;
        for (int64_t i = gl; i < a.n; i += G) {
            const float d = to_f(px[i * a.xi]) - mean;
            s += d * d;
        }
        const float r = rsqrtf(reduce(s) * inv_n + a.eps);
        for (int64_t i = gl; i < a.n; i += G) {
            float y = (to_f(px[i * a.xi]) - mean) * r * to_f(w[i * a.ws]);
            if constexpr (kLayer) y += to_f(b[i * a.bs]);
            po[i * a.oi] = from_f<T>(y);
        }
    }
}

// The block rows' packs a thread (0: by width, see the file comment) and whether 16-bit rows keep raw packs at
// fewer than 8 packs a thread: OPRT_NVIDIA_NORM_P=2|4|8 and OPRT_NVIDIA_NORM_RAW=0|1, read when a descriptor is
// created (the tune switches of the rows path).
struct NormConfig {
    int p = 0;
    bool raw = false;
};

struct NormState {
    oprt_rows_plan_t plan;
    NormConfig config;
};

NormConfig norm_config() {
    NormConfig c;
    if (const char *p = getenv("OPRT_NVIDIA_NORM_P")) c.p = atoi(p) == 2 || atoi(p) == 4 || atoi(p) == 8 ? atoi(p) : 0;
    if (const char *r = getenv("OPRT_NVIDIA_NORM_RAW")) c.raw = strcmp(r, "1") == 0;
    return c;
}

// The rows path's configuration for rows of np packs (see the file comment); false where it does not apply.
template <typename T, bool kLayer, bool kAdd = false>
bool launch_rows(gpuStream_t stream, T *out, const T *x, const T *w, const T *b, const NormRowsArgs &a,
                 const NormConfig &cfg, T *h = nullptr) {
    constexpr int V = Pack<T>::N;
    constexpr bool k16 = sizeof(T) == 2;
    const int64_t np = a.n / V;
    if (np > kRowsMaxPacks || a.rows > 0x7fffffff) return false;
    auto warp_rows = [&](auto kernel, int g) {
        const int64_t per_block = kBlock / g;
        kernel<<<(unsigned)((a.rows + per_block - 1) / per_block), kBlock, 0, stream>>>(out, x, w, b, a, h);
    };
    auto block_rows = [&](auto kernel, int p) {
        const int threads = (int)((np + p - 1) / p + kWarp - 1) / kWarp * kWarp;
        kernel<<<(unsigned)a.rows, threads, 0, stream>>>(out, x, w, b, a, h);
    };
    if (np <= 1) warp_rows(norm_rows_kernel<T, 1, 1, kLayer, false, kAdd>, 1);
    else if (np <= 2) warp_rows(norm_rows_kernel<T, 2, 1, kLayer, false, kAdd>, 2);
    else if (np <= 4) warp_rows(norm_rows_kernel<T, 4, 1, kLayer, false, kAdd>, 4);
    else if (np <= 8) warp_rows(norm_rows_kernel<T, 8, 1, kLayer, false, kAdd>, 8);
    else if (np <= 16) warp_rows(norm_rows_kernel<T, 16, 1, kLayer, false, kAdd>, 16);
    else if (np <= 32) warp_rows(norm_rows_kernel<T, 32, 1, kLayer, false, kAdd>, 32);
    else if (np <= 64) warp_rows(norm_rows_kernel<T, 32, 2, kLayer, false, kAdd>, 32);
    else {
        int p = np <= 512 ? 2 : np <= 2048 ? 4 : 8;
        const int64_t most = cfg.p == 2 ? rows_threads<0, 2>() : cfg.p == 4 ? rows_threads<0, 4>() : rows_threads<0, 8>();
        if (cfg.p != 0 && np <= most * cfg.p && np >= (int64_t)kWarp * cfg.p) p = cfg.p;  // within its launch bounds
        const bool raw = k16 && (p == 8 || cfg.raw);
        if (p == 2 && raw) block_rows(norm_rows_kernel<T, 0, 2, kLayer, k16, kAdd>, 2);
        else if (p == 2) block_rows(norm_rows_kernel<T, 0, 2, kLayer, false, kAdd>, 2);
        else if (p == 4 && raw) block_rows(norm_rows_kernel<T, 0, 4, kLayer, k16, kAdd>, 4);
        else if (p == 4) block_rows(norm_rows_kernel<T, 0, 4, kLayer, false, kAdd>, 4);
        else block_rows(norm_rows_kernel<T, 0, 8, kLayer, k16, kAdd>, 8);
    }
    return true;
}

template <typename T, bool kLayer>
oprt_status_t launch_norm(const NormState *st, void *out_, const void *x_, const void *w_, const void *b_,
                          gpuStream_t stream, const char *name) {
    const oprt_rows_plan_t *p = &st->plan;
    note_launch("none");
    if (p->numel == 0) return OPRT_STATUS_SUCCESS;
    T *out = static_cast<T *>(out_);
    const T *x = static_cast<const T *>(x_), *w = static_cast<const T *>(w_);
    const T *b = kLayer ? static_cast<const T *>(b_) : w;
    constexpr int64_t V = Pack<T>::N, S = sizeof(T);
    const int64_t n = p->n;
    // rows path: unit inner strides (or one element a row), one row stride, all of it 16-byte aligned
    const bool unit = n == 1 || (p->x_inner == 1 && p->out_inner == 1 && p->vec_strides[0] == 1 &&
                                 (!kLayer || p->vec_strides[1] == 1));
    const int64_t xrs = p->ndim == 1 ? p->x_strides[0] : 0, ors = p->ndim == 1 ? p->out_strides[0] : 0;
    const bool rows = unit && p->ndim <= 1 && n % V == 0 && (xrs * S) % 16 == 0 && (ors * S) % 16 == 0 &&
                      aligned16(x) && aligned16(out) && aligned16(w) && aligned16(b);
    if (rows && launch_rows<T, kLayer>(stream, out, x, w, b, NormRowsArgs{p->rows, n, xrs, ors, p->eps}, st->config)) {
        note_launch(n / V <= 64 ? "norm_rows_warp" : "norm_rows_block");
        return check_launch(name);
    }
    NormGenericArgs a{};
    a.rows = p->rows;
    a.n = n;
    a.xi = p->x_inner;
    a.oi = p->out_inner;
    a.ws = p->vec_strides[0];
    a.bs = kLayer ? p->vec_strides[1] : 0;
    a.eps = p->eps;
    a.idx.ndim = p->ndim;
    for (int i = 0; i < p->ndim; ++i) {
        a.idx.ext[i] = p->shape[i];
        a.idx.stride[0][i] = p->out_strides[i];
        a.idx.stride[1][i] = p->x_strides[i];
    }
    if (n <= 1024) {
        note_launch("norm_generic_warp");
        norm_generic_kernel<T, kWarp, kLayer><<<grid_for(p->rows, kBlock / kWarp, 8), kBlock, 0, stream>>>(
            out, x, w, b, a);
    } else {
        note_launch("norm_generic_block");
        norm_generic_kernel<T, kBlock, kLayer><<<grid_for(p->rows, 1, 8), kBlock, 0, stream>>>(out, x, w, b, a);
    }
    return check_launch(name);
}

}  // namespace

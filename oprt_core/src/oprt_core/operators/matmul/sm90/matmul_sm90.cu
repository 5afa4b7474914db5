// matmul_sm90.cu: the dispatcher of the CUTLASS sm_90 kernels (matmul_sm90_<dtype>.cu): which products qualify, which
// tile configuration each takes, and the run-time checks before a launch. matmul.cu calls it first where the build
// defines OPRT_HAS_CUTE and runs its tiled kernel wherever it declines. No CUTLASS header here.
//
// A product qualifies (plan) where
//  - the dtype is f16 or bf16, or f32 with allow_tf32 (TF32 products; f32 without it stays on the tiled kernel), or
//    e4m3 a and b with a bf16 out (fp8 products);
//  - M, N, K >= 1 and each of M, N, K and the batch fits an int;
//  - out has a unit stride along N (row-major) or along M (column-major, run as out^T = b^T a^T: a and b swap roles);
//  - in the kernel's view A is K-major and B N-major or K-major (the out-column-major swap keeps that: the kernel's A
//    is b^T, K-major where b is, and its B a^T, K-major where a is), each with its unit stride along the dim CUTLASS
//    expects, every other stride positive and a multiple of 16 bytes (TMA), and each contiguous extent (A's K, B's N
//    or K, D's N) a multiple of 16 bytes' worth of elements (CUTLASS's can_implement; e4m3 A and B: 16 elements, its
//    bf16 D: 8). TF32 and e4m3 WGMMA read both operands K-major: an N-major B of theirs is copied transposed into the
//    workspace at each launch (K x N elements a batch, against the product's 2 M N K flops; rows and batches of B
//    that do not overlap, any alignment) and the kernel reads the copy.
// Tile configuration, on the kernel's M and N, the batch L and the SM count (tiles(bm, bn) = ceil(M/bm) ceil(N/bn) L):
//  - small (64 x 128, ping-pong) where M <= 64: decode-like products, half the rows of a 128-row tile are not wasted;
//  - large (128 x 256, a cluster of 2 x 1) where tiles(128, 256) >= the SM count: every SM gets a large tile;
//  - mid (128 x 128) otherwise: twice the tiles, so more SMs work on products too small for the large tile.
// e4m3 tiles are 128 deep, and its large configuration a 128 x 128 tile in the 2 x 1 cluster (matmul_sm90_e4m3.cu
// says why); the rule choosing the configuration is the same.
// The tile scheduler: data-parallel (each persistent block takes whole tiles), swizzle 1, raster order CUTLASS's
// heuristic; the 16-bit large configuration's 256 x 128 tile, stream-K, a swizzle and a raster order are environment
// settings read at plan time (plan_scheduler).
// At launch (launch): the device's capability exactly 9.0 (an sm_90a cubin runs nowhere else), every pointer 16-byte
// aligned, C (beta != 0) row-major in the kernel's view with aligned strides, the workspace at least what was planned.
#include "matmul_sm90.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <mutex>
#include <set>
#include <string>

namespace oprt_sm90 {
namespace {

int itemsize(int32_t dtype) { return dtype == OPRT_DTYPE_F32 ? 4 : dtype == OPRT_DTYPE_F8E4M3 ? 1 : 2; }

bool fits_int(int64_t v) { return v >= 1 && v <= INT_MAX; }

// A stride in elements that TMA takes: positive, a multiple of 16 bytes.
bool tma_stride(int64_t s, int elems16) { return s > 0 && s % elems16 == 0; }
// A leading dimension: a TMA stride, rows that do not overlap (at least the contiguous extent).
bool leading_dim(int64_t ld, int64_t extent, int elems16) { return tma_stride(ld, elems16) && ld >= extent; }

bool aligned16(const void *p) { return (reinterpret_cast<uintptr_t>(p) & 15u) == 0; }

constexpr int kCopyTile = 32;  // the transposing copy: 32 x 32 tiles through shared memory, 32 x 8 threads
constexpr int64_t kMaxGridY = 65535;

// B (K x N, N-major: (l, j) at l * src_ld + j, batch b at b * src_bs) to dst, K-major and packed: (l, j) at j * K + l,
// batch b at b * N * K. Elements of E bytes copied as they are (e4m3, f32 bits).
template <typename E>
__global__ void transpose_b_kernel(E *dst, const E *src, int64_t k, int64_t n, int64_t src_ld, int64_t src_bs,
                                   int64_t batch) {
    __shared__ E tile[kCopyTile][kCopyTile + 1];
    const int64_t j0 = (int64_t)blockIdx.x * kCopyTile, l0 = (int64_t)blockIdx.y * kCopyTile;
    for (int64_t b = blockIdx.z; b < batch; b += gridDim.z) {
        const E *s = src + b * src_bs;
        E *d = dst + b * n * k;
        for (int r = threadIdx.y; r < kCopyTile; r += blockDim.y) {  // rows l of B, consecutive j a warp
            const int64_t l = l0 + r, j = j0 + threadIdx.x;
            if (l < k && j < n) tile[r][threadIdx.x] = s[l * src_ld + j];
        }
        __syncthreads();
        for (int r = threadIdx.y; r < kCopyTile; r += blockDim.y) {  // rows j of the copy, consecutive l a warp
            const int64_t j = j0 + r, l = l0 + threadIdx.x;
            if (j < n && l < k) d[j * k + l] = tile[threadIdx.x][r];
        }
        __syncthreads();
    }
}

template <typename E>
cudaError_t copy_b_k_major_as(const Plan &plan, void *dst, const void *src, cudaStream_t stream) {
    const Problem &q = plan.prob;
    const dim3 grid((unsigned)((q.n + kCopyTile - 1) / kCopyTile), (unsigned)((q.k + kCopyTile - 1) / kCopyTile),
                    (unsigned)(q.l < kMaxGridY ? q.l : kMaxGridY));
    transpose_b_kernel<E><<<grid, dim3(kCopyTile, 8), 0, stream>>>(static_cast<E *>(dst), static_cast<const E *>(src),
                                                                   q.k, q.n, plan.b_src_ld, plan.b_src_bs, q.l);
    return cudaGetLastError();
}

// B's K-major copy, its elements moved as bits: e4m3 bytes, TF32's f32 words
cudaError_t copy_b_k_major(const Plan &plan, void *dst, const void *src, cudaStream_t stream) {
    return plan.prob.in_dtype == OPRT_DTYPE_F8E4M3 ? copy_b_k_major_as<uint8_t>(plan, dst, src, stream)
                                                   : copy_b_k_major_as<uint32_t>(plan, dst, src, stream);
}

bool device_is_sm90(int *device) {
    constexpr int kMax = 64;
    static int cached[kMax];  // 0 unknown, 1 yes, 2 no; a benign race: every writer writes the same value
    int dev = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= kMax) {
        (void)cudaGetLastError();
        return false;
    }
    *device = dev;
    if (cached[dev] == 0) {
        int major = 0, minor = 0;
        bool ok = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev) == cudaSuccess &&
                  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev) == cudaSuccess;
        (void)cudaGetLastError();
        cached[dev] = ok && major == 9 && minor == 0 ? 1 : 2;
    }
    return cached[dev] == 1;
}

int64_t tiles(int64_t m, int64_t n, int64_t l, int64_t bm, int64_t bn) {
    return ((m + bm - 1) / bm) * ((n + bn - 1) / bn) * l;
}

// The tile scheduler's settings from the environment (read at plan time, so that the workspace planned is the one
// the launch uses): OPRT_NVIDIA_MATMUL_TILE=256x128 and OPRT_NVIDIA_MATMUL_STREAMK=1 (16-bit large configuration; the
// tile first), OPRT_NVIDIA_MATMUL_SWIZZLE=1|2|4|8, OPRT_NVIDIA_MATMUL_RASTER=m|n. Anything else keeps the default
// (128 x 256 data-parallel, 1, heuristic).
void plan_scheduler(Plan *out) {
    const bool large16 = out->config == kConfigLarge && out->prob.in_dtype != OPRT_DTYPE_F8E4M3 &&
                         out->prob.dtype != OPRT_DTYPE_F32;
    const char *v = getenv("OPRT_NVIDIA_MATMUL_TILE");
    out->tall = large16 && v != nullptr && strcmp(v, "256x128") == 0;
    v = getenv("OPRT_NVIDIA_MATMUL_STREAMK");
    out->stream_k = large16 && !out->tall && v != nullptr && strcmp(v, "1") == 0;
    v = getenv("OPRT_NVIDIA_MATMUL_SWIZZLE");
    const int sw = v != nullptr ? atoi(v) : 1;
    out->swizzle = sw == 2 || sw == 4 || sw == 8 ? sw : 1;
    v = getenv("OPRT_NVIDIA_MATMUL_RASTER");
    out->raster = v == nullptr                                  ? kRasterHeuristic
                  : strcmp(v, "m") == 0 || strcmp(v, "M") == 0 ? kRasterAlongM
                  : strcmp(v, "n") == 0 || strcmp(v, "N") == 0 ? kRasterAlongN
                                                               : kRasterHeuristic;
}

// A name made at run time, kept for the process's life (a launch note points at it).
const char *interned(const std::string &name) {
    static std::mutex lock;
    static auto *names = new std::set<std::string>;  // never freed: a note read during the process's exit stays valid
    std::lock_guard<std::mutex> hold(lock);
    return names->insert(name).first->c_str();
}

// The kernel column's name of a planned configuration (config_name), made once at plan time.
const char *make_name(const Plan &plan) {
    if (plan.config == kNone) return nullptr;
    // [e4m3, tf32, 16-bit][copied B][config]; e4m3 tiles are 128 deep (the same 128 bytes a row of a stage), its large
    // one 128 x 128 in a 2 x 1 cluster
    static const char *const names[3][2][3] = {
        {{"cutlass_sm90_128x128x128_2x1_ws_e4m3", "cutlass_sm90_128x128x128_ws_e4m3",
          "cutlass_sm90_64x128x128_pingpong_e4m3"},
         {"matmul_transpose_b+cutlass_sm90_128x128x128_2x1_ws_e4m3",
          "matmul_transpose_b+cutlass_sm90_128x128x128_ws_e4m3",
          "matmul_transpose_b+cutlass_sm90_64x128x128_pingpong_e4m3"}},
        {{"cutlass_sm90_128x256x32_ws_tf32", "cutlass_sm90_128x128x32_ws_tf32", "cutlass_sm90_64x128x32_pingpong_tf32"},
         {"matmul_transpose_b+cutlass_sm90_128x256x32_ws_tf32", "matmul_transpose_b+cutlass_sm90_128x128x32_ws_tf32",
          "matmul_transpose_b+cutlass_sm90_64x128x32_pingpong_tf32"}},
        {{"cutlass_sm90_128x256x64_ws", "cutlass_sm90_128x128x64_ws", "cutlass_sm90_64x128x64_pingpong"},
         {nullptr, nullptr, nullptr}},  // 16-bit WGMMA reads an N-major B as it is
    };
    const int kind = plan.prob.in_dtype == OPRT_DTYPE_F8E4M3 ? 0 : plan.prob.dtype == OPRT_DTYPE_F32 ? 1 : 2;
    const char *base = plan.tall ? "cutlass_sm90_256x128x64_1x2_ws" : names[kind][plan.b_copy ? 1 : 0][plan.config];
    if (!plan.stream_k && plan.swizzle <= 1 && plan.raster == kRasterHeuristic) return base;
    std::string name = base;
    if (plan.stream_k) name += "_streamk";
    if (plan.swizzle > 1) name += "_swizzle" + std::to_string(plan.swizzle);
    if (plan.raster != kRasterHeuristic) name += plan.raster == kRasterAlongM ? "_rasterM" : "_rasterN";
    return interned(name);
}

}  // namespace

void plan(const oprt_matmul_plan_t *p, int sm_count, Plan *out) {
    *out = Plan{};
    out->config = kNone;
    const bool tf32 = p->dtype == OPRT_DTYPE_F32;
    const bool fp8 = p->in_dtype == OPRT_DTYPE_F8E4M3;
    if (fp8 ? p->dtype != OPRT_DTYPE_BF16 : p->in_dtype != p->dtype) return;
    if (!(p->dtype == OPRT_DTYPE_F16 || p->dtype == OPRT_DTYPE_BF16 || (tf32 && p->allow_tf32))) return;
    if (!fits_int(p->m) || !fits_int(p->n) || !fits_int(p->k) || !fits_int(p->batch)) return;
    const int e16 = 16 / itemsize(p->in_dtype);  // A's and B's elements in 16 bytes
    const int d16 = 16 / itemsize(p->dtype);     // D's (and C's)
    const bool b_k_major_only = tf32 || fp8;     // their WGMMA reads both operands K-major
    Problem q{};
    q.dtype = p->dtype;
    q.in_dtype = p->in_dtype;
    q.k = p->k;
    q.l = p->batch;
    // the kernel's A (M x K), B (K x N) and D (M x N) as (rows stride, cols stride, batch stride)
    int64_t a_rs, a_cs, a_bs, b_rs, b_cs, b_bs, d_rs, d_bs;
    if (p->o_cs == 1 && !(p->n == 1 && p->o_rs == 1 && p->m > 1)) {  // out row-major
        q.m = p->m, q.n = p->n, q.swapped = 0;
        a_rs = p->a_rs, a_cs = p->a_cs, a_bs = p->a_bs;
        b_rs = p->b_rs, b_cs = p->b_cs, b_bs = p->b_bs;
        d_rs = p->o_rs, d_bs = p->o_bs;
    } else if (p->o_rs == 1) {  // out column-major: out^T = b^T a^T
        q.m = p->n, q.n = p->m, q.swapped = 1;
        a_rs = p->b_cs, a_cs = p->b_rs, a_bs = p->b_bs;
        b_rs = p->a_cs, b_cs = p->a_rs, b_bs = p->a_bs;
        d_rs = p->o_cs, d_bs = p->o_bs;
    } else {
        return;
    }
    // a batch stride for L = 1 is never used: any TMA-valid value (the operand's extent)
    if (q.l == 1) {
        a_bs = 0, b_bs = 0, d_bs = 0;
    }
    // A: K-major (unit stride along K); M = 1 takes any row stride
    if (a_cs != 1 || q.k % e16 != 0) return;
    q.a_rs = q.m == 1 ? q.k : a_rs;
    if (!leading_dim(q.a_rs, q.k, e16)) return;
    // B: N-major (unit stride along N) or K-major (unit stride along K); an N-major B of TF32 or e4m3 through its
    // K-major copy (rows and batches that do not overlap, so that the copy is no larger than B; K within the copy's
    // grid)
    bool copy = false;
    if (b_cs == 1 && q.n % e16 == 0 && leading_dim(b_rs, q.n, e16) && !b_k_major_only) {
        q.b_k_major = 0;
        q.b_ld = b_rs;
    } else if (b_rs == 1 && leading_dim(b_cs, q.k, e16)) {
        q.b_k_major = 1;
        q.b_ld = b_cs;
    } else if (b_cs == 1 && b_k_major_only && b_rs >= q.n && (q.l == 1 || b_bs >= q.k * b_rs) &&
               (q.k + kCopyTile - 1) / kCopyTile <= kMaxGridY) {
        copy = true;
        q.b_k_major = 1;
        q.b_ld = q.k;
    } else {
        return;
    }
    // D: row-major, N a multiple of 16 bytes
    if (q.n % d16 != 0) return;
    q.d_rs = q.m == 1 ? q.n : d_rs;
    if (!leading_dim(q.d_rs, q.n, d16)) return;
    if (q.l > 1) {
        if (!tma_stride(a_bs, e16) || (!copy && !tma_stride(b_bs, e16)) || !tma_stride(d_bs, d16)) return;
        q.a_bs = a_bs, q.b_bs = copy ? q.n * q.k : b_bs, q.d_bs = d_bs;
    } else {
        q.a_bs = q.m * q.a_rs, q.b_bs = (q.b_k_major ? q.n : q.k) * q.b_ld, q.d_bs = q.m * q.d_rs;
    }
    out->prob = q;
    if (copy) {
        out->b_copy = 1;
        out->b_src_ld = b_rs;
        out->b_src_bs = b_bs;  // 0 for one batch (set above)
        out->b_copy_bytes = ((size_t)(q.l * q.n * q.k) * itemsize(q.in_dtype) + 255) / 256 * 256;
    }
    if (q.m <= 64)
        out->config = kConfigSmall;
    else if (tiles(q.m, q.n, q.l, 128, 256) >= sm_count)
        out->config = kConfigLarge;
    else
        out->config = kConfigMid;
    out->sm_count = sm_count;
    plan_scheduler(out);
    out->name = make_name(*out);
    size_t cutlass = 0;
    if (fp8) {
        cutlass = workspace_e4m3(*out, sm_count);
    } else {
        switch (q.dtype) {
        case OPRT_DTYPE_F16: cutlass = workspace_f16(*out, sm_count); break;
        case OPRT_DTYPE_BF16: cutlass = workspace_bf16(*out, sm_count); break;
        default: cutlass = workspace_tf32(*out, sm_count); break;
        }
    }
    out->workspace = out->b_copy_bytes + cutlass;
}

const char *config_name(const Plan &plan) { return plan.config == kNone ? nullptr : plan.name; }

cudaError_t launch(const Plan &plan, void *out, const void *a, const void *b, const void *c, int64_t c_bs,
                   int64_t c_rs, int64_t c_cs, float alpha, float beta, void *workspace, size_t workspace_size,
                   cudaStream_t stream, bool *launched) {
    *launched = false;
    int device = 0;
    if (plan.config == kNone || !device_is_sm90(&device)) return cudaSuccess;
    if (plan.workspace > 0 && (workspace == nullptr || workspace_size < plan.workspace)) return cudaSuccess;
    const Problem &q = plan.prob;
    LaunchArgs la{};
    la.plan = &plan;
    la.device = device;
    la.sm_count = plan.sm_count;
    la.d = out;
    la.a = q.swapped ? b : a;
    la.b = q.swapped ? a : b;
    la.alpha = alpha;
    la.beta = beta;
    la.workspace = plan.b_copy ? static_cast<char *>(workspace) + plan.b_copy_bytes : workspace;
    la.stream = stream;
    // a copied B's source may sit anywhere
    if (!aligned16(out) || !aligned16(la.a) || (!plan.b_copy && !aligned16(la.b))) return cudaSuccess;
    if (beta == 0.f) {  // C is never read: D's pointer and strides stand in
        la.c = out;
        la.c_rs = q.d_rs;
        la.c_bs = q.d_bs;
    } else {
        const int e16 = 16 / itemsize(q.dtype);  // C is D's dtype
        const int64_t rs = q.swapped ? c_cs : c_rs, cs = q.swapped ? c_rs : c_cs;
        if (c == nullptr || !aligned16(c) || cs != 1) return cudaSuccess;
        la.c = c;
        la.c_rs = q.m == 1 ? q.d_rs : rs;
        la.c_bs = q.l == 1 ? q.m * la.c_rs : c_bs;
        if (!leading_dim(la.c_rs, q.n, e16) || !tma_stride(la.c_bs, e16)) return cudaSuccess;
    }
    if (plan.b_copy) {  // everything else qualified: B's K-major copy, then the kernel on it (same stream, in order)
        const cudaError_t err = copy_b_k_major(plan, workspace, la.b, stream);
        if (err != cudaSuccess) {
            *launched = true;
            return err;
        }
        la.b = workspace;
    }
    if (q.in_dtype == OPRT_DTYPE_F8E4M3) return run_e4m3(la, launched);
    switch (q.dtype) {
    case OPRT_DTYPE_F16: return run_f16(la, launched);
    case OPRT_DTYPE_BF16: return run_bf16(la, launched);
    default: return run_tf32(la, launched);
    }
}

}  // namespace oprt_sm90

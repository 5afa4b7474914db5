// elementwise.cu: copy, vector_add and the transposed copy: the library's kernels beside the driver's copy, a
// plain grid-stride stream kernel in other block shapes, load kinds and grids, and the library's transpose kernel
// in other tile shapes.
//   scripts/tune/build.sh elementwise && .tunebin/elementwise ['title|title...']
#include "elementwise.cuh"  // the library's transpose kernel, timed here in tile shapes it does not pick
#include "harness.cuh"

using namespace tune;

namespace {

// Load kinds of the stream kernel: plain, __ldg, __ldcs (streaming), an L2 evict_first policy (the library's).
enum Ld { kPlain, kLdg, kLdcs, kPolFirst };

template <int L> __device__ __forceinline__ uint4 ld(const uint4 *p) {
    if constexpr (L == kPlain) return *p;
    else if constexpr (L == kLdg) return __ldg(p);
    else if constexpr (L == kLdcs) return __ldcs(p);
    else return oprt_tune::ld_policy(p, oprt_tune::l2_policy(false));
}

__device__ __forceinline__ uint4 add4(uint4 a, uint4 b) {  // as floats: a timing candidate for every dtype
    float4 fa, fb;
    memcpy(&fa, &a, 16);
    memcpy(&fb, &b, 16);
    fa.x += fb.x, fa.y += fb.y, fa.z += fb.z, fa.w += fb.w;
    memcpy(&a, &fa, 16);
    return a;
}

// One tile of B*U packs per block: grid = tiles, or grid-stride over a persistent grid.
template <int B, int U, int L, int NIn>
__global__ void __launch_bounds__(B) stream_kernel(uint4 *__restrict__ o, const uint4 *__restrict__ a,
                                                   const uint4 *__restrict__ b, int64_t npacks) {
    const int64_t tiles = npacks / (B * U);  // sizes here are multiples of every tile
    for (int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        const int64_t i0 = t * (B * U) + threadIdx.x;
        uint4 va[U], vb[U];
#pragma unroll
        for (int u = 0; u < U; ++u) {
            va[u] = ld<L>(a + i0 + u * B);
            if (NIn == 2) vb[u] = ld<L>(b + i0 + u * B);
        }
#pragma unroll
        for (int u = 0; u < U; ++u) o[i0 + u * B] = NIn == 2 ? add4(va[u], vb[u]) : va[u];
    }
}

template <int B, int U, int L, int NIn>
Variant stream(const Env &env, void *o, const void *a, const void *b, int64_t bytes, bool persistent,
               bool unchecked = false) {
    static const char *kinds[] = {"plain", "ldg", "ldcs", "evict_first"};
    char name[64];
    snprintf(name, sizeof name, "stream B%d U%d %s%s", B, U, kinds[L], persistent ? " persistent" : "");
    const int64_t np = bytes / 16, tiles = np / (B * U);
    const unsigned grid = persistent ? (unsigned)std::min<int64_t>(tiles, (int64_t)env.sms * (2048 / B)) : (unsigned)tiles;
    auto *po = static_cast<uint4 *>(o);
    auto *pa = static_cast<const uint4 *>(a), *pb = static_cast<const uint4 *>(b);
    Variant v{name, [=] { stream_kernel<B, U, L, NIn><<<grid, B>>>(po, pa, pb, np); }};
    v.timing_only = unchecked;
    return v;
}

void contiguous(const Env &env) {
    const int64_t n = (int64_t)env.n;
    for (int32_t dt : {OPRT_DTYPE_F32, OPRT_DTYPE_F16}) {
        const bool half = dt == OPRT_DTYPE_F16;
        const int64_t elems = half ? 2 * n : n, bytes = n * 4;  // 512 MiB a tensor either way
        char title[64];
        snprintf(title, sizeof title, "copy %s %lld", half ? "f16" : "f32", (long long)elems);
        const oprt_tensor_desc_t t = tdesc(dt, {elems});
        run_group(env, title, 2.0 * bytes,
                  {lib_copy(env.out, env.a, t, t, "oprt_copy"), driver_copy(env.out, env.a, bytes),
                   stream<256, 1, kLdg, 1>(env, env.out, env.a, env.a, bytes, false),
                   stream<256, 4, kLdg, 1>(env, env.out, env.a, env.a, bytes, false),
                   stream<128, 1, kPlain, 1>(env, env.out, env.a, env.a, bytes, false),
                   stream<256, 1, kLdcs, 1>(env, env.out, env.a, env.a, bytes, false),
                   stream<256, 1, kPolFirst, 1>(env, env.out, env.a, env.a, bytes, false),
                   stream<256, 4, kLdg, 1>(env, env.out, env.a, env.a, bytes, true),
                   stream<1024, 2, kLdg, 1>(env, env.out, env.a, env.a, bytes, true)},
                  (size_t)n, 0);
        // the stream kernel adds floats: on 16-bit data its rows are timing only
        snprintf(title, sizeof title, "vector_add %s %lld", half ? "f16" : "f32", (long long)elems);
        run_group(env, title, 3.0 * bytes,
                  {lib_add(env.out, env.a, env.b, t), stream<256, 1, kLdg, 2>(env, env.out, env.a, env.b, bytes, false, half),
                   stream<128, 2, kLdg, 2>(env, env.out, env.a, env.b, bytes, false, half),
                   stream<256, 4, kLdg, 2>(env, env.out, env.a, env.b, bytes, false, half),
                   stream<256, 1, kPolFirst, 2>(env, env.out, env.a, env.b, bytes, false, half),
                   stream<256, 2, kLdg, 2>(env, env.out, env.a, env.b, bytes, true, half)},
                  (size_t)n, 0);
    }
    // the library's contiguous copy against the driver's, 16-bit, from 2 to 512 MiB
    for (int64_t mib : {2, 8, 32, 128, 512}) {
        char title[64];
        snprintf(title, sizeof title, "copy f16 %lld MiB sizes", (long long)mib);
        const int64_t bytes = mib << 20;
        const oprt_tensor_desc_t t = tdesc(OPRT_DTYPE_F16, {bytes / 2});
        run_group(env, title, 2.0 * bytes, {lib_copy(env.out, env.a, t, t, "oprt_copy"), driver_copy(env.out, env.a, bytes)},
                  (size_t)(bytes / 4), 0);
    }
}

// The library's transpose kernel in tile shapes it does not pick, beside oprt_copy of a transposed view.
template <typename T> void transposed(const Env &env, int64_t R) {
    constexpr bool kHalf = sizeof(T) == 2;
    char title[64];
    snprintf(title, sizeof title, "copy %s %lldx%lld transposed", kHalf ? "f16" : "f32", (long long)R, (long long)R);
    if (!env.wants(title)) return;
    const int32_t dt = kHalf ? OPRT_DTYPE_F16 : OPRT_DTYPE_F32;
    const T *x = kHalf ? reinterpret_cast<const T *>(to_half(env, env.b, R * R)) : reinterpret_cast<const T *>(env.a);
    T *o = reinterpret_cast<T *>(env.out);
    oprt_tune::TransposeArgs ta{};
    ta.R = R, ta.C = R, ta.x_sc = R, ta.o_sr = R, ta.batch = 1;
    ta.batch_idx.ndim = 0;
    auto tv = [&](auto kern, int tr, int tc, const char *name) {
        oprt_tune::TransposeArgs t = ta;
        t.tiles_r = R / tr, t.tiles_c = R / tc;
        const dim3 grid((unsigned)t.tiles_c, (unsigned)t.tiles_r, 1);
        return Variant{name, [=] { kern<<<grid, dim3(32, oprt_tune::kTransposeRows)>>>(o, x, t, oprt_tune::CopyOp{}); }};
    };
    using oprt_tune::CopyOp;
    using oprt_tune::ew_transpose_kernel;
    std::vector<Variant> vs = {lib_copy(o, x, tdesc(dt, {R, R}), tdesc(dt, {R, R}, {1, R}), "oprt_copy, transposed view")};
    if constexpr (kHalf) {
        vs.push_back(tv(ew_transpose_kernel<T, 64, 64, true, CopyOp>, 64, 64, "pairs 64 x 64"));
        vs.push_back(tv(ew_transpose_kernel<T, 128, 64, true, CopyOp>, 128, 64, "pairs 128 x 64"));
        vs.push_back(tv(ew_transpose_kernel<T, 128, 128, true, CopyOp>, 128, 128, "pairs 128 x 128"));
        vs.push_back(tv(ew_transpose_kernel<T, 64, 128, true, CopyOp>, 64, 128, "pairs 64 x 128"));
        vs.push_back(tv(ew_transpose_kernel<T, 64, 64, false, CopyOp>, 64, 64, "elements 64 x 64"));
    } else {
        vs.push_back(tv(ew_transpose_kernel<T, 64, 64, false, CopyOp>, 64, 64, "elements 64 x 64"));
        vs.push_back(tv(ew_transpose_kernel<T, 32, 32, false, CopyOp>, 32, 32, "elements 32 x 32"));
        vs.push_back(tv(ew_transpose_kernel<T, 128, 64, false, CopyOp>, 128, 64, "elements 128 x 64"));
    }
    // compared as floats: bit-exact copies (pairs of halves, no NaN among them)
    run_group(env, title, 2.0 * R * R * sizeof(T), vs, (size_t)(R * R * sizeof(T) / 4), 0);
}

}  // namespace

int main(int argc, char **argv) {
    const Env env = start(argc, argv);
    contiguous(env);
    transposed<float>(env, 8192);
    for (int64_t R : {4096, 8192}) transposed<__half>(env, R);
    return 0;
}

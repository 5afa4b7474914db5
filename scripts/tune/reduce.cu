// reduce.cu: reduce_sum: the library beside a read of its input (once, nothing summed) on every axis,
// and its column kernels (reduce_cols.cuh: the 2-D / 1-D blocks and the band tiles) in block shapes, chunkings and
// unrolls it does not pick, each followed by its finishing kernel as the library launches it.
//   scripts/tune/build.sh reduce && .tunebin/reduce ['title|title...']
#include "reduce_cols.cuh"
#include "harness.cuh"

using namespace tune;

namespace {

// Reads n 16-byte packs, U a thread, one tile a block, and writes a word only for a sum no input produces: what
// reading the input once costs, nothing summed.
template <int NT, int U> __global__ void __launch_bounds__(NT) read_only_kernel(unsigned *sink, const uint4 *p, int64_t n) {
    const int64_t i0 = (int64_t)blockIdx.x * NT * U + threadIdx.x;
    uint4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = i0 + u * NT < n ? __ldg(p + i0 + u * NT) : make_uint4(0, 0, 0, 0);
    unsigned acc = 0;
#pragma unroll
    for (int u = 0; u < U; ++u) acc += v[u].x ^ v[u].y ^ v[u].z ^ v[u].w;
    if (acc == 0x9e3779b9u) *sink = acc;
}

Variant read_only(const Env &, const void *x, int64_t bytes) {
    auto *sink = static_cast<unsigned *>(workspace(4));
    const int64_t n = bytes / 16;
    const unsigned grid = (unsigned)((n + 256 * 4 - 1) / (256 * 4));
    return timing_only(Variant{"read only (the input once, nothing summed)", [=] {
        read_only_kernel<256, 4><<<grid, 256>>>(sink, static_cast<const uint4 *>(x), n);
    }});
}

oprt_tune::ColsArgs cols_args(int64_t R, int64_t L, int64_t tile_cols, int64_t chunk) {
    oprt_tune::ColsArgs c{};
    c.outer = 1, c.inner = L, c.n = R, c.rs = L, c.o_si = 1;
    c.outer_idx.ndim = 0;
    c.tiles = (L + tile_cols - 1) / tile_cols;
    c.chunk = chunk;
    c.splits = (R + chunk - 1) / chunk;
    return c;
}

// reduce_cols_kernel in blocks of bx x by threads over chunks of `chunk` rows (1-D blocks: kRow), kUnroll rows in
// flight a thread, then reduce_cols_finish_kernel over the partial sums where the rows are split.
template <typename T, int kUnroll = 8>
Variant cols(T *o, const T *x, int64_t R, int64_t L, int bx, int by, int64_t chunk, float *ws) {
    constexpr int V = 16 / sizeof(T);
    const oprt_tune::ColsArgs c = cols_args(R, L, (int64_t)bx * V, chunk);
    const unsigned grid = (unsigned)(c.tiles * c.splits);
    char name[96];
    snprintf(name, sizeof name, "cols %dx%d chunk%lld U%d (%u blocks)", bx, by, (long long)chunk, kUnroll, grid);
    return Variant{name, [=] {
        if (by == 1) oprt_tune::reduce_cols_kernel<T, true, true, false, false, kUnroll><<<grid, dim3(bx, by)>>>(o, ws, x, c);
        else oprt_tune::reduce_cols_kernel<T, true, false, false, false, kUnroll><<<grid, dim3(bx, by)>>>(o, ws, x, c);
        if (c.splits > 1)
            CK(oprt_tune::launch_dependent(oprt_tune::reduce_cols_finish_kernel<T>, (unsigned)((L + 255) / 256), 256,
                                           (cudaStream_t)0, o, (const float *)ws, c));
    }};
}

// reduce_cols_band_kernel<T, BX, BY, U, K>: tiles of BY * U * K rows, then reduce_cols_band_finish_kernel.
template <typename T, int BX, int BY, int U, int K>
Variant band(T *o, const T *x, int64_t R, int64_t L, float *ws) {
    constexpr int V = 16 / sizeof(T);
    const oprt_tune::ColsArgs c = cols_args(R, L, (int64_t)BX * V, (int64_t)BY * U * K);
    const unsigned grid = (unsigned)(c.tiles * c.splits);
    char name[96];
    snprintf(name, sizeof name, "band %dx%d U%d K%d (%lld rows, %u blocks)", BX, BY, U, K, (long long)c.chunk, grid);
    return Variant{name, [=] {
        oprt_tune::reduce_cols_band_kernel<T, BX, BY, U, K><<<grid, dim3(BX, BY)>>>(ws, x, c);
        CK(oprt_tune::launch_dependent(oprt_tune::reduce_cols_band_finish_kernel<T>, (unsigned)((c.inner + 127) / 128),
                                       dim3(32, 8), (cudaStream_t)0, o, (const float *)ws, c));
    }};
}

template <typename T> void axis0(const Env &env, int64_t R, float *ws) {
    constexpr bool kHalf = sizeof(T) == 2;
    char title[64];
    snprintf(title, sizeof title, "reduce_sum %s %lldx%lld axis 0", kHalf ? "f16" : "f32", (long long)R, (long long)R);
    if (!env.wants(title)) return;
    const T *x = kHalf ? reinterpret_cast<const T *>(to_half(env, env.b, R * R)) : reinterpret_cast<const T *>(env.a);
    T *o = reinterpret_cast<T *>(env.out);
    const int32_t dt = kHalf ? OPRT_DTYPE_F16 : OPRT_DTYPE_F32;
    const int64_t bytes = R * R * (int64_t)sizeof(T);
    run_group(env, title, (double)bytes + R * sizeof(T),
              {lib_reduce(o, x, tdesc(dt, {R}), tdesc(dt, {R, R}), 0), read_only(env, x, bytes),
               cols(o, x, R, R, 32, 8, 1024, ws), cols(o, x, R, R, 32, 8, 512, ws), cols(o, x, R, R, 64, 4, 1024, ws),
               cols(o, x, R, R, 16, 16, 512, ws), cols(o, x, R, R, 256, 1, 512, ws), cols(o, x, R, R, 256, 1, 256, ws),
               cols<T, 16>(o, x, R, R, 256, 1, 512, ws), band<T, 16, 16, 8, 1>(o, x, R, R, ws),
               band<T, 16, 16, 4, 1>(o, x, R, R, ws), band<T, 32, 8, 8, 1>(o, x, R, R, ws),
               band<T, 16, 16, 8, 2>(o, x, R, R, ws)},
              (size_t)R, kHalf ? 2e-3 : 1e-3, kHalf);  // tol * (1 + |ref|): sums cancel to near 0
}

// The other axes: the library against the read floor.
template <typename T> void rows_and_all(const Env &env, int64_t R, int64_t L) {
    constexpr bool kHalf = sizeof(T) == 2;
    const T *x = nullptr;
    const int32_t dt = kHalf ? OPRT_DTYPE_F16 : OPRT_DTYPE_F32;
    const int64_t bytes = R * L * (int64_t)sizeof(T);
    T *o = reinterpret_cast<T *>(env.out);
    char title[64];
    snprintf(title, sizeof title, "reduce_sum %s %lldx%lld axis -1", kHalf ? "f16" : "f32", (long long)R, (long long)L);
    if (env.wants(title)) {
        x = kHalf ? reinterpret_cast<const T *>(to_half(env, env.b, R * L)) : reinterpret_cast<const T *>(env.a);
        run_group(env, title, (double)bytes + R * sizeof(T),
                  {lib_reduce(o, x, tdesc(dt, {R}), tdesc(dt, {R, L}), -1), read_only(env, x, bytes)}, (size_t)R,
                  kHalf ? 2e-3 : 1e-4, kHalf);
    }
    snprintf(title, sizeof title, "reduce_sum %s %lld axis all", kHalf ? "f16" : "f32", (long long)(R * L));
    if (env.wants(title)) {
        if (!x) x = kHalf ? reinterpret_cast<const T *>(to_half(env, env.b, R * L)) : reinterpret_cast<const T *>(env.a);
        const oprt_tensor_desc_t to = tdesc(dt, {});
        run_group(env, title, (double)bytes + sizeof(T),
                  {lib_reduce(o, x, to, tdesc(dt, {R * L}), OPRT_AXIS_ALL), read_only(env, x, bytes)}, 1,
                  kHalf ? 2e-3 : 1e-4, kHalf, true);
    }
}

}  // namespace

int main(int argc, char **argv) {
    const Env env = start(argc, argv);
    float *ws = static_cast<float *>(workspace((size_t)(16384 / 64 + 1) * 16384 * 4));  // splits x columns partials
    axis0<float>(env, 8192, ws);
    axis0<__half>(env, 8192, ws);
    axis0<__half>(env, 16384, ws);
    rows_and_all<float>(env, 8192, 8192);
    rows_and_all<__half>(env, 8192, 8192);
    rows_and_all<__half>(env, 16384, 16384);
    return 0;
}

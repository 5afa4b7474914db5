// harness.cuh: what every tune main shares: the cold timing loop, the output check, the library's entry points
// wrapped as variants, and the cudaMemcpy figure the percentages use.
//
// A group is a list of variants of one case (shape, dtype). Each variant is timed cold (a 256 MiB memset evicts L2
// before every sample, as oprt-bench and triton's do_bench do), the variants of a group interleaved round-robin so
// that clock drift hits them alike; the median of kReps samples is printed with GB/s (bytes: inputs read once,
// output written once) and % of the cudaMemcpy device-to-device figure measured at start-up. Inputs are uniform
// random (never zeros); every variant's output is checked against the first variant's before timing counts.
//
// Each main takes an optional filter: '|'-separated substrings of group titles. OPRT_TUNE_VARIANTS keeps only the
// variants whose names contain one of its '|'-separated substrings (the first, the check's reference, always
// runs), so that a variant that kills the context can be run alone.
//
// The mains are compiled with -Doprt_kernels=oprt_tune (build.sh): the library headers' kernels and launchers they
// include are their own copies; the two host functions those call are the library's (runtime.cu), forwarded below.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "oprt.h"
#include "oprt_layout.h"

#pragma push_macro("oprt_kernels")
#undef oprt_kernels
namespace oprt_kernels {
oprt_common::DeviceLimits device_limits();
bool cluster_launch_supported();
}  // namespace oprt_kernels
#pragma pop_macro("oprt_kernels")
#if defined(oprt_kernels)
namespace oprt_tune {
inline oprt_common::DeviceLimits device_limits() {
#pragma push_macro("oprt_kernels")
#undef oprt_kernels
    return oprt_kernels::device_limits();
#pragma pop_macro("oprt_kernels")
}
inline bool cluster_launch_supported() {
#pragma push_macro("oprt_kernels")
#undef oprt_kernels
    return oprt_kernels::cluster_launch_supported();
#pragma pop_macro("oprt_kernels")
}
}  // namespace oprt_tune
#endif

#define CK(x)                                                                                          \
    do {                                                                                               \
        cudaError_t e_ = (x);                                                                          \
        if (e_ != cudaSuccess) {                                                                       \
            fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));        \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

#define CKO(x)                                                                                         \
    do {                                                                                               \
        oprt_status_t s_ = (x);                                                                        \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                               \
            fprintf(stderr, "%s:%d %s: status %d: %s\n", __FILE__, __LINE__, #x, (int)s_,             \
                    oprt_last_error_message());                                                        \
            exit(1);                                                                                   \
        }                                                                                              \
    } while (0)

namespace tune {

constexpr int kReps = 25;
constexpr size_t kFlushBytes = 256ull << 20;

struct Variant {
    std::string name;
    std::function<void()> run;
    std::function<void()> pre = {};  // untimed, after the flush: e.g. a counter the variant needs zeroed
    bool timing_only = false;        // computes something else (a read floor, a float add of 16-bit data): not checked
};

inline Variant timing_only(Variant v) {
    v.timing_only = true;
    return v;
}

// Buffers and figures every group of a main uses.
struct Env {
    const char *filter = nullptr;
    int sms = 132;
    double peak_gbps = 0;  // cudaMemcpy D2D, bytes read + written
    size_t n = 1ull << 27;  // elements of f32 in each buffer (512 MiB)
    float *a = nullptr, *b = nullptr, *out = nullptr;
    void *flush = nullptr;
    bool wants(const char *title) const;
};

inline bool matches_any(const std::string &name, const char *list, bool empty_matches) {
    const std::string f(list);
    size_t start = 0;
    while (start <= f.size()) {
        size_t end = f.find('|', start);
        if (end == std::string::npos) end = f.size();
        if ((end > start || empty_matches) && name.find(f.substr(start, end - start)) != std::string::npos)
            return true;
        start = end + 1;
    }
    return false;
}

inline bool Env::wants(const char *title) const { return !filter || matches_any(title, filter, true); }

inline oprt_tensor_desc_t tdesc(int32_t dtype, std::vector<int64_t> shape, std::vector<int64_t> strides = {}) {
    oprt_tensor_desc_t t{};
    t.dtype = dtype;
    t.ndim = (int32_t)shape.size();
    int64_t run = 1;
    for (int i = t.ndim - 1; i >= 0; --i) {
        t.shape[i] = shape[i];
        t.strides[i] = strides.empty() ? run : strides[i];
        run *= shape[i];
    }
    return t;
}

inline void fill_random(float *d, size_t n, uint64_t seed, float lo, float hi) {
    std::vector<float> h(n);
    uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
    for (size_t i = 0; i < n; ++i) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        h[i] = lo + (hi - lo) * (float)((s >> 40) * (1.0 / 16777216.0));
    }
    CK(cudaMemcpy(d, h.data(), n * 4, cudaMemcpyHostToDevice));
}

__global__ void to_half_kernel(__half *h, const float *f, int64_t n, int64_t nf) {
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x)
        h[i] = __float2half_rn(f[i % nf]);
}

// n halves at h from env.a's floats (repeated past its length); h is another buffer than env.a.
inline __half *to_half(const Env &env, void *h, int64_t n) {
    to_half_kernel<<<1024, 256>>>(static_cast<__half *>(h), env.a, n, (int64_t)env.n);
    CK(cudaGetLastError());
    return static_cast<__half *>(h);
}

// Times the variants interleaved after checking each one's output against the first's: nout elements (floats, or
// halves with half_out), |got - ref| <= tol * (1 + |ref|), or tol * |ref| + 1e-7 with relative.
inline void run_group(const Env &env, const char *title, double bytes, std::vector<Variant> vs, size_t nout,
                      double tol, bool half_out = false, bool relative = false) {
    if (!env.wants(title)) return;
    if (const char *keep = getenv("OPRT_TUNE_VARIANTS")) {
        std::vector<Variant> kept{vs[0]};
        for (size_t i = 1; i < vs.size(); ++i)
            if (matches_any(vs[i].name, keep, false)) kept.push_back(vs[i]);
        vs = kept;
    }
    printf("\n## %s (%.0f MiB moved)\n", title, bytes / (1 << 20));
    void *out = env.out;
    std::vector<float> ref(nout), got(nout);
    std::vector<__half> hbuf(half_out ? nout : 0);
    std::vector<bool> bad(vs.size(), false);
    for (size_t i = 0; i < vs.size(); ++i) {
        CK(cudaMemset(out, 0xff, nout * (half_out ? 2 : 4)));  // NaN: an unwritten element fails the check
        if (vs[i].pre) vs[i].pre();
        vs[i].run();
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        std::vector<float> &dst = i == 0 ? ref : got;
        if (half_out) {
            CK(cudaMemcpy(hbuf.data(), out, nout * 2, cudaMemcpyDeviceToHost));
            for (size_t k = 0; k < nout; ++k) dst[k] = __half2float(hbuf[k]);
        } else {
            CK(cudaMemcpy(dst.data(), out, nout * 4, cudaMemcpyDeviceToHost));
        }
        if (i == 0 || vs[i].timing_only) continue;
        for (size_t k = 0; k < nout; ++k)
            if (!(std::fabs(got[k] - ref[k]) <= (relative ? tol * std::fabs(ref[k]) + 1e-7
                                                          : tol * (1 + std::fabs(ref[k]))))) {
                printf("  %-44s WRONG at %zu: %g vs %g\n", vs[i].name.c_str(), k, got[k], ref[k]);
                bad[i] = true;
                break;
            }
    }
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<std::vector<float>> ms(vs.size());
    for (int rep = 0; rep < kReps + 2; ++rep)
        for (size_t i = 0; i < vs.size(); ++i) {
            CK(cudaMemsetAsync(env.flush, rep & 0xff, kFlushBytes));
            if (vs[i].pre) vs[i].pre();
            CK(cudaEventRecord(e0));
            vs[i].run();
            CK(cudaEventRecord(e1));
            CK(cudaEventSynchronize(e1));
            float t;
            CK(cudaEventElapsedTime(&t, e0, e1));
            if (rep >= 2) ms[i].push_back(t);
        }
    CK(cudaEventDestroy(e0));
    CK(cudaEventDestroy(e1));
    for (size_t i = 0; i < vs.size(); ++i) {
        std::sort(ms[i].begin(), ms[i].end());
        const double med = ms[i][ms[i].size() / 2];
        const double gbps = bytes / (med * 1e-3) / 1e9;
        printf("  %-44s %9.4f ms %8.1f GB/s %6.1f%%%s\n", vs[i].name.c_str(), med, gbps, 100 * gbps / env.peak_gbps,
               bad[i] ? "  (WRONG)" : vs[i].timing_only ? "  (timing only)" : "");
    }
    fflush(stdout);
}

// The device, three 512 MiB buffers (a, b random in [-1, 1)), the flush buffer and the cudaMemcpy figure.
inline Env start(int argc, char **argv) {
    Env env;
    env.filter = argc > 1 ? argv[1] : nullptr;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    env.sms = prop.multiProcessorCount;
    printf("# %s, %d SMs, L2 %d MiB\n", prop.name, env.sms, prop.l2CacheSize >> 20);
    CK(cudaMalloc(&env.flush, kFlushBytes));
    CK(cudaMalloc(&env.a, env.n * 4));
    CK(cudaMalloc(&env.b, env.n * 4));
    CK(cudaMalloc(&env.out, env.n * 4));
    fill_random(env.a, env.n, 1, -1.f, 1.f);
    fill_random(env.b, env.n, 2, -1.f, 1.f);
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    std::vector<float> ms;
    for (int rep = 0; rep < kReps + 2; ++rep) {
        CK(cudaMemsetAsync(env.flush, 1, kFlushBytes));
        CK(cudaEventRecord(e0));
        CK(cudaMemcpyAsync(env.out, env.a, env.n * 4, cudaMemcpyDeviceToDevice));
        CK(cudaEventRecord(e1));
        CK(cudaEventSynchronize(e1));
        float t;
        CK(cudaEventElapsedTime(&t, e0, e1));
        if (rep >= 2) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    env.peak_gbps = 2.0 * env.n * 4 / (ms[ms.size() / 2] * 1e-3) / 1e9;
    printf("cudaMemcpy D2D 512 MiB: %.4f ms, %.1f GB/s (the 100%% below)\n", ms[ms.size() / 2], env.peak_gbps);
    return env;
}

// ---- the library's entry points (oprt.h), called exactly as the Python backend calls them --------------------

inline Variant lib_copy(void *o, const void *x, oprt_tensor_desc_t to, oprt_tensor_desc_t tx, const char *what) {
    oprt_copy_descriptor_t d;
    CKO(oprt_create_copy_descriptor(&d, &to, &tx));
    return Variant{std::string("library: ") + what, [=] { CKO(oprt_copy(d, nullptr, 0, o, x, nullptr)); }};
}

// The driver's device-to-device copy (what torch's copy_ of contiguous same-dtype tensors calls)
inline Variant driver_copy(void *dst, const void *src, size_t bytes) {
    return Variant{"cudaMemcpyAsync D2D", [=] { CK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice)); }};
}

inline Variant lib_add(void *o, const void *a, const void *b, oprt_tensor_desc_t t) {
    oprt_vector_add_descriptor_t d;
    CKO(oprt_create_vector_add_descriptor(&d, &t, &t, &t));
    return Variant{"library: oprt_vector_add", [=] { CKO(oprt_vector_add(d, nullptr, 0, o, a, b, nullptr)); }};
}

inline void *workspace(size_t bytes) {
    void *w = nullptr;
    if (bytes) CK(cudaMalloc(&w, bytes));
    return w;
}

inline Variant lib_softmax(void *o, const void *x, oprt_tensor_desc_t t, int32_t axis) {
    oprt_softmax_descriptor_t d;
    CKO(oprt_create_softmax_descriptor(&d, &t, &t, axis));
    size_t ws = 0;
    CKO(oprt_get_softmax_workspace_size(d, &ws));
    void *w = workspace(ws);
    return Variant{"library: oprt_softmax", [=] { CKO(oprt_softmax(d, w, ws, o, x, nullptr)); }};
}

inline Variant lib_reduce(void *o, const void *x, oprt_tensor_desc_t tout, oprt_tensor_desc_t tx, int32_t axis) {
    oprt_reduce_sum_descriptor_t d;
    CKO(oprt_create_reduce_sum_descriptor(&d, &tout, &tx, axis, 0));
    size_t ws = 0;
    CKO(oprt_get_reduce_sum_workspace_size(d, &ws));
    void *w = workspace(ws);
    return Variant{"library: oprt_reduce_sum", [=] { CKO(oprt_reduce_sum(d, w, ws, o, x, nullptr)); }};
}

}  // namespace tune

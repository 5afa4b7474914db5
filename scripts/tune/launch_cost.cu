// launch_cost.cu: where the host time of one launch goes (the host-overhead target of <= 10 us), in C, with no
// Python in the way. Median nanoseconds per call over batches of 200 calls (the clock read around the batch,
// the device synchronised between batches so the launch queue never fills), of:
//   the runtime's cheap calls (cudaGetLastError, cudaGetDevice), the library's per-launch extras;
//   an empty kernel through <<<>>>, through cudaLaunchKernel, and through the driver's cuLaunchKernel (found
//   with cudaGetDriverEntryPointByVersion, so nothing links libcuda), with the kernel's CUfunction looked up once;
//   the same with a 256-byte by-value argument (the library's kernels take structs of that order);
//   the library's own launches (oprt_relu, oprt_copy, oprt_softmax, oprt_reduce_sum on 64 x 128 f32, the
//   descriptors made once), the figure that scripts/host_profile.py's launcher() adds cffi to.
// If the library's launch sits at the empty <<<>>> launch plus ~0.1 us, its C side is at the floor; if
// cuLaunchKernel is well under <<<>>>, launching through the driver is worth building.
//
//   scripts/tune/build.sh launch_cost && .tunebin/launch_cost
// (scripts/gpu-suite.sh's `launch` phase builds and runs it.)
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "oprt.h"

namespace {

__global__ void empty_kernel(float *p) {
    if (p != nullptr && threadIdx.x == 1024) p[0] = 0.0f;  // never true: the launch is what is timed
}

struct Big {
    long long v[32];  // 256 bytes by value
};

__global__ void big_arg_kernel(float *p, Big b) {
    if (p != nullptr && threadIdx.x == 1024) p[0] = (float)b.v[threadIdx.x & 31];
}

#define CHECK(x)                                                                                      \
    do {                                                                                              \
        cudaError_t e_ = (x);                                                                         \
        if (e_ != cudaSuccess) {                                                                      \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));   \
            std::exit(1);                                                                             \
        }                                                                                             \
    } while (0)

#define OCHECK(x)                                                                                     \
    do {                                                                                              \
        oprt_status_t s_ = (x);                                                                       \
        if (s_ != OPRT_STATUS_SUCCESS) {                                                              \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, oprt_last_error_message()); \
            std::exit(1);                                                                             \
        }                                                                                             \
    } while (0)

template <typename F> double per_call_ns(F &&fn, int calls = 20000) {
    constexpr int kBatch = 200;
    for (int i = 0; i < kBatch; ++i) fn();
    CHECK(cudaDeviceSynchronize());
    std::vector<double> per;
    for (int b = 0; b < calls / kBatch; ++b) {
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < kBatch; ++i) fn();
        const auto t1 = std::chrono::steady_clock::now();
        per.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / kBatch);
        CHECK(cudaDeviceSynchronize());
    }
    std::sort(per.begin(), per.end());
    return per[per.size() / 2];
}

// A pure loop of dependent adds: this host's CPU speed, to compare figures from two hosts.
double host_speed_ns() {
    volatile long long sink = 0;
    return per_call_ns([&] {
        long long s = 0;
        for (int i = 0; i < 100; ++i) s += i ^ (s >> 3);
        sink = sink + s;
    });
}

oprt_tensor_desc_t contiguous(int64_t rows, int64_t cols) {
    oprt_tensor_desc_t d;
    std::memset(&d, 0, sizeof d);
    d.dtype = OPRT_DTYPE_F32;
    d.ndim = 2;
    d.shape[0] = rows;
    d.shape[1] = cols;
    d.strides[0] = cols;
    d.strides[1] = 1;
    return d;
}

}  // namespace

int main() {
    CHECK(cudaSetDevice(0));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    int rt = 0, drv = 0;
    CHECK(cudaRuntimeGetVersion(&rt));
    CHECK(cudaDriverGetVersion(&drv));
    std::printf("device %s, runtime %d, driver %d; median ns per call over batches of 200 (20000 calls)\n",
                prop.name, rt, drv);

    float *buf = nullptr, *out = nullptr;
    CHECK(cudaMalloc(&buf, 64 * 128 * sizeof(float)));
    CHECK(cudaMalloc(&out, 64 * 128 * sizeof(float)));
    CHECK(cudaMemset(buf, 0x3c, 64 * 128 * sizeof(float)));  // ~0.0115f in every word: not zeros

    // the driver's cuLaunchKernel without linking libcuda
    using LaunchFn = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                  CUstream, void **, void **);
    void *sym = nullptr;
    cudaDriverEntryPointQueryResult q;
    CHECK(cudaGetDriverEntryPointByVersion("cuLaunchKernel", &sym, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || sym == nullptr) {
        std::fprintf(stderr, "cuLaunchKernel: no driver entry point\n");
        return 1;
    }
    const LaunchFn cu_launch = reinterpret_cast<LaunchFn>(sym);
    cudaFunction_t f_empty = nullptr, f_big = nullptr;
    CHECK(cudaGetFuncBySymbol(&f_empty, reinterpret_cast<const void *>(empty_kernel)));
    CHECK(cudaGetFuncBySymbol(&f_big, reinterpret_cast<const void *>(big_arg_kernel)));

    Big big;
    for (int i = 0; i < 32; ++i) big.v[i] = i;
    void *args_empty[] = {&buf};
    void *args_big[] = {&buf, &big};

    int dev = 0;
    std::printf("%9.0f  pure C loop of 100 dependent adds (host speed)\n", host_speed_ns());
    std::printf("%9.0f  cudaGetLastError()\n", per_call_ns([] { (void)cudaGetLastError(); }));
    std::printf("%9.0f  cudaGetDevice()\n", per_call_ns([&] { (void)cudaGetDevice(&dev); }));
    std::printf("%9.0f  empty kernel <<<1, 32>>>\n", per_call_ns([&] { empty_kernel<<<1, 32>>>(buf); }));
    std::printf("%9.0f  empty kernel <<<1, 32>>> + cudaGetLastError()\n", per_call_ns([&] {
                    empty_kernel<<<1, 32>>>(buf);
                    (void)cudaGetLastError();
                }));
    std::printf("%9.0f  empty kernel, cudaLaunchKernel\n", per_call_ns([&] {
                    (void)cudaLaunchKernel(reinterpret_cast<const void *>(empty_kernel), dim3(1), dim3(32), args_empty,
                                           0, nullptr);
                }));
    std::printf("%9.0f  empty kernel, cuLaunchKernel (CUfunction found once)\n", per_call_ns([&] {
                    (void)cu_launch(reinterpret_cast<CUfunction>(f_empty), 1, 1, 1, 32, 1, 1, 0, nullptr, args_empty,
                                    nullptr);
                }));
    std::printf("%9.0f  256-byte argument kernel <<<1, 32>>>\n", per_call_ns([&] { big_arg_kernel<<<1, 32>>>(buf, big); }));
    std::printf("%9.0f  256-byte argument kernel, cuLaunchKernel\n", per_call_ns([&] {
                    (void)cu_launch(reinterpret_cast<CUfunction>(f_big), 1, 1, 1, 32, 1, 1, 0, nullptr, args_big,
                                    nullptr);
                }));
    std::printf("%9.0f  empty kernel <<<8192, 256>>> (grid of a 2^21-element op)\n",
                per_call_ns([&] { empty_kernel<<<8192, 256>>>(buf); }));
    CHECK(cudaGetLastError());

    // the library's launches on 64 x 128 f32, descriptors made once (what launcher() calls through cffi)
    const oprt_tensor_desc_t t = contiguous(64, 128);
    oprt_tensor_desc_t r = t;
    r.ndim = 1;
    r.shape[0] = 64;
    r.strides[0] = 1;
    oprt_relu_descriptor_t relu = nullptr;
    oprt_copy_descriptor_t copy = nullptr;
    oprt_softmax_descriptor_t softmax = nullptr;
    oprt_reduce_sum_descriptor_t rsum = nullptr;
    OCHECK(oprt_create_relu_descriptor(&relu, &t, &t, 0.0f));
    OCHECK(oprt_create_copy_descriptor(&copy, &t, &t));
    OCHECK(oprt_create_softmax_descriptor(&softmax, &t, &t, -1));
    OCHECK(oprt_create_reduce_sum_descriptor(&rsum, &r, &t, -1, 0));
    size_t ws = 0, sws = 0;
    OCHECK(oprt_get_reduce_sum_workspace_size(rsum, &ws));
    OCHECK(oprt_get_softmax_workspace_size(softmax, &sws));
    void *wsp = nullptr, *swsp = nullptr;
    if (ws) CHECK(cudaMalloc(&wsp, ws));
    if (sws) CHECK(cudaMalloc(&swsp, sws));
    std::printf("%9.0f  oprt_relu (64 x 128 f32)\n",
                per_call_ns([&] { (void)oprt_relu(relu, nullptr, 0, out, buf, nullptr); }));
    std::printf("%9.0f  oprt_copy (64 x 128 f32: cudaMemcpyAsync)\n",
                per_call_ns([&] { (void)oprt_copy(copy, nullptr, 0, out, buf, nullptr); }));
    std::printf("%9.0f  oprt_softmax (64 x 128 f32, axis -1)\n",
                per_call_ns([&] { (void)oprt_softmax(softmax, swsp, sws, out, buf, nullptr); }));
    std::printf("%9.0f  oprt_reduce_sum (64 x 128 f32, axis -1)\n",
                per_call_ns([&] { (void)oprt_reduce_sum(rsum, wsp, ws, out, buf, nullptr); }));
    CHECK(cudaDeviceSynchronize());
    OCHECK(oprt_destroy_relu_descriptor(relu));
    OCHECK(oprt_destroy_copy_descriptor(copy));
    OCHECK(oprt_destroy_softmax_descriptor(softmax));
    OCHECK(oprt_destroy_reduce_sum_descriptor(rsum));
    if (wsp) CHECK(cudaFree(wsp));
    if (swsp) CHECK(cudaFree(swsp));
    CHECK(cudaFree(buf));
    CHECK(cudaFree(out));
    return 0;
}

// softmax_split.cuh (tune only, session 19): softmax over axis 0 with softmax_cols_onchip_kernel's kXSplit mode: a
// strip's axis over ncl ticketed clusters that exchange their merged (max, sum) pairs through a workspace. Measured in
// session 19 (tune-s19-2.log, tune-s19-3-timeline.log; docs/performance.md "Session 19"): slower than the library's
// single cluster a strip at every shape tried, so it stays out of the library (the kernel mode stays in
// softmax_cols.cuh, next to kXPair's).
#pragma once

#include "softmax_cols.cuh"

namespace oprt_kernels {

// ---- a strip's axis over several clusters (session 19) ---------------------------------------------------------
// Session 19's diagnostics (tune-s19-1.log, f16 16384^2, each segment normalised alone, no exchange): 128-byte strips
// read and write at 79% of cudaMemcpy in strip order, 256-byte strips at 86.6% (as band order), 512-byte at 80%.
// A 256-byte strip of 16384 rows is 32 blocks of 512 rows (16 lanes x 256 threads x (12 + 20) rows, 128 KB):
// more than a cluster holds, so launch_cols_split puts ncl clusters on a strip (kXSplit).
// Workspace: the ticket counter (256 bytes), a flag a cluster (rounded up to 256 bytes), W (max, sum) pairs a
// cluster; the counter and the flags are zeroed before each launch (one cudaMemsetAsync), the pairs are written
// before their flag and never read before it.
template <typename T, int kLanes> size_t cols_split_workspace(int64_t clusters) {
    constexpr int W = kLanes * Pack<T>::N;
    const size_t flags = ((size_t)clusters * sizeof(unsigned) + 255) / 256 * 256;
    return kGroupTicketBytes + flags + (size_t)clusters * W * sizeof(float2);
}
// The clusters (cl blocks each, ncl a strip) and the workspace launch_cols_split needs for an axis of L rows (0:
// the shape does not qualify); the launcher's arithmetic, for descriptor creation.
template <typename T, int kLanes, int kThreads, int kRegRows, int kSmemRows>
size_t cols_split_workspace_for(int64_t L, int64_t inner, int64_t outer, int64_t ncl, int64_t *cl_out = nullptr) {
    constexpr int V = Pack<T>::N, W = kLanes * V;
    if (inner % V != 0 || L < 1 || inner < 1 || outer < 1 || ncl < 1) return 0;
    const int64_t total = cols_onchip_blocks<kLanes, kThreads, kRegRows, kSmemRows>(L);
    const int64_t cl = (total + ncl - 1) / ncl, strips = (inner + W - 1) / W;
    if (cl > 16 || outer > 0x7fffffff / strips || outer * strips > 0x7fffffff / (ncl * cl)) return 0;
    if (cl_out) *cl_out = cl;
    return cols_split_workspace<T, kLanes>(outer * strips * ncl);
}
// Launches softmax_cols_onchip_kernel<..., kXSplit>: ncl clusters of cl = ceil(blocks / ncl) <= 16 blocks a strip,
// blocks of at most RL * (kRegRows + kSmemRows) rows. The wait is safe as launch_cols_group's: a cluster's ticket
// (taken at its start) names its strip and part, every ticket below the highest taken is a running or finished
// cluster, and only the strip being ticketed waits on clusters not yet started (at most ncl - 1 of them), so a
// device that holds ncl clusters at once (checked here through cudaOccupancyMaxActiveClusters) always has room for
// the next ticket. ticket = false (tune only): the cluster's index names its strip (in-order dispatch assumed).
// False (nothing launched, no error pending; cols_cluster_refusal() says why) where the build, the shape, the
// workspace or the device does not allow it.
template <typename T, int kLanes, int kThreads, int kRegRows, int kSmemRows, int kMerge = 4>
bool launch_cols_split(cudaStream_t stream, T *out, const T *x, ColsClusterArgs a, int64_t outer, int64_t ncl,
                       void *ws, size_t ws_size, bool ticket = true, ColsProbe probe = {}) {
    constexpr int V = Pack<T>::N, W = kLanes * V;
    constexpr int64_t RL = kThreads / kLanes;
    const char *&why = cols_cluster_refusal();
    why = "shape or device";
    int64_t cl = 0;
    const size_t need = cols_split_workspace_for<T, kLanes, kThreads, kRegRows, kSmemRows>(a.L, a.inner, outer, ncl, &cl);
    if (!cluster_launch_supported() || need == 0) return false;
    why = "workspace too small";
    if (ws == nullptr || ws_size < need) return false;
    a.seg = (a.L + ncl * cl - 1) / (ncl * cl);
    a.seg = (a.seg + RL - 1) / RL * RL;  // <= a block's rows, a multiple of RL
    a.strips = (a.inner + W - 1) / W;
    a.stash = 0;
    a.ncl = ncl;
    const int64_t clusters = outer * a.strips * ncl;
    a.ticket = ticket ? static_cast<unsigned *>(ws) : nullptr;
    a.flags = reinterpret_cast<unsigned *>(static_cast<char *>(ws) + kGroupTicketBytes);
    const size_t zeroed = kGroupTicketBytes + ((size_t)clusters * sizeof(unsigned) + 255) / 256 * 256;
    a.xpairs = reinterpret_cast<float2 *>(static_cast<char *>(ws) + zeroed);
    auto kernel = softmax_cols_onchip_kernel<T, kLanes, kThreads, kRegRows, kSmemRows, false, true, kXSplit, kMerge>;
    static int built = 0;
    why = "not built for sm_90";
    if (!kernel_built_for_sm90((const void *)kernel, built)) return false;
    const size_t dyn = (size_t)kSmemRows * kThreads * 16;
    static int allowed16[kAttrDevices], allowed[kAttrDevices];
    cudaError_t err = cudaSuccess;
    if (cl > kMaxCluster)
        err = func_attribute_at_least((const void *)kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1,
                                      allowed16);
    if (err == cudaSuccess && dyn > 48 * 1024)
        err = func_attribute_at_least((const void *)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dyn,
                                      allowed);
    int fit = 0;
    if (err == cudaSuccess && ncl > 1) {
        cudaLaunchAttribute attr[2];
        const cudaLaunchConfig_t cfg = cluster_config(clusters * cl, kThreads, cl, dyn, stream, attr);
        err = cudaOccupancyMaxActiveClusters(&fit, (const void *)kernel, &cfg);
    }
    if (err != cudaSuccess) {
        (void)cudaGetLastError();
        why = cudaGetErrorString(err);
        return false;
    }
    why = "too few resident clusters";
    if (ncl > 1 && fit < ncl) return false;
    err = cudaMemsetAsync(ws, 0, zeroed, stream);
    if (err == cudaSuccess) err = launch_clusters(kernel, clusters * cl, kThreads, cl, dyn, stream, out, x, a, probe);
    if (err != cudaSuccess) (void)cudaGetLastError();
    why = err == cudaSuccess ? "" : cudaGetErrorString(err);
    return err == cudaSuccess;
}

}  // namespace oprt_kernels

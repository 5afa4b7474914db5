// softmax_pair.cuh (tune-only, session 8, never run): softmax over axis 0 with softmax_cols_onchip_kernel's
// kPair mode: the blocks covering a strip's axis are two clusters of up to 8 (clusters 2c and 2c + 1) that
// exchange their merged (max, sum) through global memory, instead of one cluster of up to 16.
//
// Why: session 8's timeline (tune-s8-10-timeline.log) found clusters of 16 keeping 209 blocks resident on
// average against 252 with clusters of 1 (a cluster of 16 needs 16 free block slots in one GPC), and that
// residency, not the barrier, is what the 16384-row case loses (kernel 360 us against 309 us). Clusters of
// 8 fit more of the GPCs' slots. The cost: a global round trip between the two clusters, and a wait that is
// safe only while the partner cluster gets scheduled: it is the next cluster launched, so with in-order
// dispatch it is resident or next in line (a tune experiment, not for the library as it stands).
#pragma once

#include "softmax_cols.cuh"

namespace oprt_kernels {

// slots: >= 2 * strips * W float2; flags: >= 2 * strips unsigned, never holding `epoch` before this launch.
template <typename T, int kRegRows, int kSmemRows, bool kStoreExp>
bool launch_cols_onchip_pair(cudaStream_t stream, T *out, const T *x, ColsClusterArgs a, float2 *slots,
                             unsigned *flags, unsigned epoch, ColsProbe extra = {}) {
    constexpr int kLanes = 8, kThreads = 256, V = Pack<T>::N, W = kLanes * V;
    constexpr int64_t RL = kThreads / kLanes, kCap = RL * (kRegRows + kSmemRows);
    const char *&why = cols_cluster_refusal();
    why = "shape or device";
    if (!cluster_launch_supported() || a.inner % V != 0 || a.L < 1) return false;
    const int64_t total = (a.L + kCap - 1) / kCap;
    if (total < 2 || total > 16) return false;
    const int64_t nb = (total + 1) / 2;  // blocks a cluster, two clusters a strip
    a.seg = (a.L + 2 * nb - 1) / (2 * nb);
    a.seg = (a.seg + RL - 1) / RL * RL;
    a.strips = (a.inner + W - 1) / W;
    a.stash = 0;
    extra.pair_slots = slots, extra.pair_flags = flags, extra.epoch = epoch;
    auto kernel = softmax_cols_onchip_kernel<T, kLanes, kThreads, kRegRows, kSmemRows, false, kStoreExp, kXPair>;
    static int allowed16[kAttrDevices], allowed[kAttrDevices];
    return launch_cols_clusters(kernel, allowed16, allowed, 2 * a.strips * nb, kThreads, nb,
                                (size_t)kSmemRows * kThreads * 16, stream, out, x, a, extra);
}

}  // namespace oprt_kernels

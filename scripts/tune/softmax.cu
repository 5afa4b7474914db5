// softmax.cu: softmax: the library beside its own kernels in configurations it does not pick: the fast-rows kernel
// (softmax_rows.cuh) in other group sizes, packs a lane and exp forms, the cluster-rows kernel for rows of 65536,
// and over axis 0 the on-chip cluster kernel (softmax_cols.cuh) in other register / shared-memory splits beside the
// stash kernel (the library's last fallback), with a cudaMemcpy of the same bytes as the floor.
//   scripts/tune/build.sh softmax && .tunebin/softmax ['title|title...']
#include "softmax_cols.cuh"  // includes softmax_rows.cuh
#include "harness.cuh"

using namespace tune;

namespace {

template <typename T, int G, int P, int kBlock, int kRaw>
Variant fast_rows(T *o, const T *x, int64_t rows, int64_t L) {
    char name[64];
    snprintf(name, sizeof name, "fast rows G%d P%d block%d raw%d", G, P, kBlock, kRaw);
    return Variant{name, [=] { oprt_tune::launch_fast_rows<T, G, P, kBlock, kRaw>(nullptr, o, x, {rows, L, L, L}); }};
}

template <typename T, int G, int P, int kRaw>
Variant cluster_rows(T *o, const T *x, int64_t rows, int64_t L) {
    char name[64];
    snprintf(name, sizeof name, "cluster rows G%d P%d raw%d", G, P, kRaw);
    return Variant{name, [=] {
        if (!oprt_tune::launch_fast_cluster_rows<T, G, P, kRaw>(nullptr, o, x, {rows, L, L, L})) {
            fprintf(stderr, "cluster launch refused\n");
            exit(1);
        }
    }};
}

// A launch that may be refused (shape, device, shared memory): said once; the output stays NaN and reads WRONG.
inline void refused(bool launched, const char *name) {
    if (launched) return;
    static std::string said;
    if (said != name) printf("  refused: %s: %s\n", name, oprt_tune::cols_cluster_refusal());
    said = name;
}

// The on-chip kernel with its cluster exchange by pushes (kXPush), kRegRows rows a thread in registers and kSmemRows
// in shared memory, its merges in order kMerge (cols_merge_stats; the library's: 4, max first), the clusters under the
// scheduling policy "load balancing" where balance (the library's for 16-bit clusters of fewer than 16 blocks).
template <typename T, int kLanes, int kThreads, int kRegRows, int kSmemRows, int kMerge = 4>
Variant onchip(T *o, const T *x, int64_t L, int64_t inner, bool balance = false) {
    char name[64];
    snprintf(name, sizeof name, "onchip lanes%d threads%d reg%d smem%d merge%d%s", kLanes, kThreads, kRegRows,
             kSmemRows, kMerge, balance ? " balanced" : "");
    const std::string nm(name);
    return Variant{name, [=] {
        oprt_tune::ClusterPolicyScope policy(balance ? cudaClusterSchedulingPolicyLoadBalancing
                                                     : cudaClusterSchedulingPolicyDefault);
        oprt_tune::ColsClusterArgs ca{L, inner, inner, inner, 0, 0, {}};
        refused(oprt_tune::launch_cols_onchip<T, kLanes, kThreads, kRegRows, kSmemRows, false, true, kMerge, oprt_tune::kXPush>(
                    nullptr, o, x, ca, 1),
                nm.c_str());
    }};
}

// The stash kernel: strips of kLanes packs, segments of seg rows, at most maxb blocks an SM.
template <typename T, int kLanes, int kThreads, int kUnroll>
Variant stash(T *o, const T *x, int64_t L, int64_t inner, int64_t seg, int maxb) {
    char name[64];
    snprintf(name, sizeof name, "stash lanes%d threads%d U%d seg%lld maxB%d", kLanes, kThreads, kUnroll, (long long)seg,
             maxb);
    const std::string nm(name);
    return Variant{name, [=] {
        oprt_tune::ColsClusterArgs ca{L, inner, inner, inner, 0, 0, {}};
        refused(oprt_tune::launch_cols_cluster<T, kLanes, kThreads, kUnroll, oprt_tune::kColsL2Hint>(
                    nullptr, o, x, ca, 1, seg, maxb, oprt_tune::kMaxCluster, true),
                nm.c_str());
    }};
}

void rows(const Env &env) {
    const int64_t nh = (int64_t)env.n;  // 256 MiB of f16
    __half *h = to_half(env, env.b, nh), *ho = reinterpret_cast<__half *>(env.out);
    const float *x = env.a;
    float *o = env.out;
    const double b32 = 2.0 * env.n * 4, b16 = 2.0 * nh * 2;
    auto lib = [](void *o, const void *x, int32_t dt, int64_t rows, int64_t L) {
        return lib_softmax(o, x, tdesc(dt, {rows, L}), -1);
    };
    int64_t r = env.n / 128;
    run_group(env, "softmax f32 rows of 128", b32,
              {lib(o, x, OPRT_DTYPE_F32, r, 128), fast_rows<float, 16, 2, 256, 0>(o, x, r, 128),
               fast_rows<float, 8, 4, 256, 0>(o, x, r, 128), fast_rows<float, 32, 1, 128, 0>(o, x, r, 128)},
              env.n, 1e-6);
    r = nh / 1024;
    run_group(env, "softmax f16 rows of 1024", b16,
              {lib(ho, h, OPRT_DTYPE_F16, r, 1024), fast_rows<__half, 32, 4, 256, 0>(ho, h, r, 1024),
               fast_rows<__half, 32, 4, 256, 1>(ho, h, r, 1024), fast_rows<__half, 16, 8, 256, 1>(ho, h, r, 1024),
               fast_rows<__half, 128, 1, 128, 0>(ho, h, r, 1024), fast_rows<__half, 64, 2, 64, 0>(ho, h, r, 1024)},
              (size_t)nh, 4e-3, true, true);
    r = nh / 16384;
    run_group(env, "softmax f16 rows of 16384", b16,
              {lib(ho, h, OPRT_DTYPE_F16, r, 16384), fast_rows<__half, 512, 4, 512, 0>(ho, h, r, 16384),
               fast_rows<__half, 256, 8, 256, 2>(ho, h, r, 16384), fast_rows<__half, 512, 4, 512, 2>(ho, h, r, 16384),
               fast_rows<__half, 128, 16, 128, 2>(ho, h, r, 16384)},
              (size_t)nh, 4e-3, true, true);
    r = env.n / 65536;
    run_group(env, "softmax f32 rows of 65536", b32,
              {lib(o, x, OPRT_DTYPE_F32, r, 65536), cluster_rows<float, 512, 8, 0>(o, x, r, 65536),
               cluster_rows<float, 256, 8, 0>(o, x, r, 65536), cluster_rows<float, 1024, 4, 0>(o, x, r, 65536),
               cluster_rows<float, 1024, 8, 0>(o, x, r, 65536)},
              env.n, 1e-6);
    r = nh / 65536;
    run_group(env, "softmax f16 rows of 65536", b16,
              {lib(ho, h, OPRT_DTYPE_F16, r, 65536), cluster_rows<__half, 512, 8, 2>(ho, h, r, 65536),
               cluster_rows<__half, 256, 8, 2>(ho, h, r, 65536), cluster_rows<__half, 1024, 4, 2>(ho, h, r, 65536),
               cluster_rows<__half, 128, 8, 1>(ho, h, r, 65536)},
              (size_t)nh, 4e-3, true, true);
}

template <typename T> void axis0(const Env &env, int64_t L, int64_t inner) {
    constexpr bool kHalf = sizeof(T) == 2;
    char title[64];
    snprintf(title, sizeof title, "softmax %s %lldx%lld axis 0", kHalf ? "f16" : "f32", (long long)L, (long long)inner);
    if (!env.wants(title)) return;
    const T *x = kHalf ? reinterpret_cast<const T *>(to_half(env, env.b, L * inner)) : reinterpret_cast<const T *>(env.a);
    T *o = reinterpret_cast<T *>(env.out);
    const int64_t bytes = L * inner * (int64_t)sizeof(T);
    constexpr int kReg = kHalf ? 12 : 16, kSmem = kHalf ? 20 : 16;  // the library's split
    constexpr int kReg2 = kHalf ? 16 : 12, kSmem2 = kHalf ? 16 : 20;  // the other dtype's
    run_group(env, title, 2.0 * bytes,
              {lib_softmax(o, x, tdesc(kHalf ? OPRT_DTYPE_F16 : OPRT_DTYPE_F32, {L, inner}), 0),
               timing_only(driver_copy(o, x, bytes)), onchip<T, 8, 256, kReg, kSmem>(o, x, L, inner),
               onchip<T, 8, 256, kReg, kSmem>(o, x, L, inner, true), onchip<T, 8, 256, kReg, kSmem, 2>(o, x, L, inner),
               onchip<T, 8, 256, kReg2, kSmem2>(o, x, L, inner), onchip<T, 8, 256, 8, 24>(o, x, L, inner),
               onchip<T, 16, 512, kReg, kSmem>(o, x, L, inner), stash<T, 8, 512, 4>(o, x, L, inner, 2048, 2),
               stash<T, 16, 512, 4>(o, x, L, inner, 2048, 2)},
              (size_t)(L * inner), kHalf ? 4e-3 : 1e-6, kHalf, kHalf);
}

}  // namespace

int main(int argc, char **argv) {
    const Env env = start(argc, argv);
    rows(env);
    axis0<float>(env, 16384, 8192);
    axis0<__half>(env, 16384, 8192);
    axis0<float>(env, 4096, 4096);
    axis0<__half>(env, 4096, 4096);
    return 0;
}

// oprt_layout.h: layout and launch arithmetic shared by the compiled backends (oprt_nvidia, oprt_metax).
// Header-only C++ (C++17), in the style of oprt_validate.h: host-side canonical layouts of the axis ops,
// the index decomposition kernels use, 16-byte packs, alignment and workspace checks and grid sizing.
//
// It names no CUDA or MACA type, call or header and assumes no warp width, so one copy serves the kernel
// sources (operators/*/*.cu, oprt_shared/*.cu) in both builds: oprt_nvidia's (nvcc) and oprt_metax's (mxcc, or
// nvcc through maca_cuda_shim.h). Everything that touches the device runtime, intrinsics or the warp width stays in the
// vendor headers (vendor.h) and common.cuh.
//
// One member runs on the device, Indexer::offsets. It is declared OPRT_DEVICE_INLINE, which the including
// backend defines before including this header (both backends: `__device__ __forceinline__`); without it
// (a host-only C++ compiler) it is plain `inline`.
//
// Names live in namespace oprt_common; a backend brings them into its own namespace with using-declarations
// (common.cuh). Free functions are `static inline`, as in oprt_validate.h, so two backend
// libraries loaded into one process never share (interpose) a symbol.
#ifndef OPRT_LAYOUT_H_
#define OPRT_LAYOUT_H_

#include <stddef.h>
#include <stdint.h>

#include "oprt.h"
#include "oprt_validate.h"

#ifndef OPRT_DEVICE_INLINE
#define OPRT_DEVICE_INLINE inline
#endif

namespace oprt_common {

// ---- launch arithmetic -----------------------------------------------------------------------------
static inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The smallest power-of-two multiple of lo that is >= n, clamped to hi.
static inline int pow2_clamp(int64_t n, int lo, int hi) {
    int v = lo;
    while (v < hi && v < n) v <<= 1;
    return v;
}

// What grid sizing needs of a device (each backend's runtime fills it from its own device query).
struct DeviceLimits {
    int sm_count;
    int max_threads_per_sm;
    int smem_per_sm;  // bytes of shared memory an SM has for its blocks (0: unknown)
};

// Blocks for a grid-stride kernel: enough to fill every SM `waves` times, never more than the work.
static inline unsigned grid_blocks(DeviceLimits lim, int64_t work_items, int threads, int waves) {
    int64_t per_sm = lim.max_threads_per_sm / threads;
    if (per_sm < 1) per_sm = 1;
    int64_t cap = (int64_t)lim.sm_count * per_sm * waves;
    int64_t need = (work_items + threads - 1) / threads;
    if (need < 1) need = 1;
    return (unsigned)(need < cap ? need : cap);
}

static inline bool aligned16(const void *p) { return ((uintptr_t)p & 15u) == 0; }

// Checks a workspace argument against the size a descriptor needs.
static inline oprt_status_t check_workspace(const char *op, size_t need, const void *ws, size_t size) {
    if (need == 0) return OPRT_STATUS_SUCCESS;
    if (size < need)
        return oprt_set_error(OPRT_STATUS_INSUFFICIENT_WORKSPACE,
                              "%s: workspace of %zu bytes is too small; the descriptor needs %zu "
                              "(oprt_get_%s_workspace_size)", op, size, need, op);
    if (ws == NULL)
        return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: workspace is NULL but %zu bytes are needed", op, need);
    return OPRT_STATUS_SUCCESS;
}

// ---- 16-byte packs: one 128-bit load/store per access (the loads and stores are the backend's) -------
template <typename T> struct alignas(16) Pack {
    static constexpr int N = 16 / sizeof(T);
    T v[N];
};

// ---- index decomposition over up to 8 dims (for layouts that do not merge) ----------------------------
// Maps a flat row-major index over `ext` to element offsets in up to K tensors.
template <int K> struct Indexer {
    int32_t ndim;
    int64_t ext[OPRT_MAX_NDIM];
    int64_t stride[K][OPRT_MAX_NDIM];

    OPRT_DEVICE_INLINE void offsets(int64_t idx, int64_t (&off)[K]) const {
#pragma unroll
        for (int k = 0; k < K; ++k) off[k] = 0;
        if (ndim == 1) {
#pragma unroll
            for (int k = 0; k < K; ++k) off[k] = idx * stride[k][0];
            return;
        }
        for (int d = ndim - 1; d >= 0; --d) {
            int64_t e = ext[d];
            int64_t q = idx / e, r = idx - q * e;
#pragma unroll
            for (int k = 0; k < K; ++k) off[k] += r * stride[k][d];
            idx = q;
        }
    }
};

// ---- host-side canonical layouts for the axis ops (reduce_sum, softmax) ------------------------------
// An axis op visits every index of its "kept" dims in any order, so those dims may be reordered,
// reversed (x and out together) and merged; the reduced dims of a sum may be too (addition commutes).
// Canonicalising lets one kernel serve every view that is a permutation of a dense buffer: e.g. a
// sum over axis -1 of a transposed view becomes a coalesced column sum.
struct Dim {
    int64_t ext;
    int64_t xs;  // stride in x (elements)
    int64_t os;  // stride in out (0 for reduced dims)
};

// Drops extent-1 dims, makes x strides non-negative (moving the base offsets), orders dims by x stride
// (largest first: row-major over x's memory, so the unit-stride dim, if any, ends up last) and merges
// neighbours that x and out both walk as one.
static inline void canonicalize(Dim *dims, int &n, int64_t &x_off, int64_t &o_off) {
    int m = 0;
    for (int i = 0; i < n; ++i) {
        Dim d = dims[i];
        if (d.ext == 1) continue;
        if (d.xs < 0) {
            x_off += (d.ext - 1) * d.xs;
            o_off += (d.ext - 1) * d.os;
            d.xs = -d.xs;
            d.os = -d.os;
        }
        dims[m++] = d;
    }
    n = m;
    for (int i = 1; i < n; ++i) {  // stable insertion sort, largest x stride first
        Dim d = dims[i];
        int j = i - 1;
        while (j >= 0 && dims[j].xs < d.xs) {
            dims[j + 1] = dims[j];
            --j;
        }
        dims[j + 1] = d;
    }
    m = 0;
    for (int i = 0; i < n; ++i) {
        if (m > 0) {
            Dim &p = dims[m - 1];
            if (p.xs == dims[i].xs * dims[i].ext && p.os == dims[i].os * dims[i].ext) {
                p.ext *= dims[i].ext;
                p.xs = dims[i].xs;
                p.os = dims[i].os;
                continue;
            }
        }
        dims[m++] = dims[i];
    }
    n = m;
}

// Fills an indexer over dims[0..n) with x strides in slot 0 and out strides in slot 1.
static inline Indexer<2> make_indexer(const Dim *dims, int n) {
    Indexer<2> idx{};
    idx.ndim = n;
    for (int i = 0; i < n; ++i) {
        idx.ext[i] = dims[i].ext;
        idx.stride[0][i] = dims[i].xs;
        idx.stride[1][i] = dims[i].os;
    }
    return idx;
}

}  // namespace oprt_common

#endif  // OPRT_LAYOUT_H_

// layout.h: host-side canonical layouts for the axis ops (reduce_sum, softmax).
//
// An axis op visits every index of its "kept" dims in any order, so those dims may be reordered,
// reversed (x and out together) and merged; the reduced dims of a sum may be too (addition commutes).
// Canonicalising lets one kernel serve every view that is a permutation of a dense buffer: e.g. a
// sum over axis -1 of a transposed view becomes a coalesced column sum.
#pragma once

#include "common.h"

namespace oprt_mx {

struct Dim {
    int64_t ext;
    int64_t xs;  // stride in x (elements)
    int64_t os;  // stride in out (0 for reduced dims)
};

// Drops extent-1 dims, makes x strides non-negative (moving the base offsets), orders dims by x stride
// (largest first: row-major over x's memory, so the unit-stride dim, if any, ends up last) and merges
// neighbours that x and out both walk as one.
inline void canonicalize(Dim *dims, int &n, int64_t &x_off, int64_t &o_off) {
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
inline Indexer<2> make_indexer(const Dim *dims, int n) {
    Indexer<2> idx{};
    idx.ndim = n;
    for (int i = 0; i < n; ++i) {
        idx.ext[i] = dims[i].ext;
        idx.stride[0][i] = dims[i].xs;
        idx.stride[1][i] = dims[i].os;
    }
    return idx;
}

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

inline int pow2_clamp(int64_t n, int lo, int hi) {
    int v = lo;
    while (v < hi && v < n) v <<= 1;
    return v;
}

}  // namespace oprt_mx

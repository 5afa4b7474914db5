// layout.cuh: host-side canonical layouts for the axis ops (reduce_sum, softmax).
//
// The code (Dim, canonicalize, make_indexer) is backend-independent and lives once in oprt_core's
// include folder, oprt_layout.h (included by common.cuh); this header names it in namespace oprt_nv.
#pragma once

#include "common.cuh"

namespace oprt_kernels {

using oprt_common::canonicalize;
using oprt_common::Dim;
using oprt_common::make_indexer;

}  // namespace oprt_kernels

// silu_mul.cu: oprt.h's silu_mul (entry points from oprt_entry.h around a plan and a launch): the elementwise paths
// of elementwise_launch.cuh.
#include "elementwise_launch.cuh"
#include "oprt_entry.h"

using namespace oprt_kernels;

namespace {
oprt_status_t plan_silu_mul(EwDesc *d, size_t *workspace, const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *gate,
                            const oprt_tensor_desc_t *up) {
    *workspace = 0;
    OPRT_CHECK(oprt_plan_silu_mul(&d->plan, out, gate, up));
    return plan_paths(d);
}

oprt_status_t run_silu_mul(const EwDesc *d, void *, void *out, const void *gate, const void *up, oprt_stream_t stream) {
    note_launch("none");
    return dispatch_dtype(d->plan.dtype, [&](auto tag) {
        return launch<decltype(tag), 2>(*d, out, gate, up, (gpuStream_t)stream, SiluMulOp{}, "silu_mul kernel");
    });
}
}  // namespace

extern "C" {
OPRT_DEFINE_OP(silu_mul, EwDesc, plan_silu_mul, run_silu_mul)
}  // extern "C"

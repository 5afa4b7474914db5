// rms_norm.cu: oprt.h's rms_norm (entry points from oprt_entry.h around a plan and a launch); the kernels
// and their paths are norm.cuh's.
#include "norm.cuh"
#include "oprt_entry.h"

using namespace oprt_kernels;

namespace {

oprt_status_t plan_rms_norm(NormState *s, size_t *workspace, const oprt_tensor_desc_t *out,
                            const oprt_tensor_desc_t *x, const oprt_tensor_desc_t *weight, float eps) {
    *workspace = 0;
    s->config = norm_config();
    return oprt_plan_rms_norm(&s->plan, out, x, weight, eps);
}

oprt_status_t run_rms_norm(const NormState *s, void *, void *out, const void *x, const void *weight,
                           oprt_stream_t stream) {
    return dispatch_dtype(s->plan.dtype, [&](auto tag) {
        return launch_norm<decltype(tag), false>(s, out, x, weight, nullptr, (gpuStream_t)stream, "rms_norm kernel");
    });
}

}  // namespace

extern "C" {
OPRT_DEFINE_OP(rms_norm, NormState, plan_rms_norm, run_rms_norm)
}  // extern "C"

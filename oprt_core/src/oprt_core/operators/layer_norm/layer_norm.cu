// layer_norm.cu: oprt.h's layer_norm (entry points from oprt_entry.h around a plan and a launch); the kernels
// and their paths are norm.cuh's.
#include "norm.cuh"
#include "oprt_entry.h"

using namespace oprt_kernels;

namespace {

oprt_status_t plan_layer_norm(NormState *s, size_t *workspace, const oprt_tensor_desc_t *out,
                              const oprt_tensor_desc_t *x, const oprt_tensor_desc_t *weight,
                              const oprt_tensor_desc_t *bias, float eps) {
    *workspace = 0;
    s->config = norm_config();
    return oprt_plan_layer_norm(&s->plan, out, x, weight, bias, eps);
}

oprt_status_t run_layer_norm(const NormState *s, void *, void *out, const void *x, const void *weight,
                             const void *bias, oprt_stream_t stream) {
    return dispatch_dtype(s->plan.dtype, [&](auto tag) {
        return launch_norm<decltype(tag), true>(s, out, x, weight, bias, (gpuStream_t)stream, "layer_norm kernel");
    });
}

}  // namespace

extern "C" {
OPRT_DEFINE_OP(layer_norm, NormState, plan_layer_norm, run_layer_norm)
}  // extern "C"

// relu.cu: oprt.h's relu (entry points from oprt_entry.h around a plan and a launch): the elementwise paths of
// elementwise_launch.cuh.
#include "elementwise_launch.cuh"
#include "oprt_entry.h"

using namespace oprt_kernels;

namespace {

struct ReluState {
    EwDesc d;
    float negative_slope;
};

oprt_status_t plan_relu(ReluState *s, size_t *workspace, const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *x,
                        float negative_slope) {
    *workspace = 0;
    OPRT_CHECK(oprt_plan_relu(&s->d.plan, out, x, negative_slope));
    s->negative_slope = negative_slope;
    return plan_paths(&s->d);
}

oprt_status_t run_relu(const ReluState *s, void *, void *out, const void *x, oprt_stream_t stream) {
    note_launch("none");
    return dispatch_dtype(s->d.plan.dtype, [&](auto tag) {
        using T = decltype(tag);
        return launch<T, 1>(s->d, out, x, NULL, (gpuStream_t)stream, ReluOp{s->negative_slope}, "relu kernel");
    });
}

}  // namespace

extern "C" {
OPRT_DEFINE_OP(relu, ReluState, plan_relu, run_relu)
}  // extern "C"

// vector_add.cu: oprt.h's vector_add (entry points from oprt_entry.h around a plan and a launch): the elementwise
// paths of elementwise_launch.cuh, inputs broadcast to out's shape.
#include "elementwise_launch.cuh"
#include "oprt_entry.h"

using namespace oprt_kernels;

namespace {

oprt_status_t plan_vector_add(EwDesc *d, size_t *workspace, const oprt_tensor_desc_t *out,
                              const oprt_tensor_desc_t *a, const oprt_tensor_desc_t *b) {
    *workspace = 0;
    OPRT_CHECK(oprt_plan_vector_add(&d->plan, out, a, b));
    return plan_paths(d);
}

oprt_status_t run_vector_add(const EwDesc *d, void *, void *out, const void *a, const void *b,
                             oprt_stream_t stream) {
    note_launch("none");
    return dispatch_dtype(d->plan.dtype, [&](auto tag) {
        using T = decltype(tag);
        return launch<T, 2>(*d, out, a, b, (gpuStream_t)stream, AddOp{}, "vector_add kernel");
    });
}

}  // namespace

extern "C" {
OPRT_DEFINE_OP(vector_add, EwDesc, plan_vector_add, run_vector_add)
}  // extern "C"

/* Generated from the op specs by oprt_core.cdecl (python -m oprt_core.cdecl --header); edit the specs,
 * not this. */
#ifndef OPRT_RMS_NORM_EXAMPLE_H_
#define OPRT_RMS_NORM_EXAMPLE_H_

#include "oprt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* OPRT_CDEF_BEGIN */
/* ---- rms_norm_example: out = x / sqrt(mean(x**2 over the last axis) + eps) * weight; weight has shape (x.shape[-1],) ----
 * eps (float): added to the mean of squares before the square root */
typedef struct oprt_rms_norm_example_descriptor *oprt_rms_norm_example_descriptor_t;
oprt_status_t oprt_create_rms_norm_example_descriptor(oprt_rms_norm_example_descriptor_t *desc,
                                                      const oprt_tensor_desc_t *out,
                                                      const oprt_tensor_desc_t *x,
                                                      const oprt_tensor_desc_t *weight, float eps);
oprt_status_t oprt_get_rms_norm_example_workspace_size(oprt_rms_norm_example_descriptor_t desc, size_t *size);
oprt_status_t oprt_rms_norm_example(oprt_rms_norm_example_descriptor_t desc, void *workspace,
                                    size_t workspace_size, void *out, const void *x, const void *weight,
                                    oprt_stream_t stream);
oprt_status_t oprt_destroy_rms_norm_example_descriptor(oprt_rms_norm_example_descriptor_t desc);
/* OPRT_CDEF_END */

#ifdef __cplusplus
}
#endif

#endif /* OPRT_RMS_NORM_EXAMPLE_H_ */

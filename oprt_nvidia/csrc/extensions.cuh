// extensions.cuh: the nvidia library's C functions outside oprt.h (runtime.cu defines them). setup.py hands the
// declarations between the OPRT_NV_CDEF markers to cffi (the extension's cdef and its C source), so this file is
// their one source: a definition that drifts from it fails to compile here, and the extension sees the same text.
#pragma once

#include "oprt.h"

extern "C" {
// OPRT_NV_CDEF_BEGIN
oprt_status_t oprt_nvidia_last_launch(char *buf, size_t size);
// OPRT_NV_CDEF_END
}

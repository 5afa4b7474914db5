// extensions.cuh: the library's C functions outside oprt.h (runtime.cu defines them), named after the backend.
// oprt_nvidia's setup.py hands the declarations between the OPRT_NV_CDEF markers to cffi (the extension's cdef and
// its C source), so this file is their one source: a definition that drifts from it fails to compile here, and the
// extension sees the same text. The MetaX build defines the same function as oprt_metax_last_launch.
#pragma once

#include "oprt.h"

extern "C" {
#if defined(OPRT_VENDOR_MACA)
oprt_status_t oprt_metax_last_launch(char *buf, size_t size);
#define OPRT_LAST_LAUNCH oprt_metax_last_launch
#define OPRT_LAST_LAUNCH_NAME "oprt_metax_last_launch"
#else
// OPRT_NV_CDEF_BEGIN
oprt_status_t oprt_nvidia_last_launch(char *buf, size_t size);
// OPRT_NV_CDEF_END
#define OPRT_LAST_LAUNCH oprt_nvidia_last_launch
#define OPRT_LAST_LAUNCH_NAME "oprt_nvidia_last_launch"
#endif
}

/*
 * oprt_host.c: a CPU implementation of the whole oprt.h, for tests.
 *
 * Built by tests/oprt_core/conftest.py with the system C compiler into a shared
 * library and driven through oprt_core.compiled.CompiledBackend (cffi ABI mode),
 * so the generic backend, the status mapping and the shared validation in
 * oprt_validate.h are tested without a GPU.
 *
 *   cc -std=gnu11 -O2 -shared -fPIC -I<oprt_core include dir> oprt_host.c -o liboprt_host.so -lm
 *
 * "Device" memory is host malloc, memcpy/memset are memcpy/memset, streams and
 * events are host objects, and there is one device named "host-cpu". Each op is a
 * plan function and a launch function behind oprt_entry.h's OPRT_DEFINE_OP, which
 * makes its four entry points and their checks.
 *
 * Test knobs (environment variables, read at call time):
 *   OPRT_HOST_DEVICE_COUNT=N      report N devices (0: no device; set_device and
 *                                 get_device_properties then return OPRT_STATUS_NO_DEVICE)
 *   OPRT_HOST_UNSUPPORTED_OPS=a,b oprt_create_<op>_descriptor of the listed ops
 *                                 returns OPRT_STATUS_UNSUPPORTED_CASE
 *   OPRT_HOST_FAULT_OPS=a,b       a launch of the listed ops returns OPRT_STATUS_DEVICE_FAULT, as a
 *                                 kernel's illegal address does on a GPU; the fault is sticky: from
 *                                 then on every device call (synchronize, memory, streams, events,
 *                                 launches) returns it too, while the variable stays set (unsetting it
 *                                 ends the fault, so one test library serves the other tests)
 *
 * Kernels compute in f32 (f16/bf16 widened, one round-to-nearest-even back);
 * copy moves bytes unchanged; reduce_sum needs a workspace of one f32 per output
 * element (it accumulates in f64 on the host, see host_reduce_sum); softmax subtracts
 * the row maximum.
 */
#define OPRT_IMPLEMENTATION
#include "oprt_validate.h"
#include "oprt_entry.h"

#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define HOST_MAX_ALLOC ((size_t)1 << 46) /* 64 TiB: anything above is "out of memory" */

/* ------------------------------------------------------------------------- */
/* float conversions (round to nearest even)                                   */

static inline uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float bits_f32(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1Fu;
    uint32_t m = h & 0x3FFu;
    if (e == 0x1F) return bits_f32(sign | 0x7F800000u | (m << 13));
    if (e == 0) {
        if (m == 0) return bits_f32(sign);
        e = 113; /* normalise the subnormal */
        while (!(m & 0x400u)) {
            m <<= 1;
            --e;
        }
        m &= 0x3FFu;
        return bits_f32(sign | (e << 23) | (m << 13));
    }
    return bits_f32(sign | ((e + 112) << 23) | (m << 13));
}

static inline uint16_t f32_to_f16(float f) {
    uint32_t x = f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7FFFFFFFu;
    if (ax >= 0x7F800000u) /* inf or NaN (kept quiet) */
        return (uint16_t)(sign | 0x7C00u | (ax > 0x7F800000u ? 0x200u | ((ax >> 13) & 0x3FFu) : 0u));
    uint32_t e = ax >> 23;
    if (e > 142) return (uint16_t)(sign | 0x7C00u); /* >= 2^16: overflow */
    if (e < 102) return sign;                      /* < 2^-25: rounds to zero */
    uint32_t mant = ax & 0x7FFFFFu;
    if (e < 113) { /* f16 subnormal: units of 2^-24 */
        uint32_t m = mant | 0x800000u;
        uint32_t shift = 126 - e; /* 14..24 */
        uint32_t r = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
        if (rem > half || (rem == half && (r & 1u))) ++r;
        return (uint16_t)(sign | r);
    }
    uint32_t h = ((e - 112) << 10) | (mant >> 13);
    uint32_t rem = mant & 0x1FFFu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h; /* a carry into the exponent is right, up to inf */
    return (uint16_t)(sign | h);
}

static inline float bf16_to_f32(uint16_t b) { return bits_f32((uint32_t)b << 16); }

static inline uint16_t f32_to_bf16(float f) {
    uint32_t x = f32_bits(f);
    if ((x & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((x >> 16) | 0x40u); /* quiet NaN */
    x += 0x7FFFu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static inline float load_f(const char *base, int64_t elem, int32_t dtype) {
    switch (dtype) {
    case OPRT_DTYPE_F32: {
        float v;
        memcpy(&v, base + elem * 4, 4);
        return v;
    }
    case OPRT_DTYPE_F16: {
        uint16_t v;
        memcpy(&v, base + elem * 2, 2);
        return f16_to_f32(v);
    }
    default: {
        uint16_t v;
        memcpy(&v, base + elem * 2, 2);
        return bf16_to_f32(v);
    }
    }
}

static inline void store_f(char *base, int64_t elem, int32_t dtype, float v) {
    switch (dtype) {
    case OPRT_DTYPE_F32: memcpy(base + elem * 4, &v, 4); break;
    case OPRT_DTYPE_F16: {
        uint16_t h = f32_to_f16(v);
        memcpy(base + elem * 2, &h, 2);
        break;
    }
    default: {
        uint16_t h = f32_to_bf16(v);
        memcpy(base + elem * 2, &h, 2);
        break;
    }
    }
}

/* ------------------------------------------------------------------------- */
/* knobs and devices                                                          */

static int32_t host_device_count(void) {
    const char *env = getenv("OPRT_HOST_DEVICE_COUNT");
    if (env == NULL || *env == '\0') return 1;
    char *end = NULL;
    long n = strtol(env, &end, 10);
    if (end == env || n < 0) return 1;
    return n > 64 ? 64 : (int32_t)n;
}

static int host_env_names(const char *var, const char *op) {
    const char *env = getenv(var);
    if (env == NULL) return 0;
    size_t n = strlen(op);
    const char *p = env;
    while (*p) {
        while (*p == ',' || *p == ' ') ++p;
        const char *q = p;
        while (*q && *q != ',' && *q != ' ') ++q;
        if ((size_t)(q - p) == n && strncmp(p, op, n) == 0) return 1;
        p = q;
    }
    return 0;
}

static int host_op_unsupported(const char *op) { return host_env_names("OPRT_HOST_UNSUPPORTED_OPS", op); }

/* the sticky fault of OPRT_HOST_FAULT_OPS: set by a faulting launch, lasting while the variable is set */
static int host_faulted = 0;

static oprt_status_t host_check_faulted(const char *func) {
    const char *env = getenv("OPRT_HOST_FAULT_OPS");
    if (env == NULL || *env == '\0') host_faulted = 0;
    if (host_faulted)
        return oprt_set_error(OPRT_STATUS_DEVICE_FAULT, "%s: an illegal memory access was encountered earlier "
                              "(OPRT_HOST_FAULT_OPS; sticky: the device context is unusable)", func);
    return OPRT_STATUS_SUCCESS;
}

static oprt_status_t host_fault_launch(const char *func) {
    OPRT_CHECK(host_check_faulted(func));
    const char *op = strncmp(func, "oprt_", 5) == 0 ? func + 5 : func;
    if (host_env_names("OPRT_HOST_FAULT_OPS", op)) {
        host_faulted = 1;
        return oprt_set_error(OPRT_STATUS_DEVICE_FAULT, "%s: an illegal memory access was encountered "
                              "(OPRT_HOST_FAULT_OPS; sticky: the device context is unusable)", func);
    }
    return OPRT_STATUS_SUCCESS;
}

#define HOST_CHECK_UNSUPPORTED(op)                                                                 \
    do {                                                                                           \
        if (host_op_unsupported(op))                                                               \
            return oprt_set_error(OPRT_STATUS_UNSUPPORTED_CASE,                                    \
                                  "%s is not supported by this library (OPRT_HOST_UNSUPPORTED_OPS)", op); \
    } while (0)

static oprt_status_t host_need_device(const char *func) {
    OPRT_CHECK(host_check_faulted(func));
    if (host_device_count() == 0)
        return oprt_set_error(OPRT_STATUS_NO_DEVICE, "%s: no host device (OPRT_HOST_DEVICE_COUNT=0)", func);
    return OPRT_STATUS_SUCCESS;
}

static oprt_status_t host_check_device_index(int32_t device, const char *func) {
    OPRT_CHECK(host_need_device(func));
    int32_t n = host_device_count();
    if (device < 0 || device >= n)
        return oprt_set_error(OPRT_STATUS_BAD_DEVICE, "%s: device index %d is out of range (valid: 0..%d)", func,
                              (int)device, (int)n - 1);
    return OPRT_STATUS_SUCCESS;
}

static int32_t host_current_device = 0;

oprt_status_t oprt_get_library_info(oprt_library_info_t *info) {
    OPRT_CHECK_NOT_NULL(info);
    memset(info, 0, sizeof *info);
    info->abi_version = OPRT_ABI_VERSION;
    snprintf(info->backend, sizeof info->backend, "host");
    snprintf(info->flavour, sizeof info->flavour, "host-c");
#if defined(__clang__)
    snprintf(info->toolchain, sizeof info->toolchain, "%s", __VERSION__);
#elif defined(__GNUC__)
    snprintf(info->toolchain, sizeof info->toolchain, "gcc %s", __VERSION__);
#else
    snprintf(info->toolchain, sizeof info->toolchain, "cc");
#endif
#if defined(__x86_64__)
    snprintf(info->architectures, sizeof info->architectures, "x86_64");
#elif defined(__aarch64__)
    snprintf(info->architectures, sizeof info->architectures, "aarch64");
#else
    snprintf(info->architectures, sizeof info->architectures, "host");
#endif
    snprintf(info->runtime_version, sizeof info->runtime_version, "host-runtime %d", OPRT_ABI_VERSION);
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_get_device_count(int32_t *count) {
    OPRT_CHECK_NOT_NULL(count);
    *count = host_device_count();
    if (*count == 0) oprt_set_error(OPRT_STATUS_NO_DEVICE, "no host device (OPRT_HOST_DEVICE_COUNT=0)");
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_set_device(int32_t device) {
    OPRT_CHECK(host_check_device_index(device, __func__));
    host_current_device = device;
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_get_device_properties(int32_t device, oprt_device_properties_t *props) {
    OPRT_CHECK_NOT_NULL(props);
    OPRT_CHECK(host_check_device_index(device, __func__));
    memset(props, 0, sizeof *props);
    snprintf(props->name, sizeof props->name, "host-cpu");
    snprintf(props->vendor, sizeof props->vendor, "host");
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    props->total_memory_bytes = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : (uint64_t)1 << 30;
    long l2 = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    props->l2_cache_bytes = l2 > 0 ? (uint64_t)l2 : (uint64_t)1 << 20;
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    props->sm_count = ncpu > 0 ? (int32_t)ncpu : 1;
    props->warp_size = 1;
    props->memory_clock_khz = 1600000; /* nominal DDR4-3200 */
    props->memory_bus_width_bits = 64;
    props->compute_major = 0;
    props->compute_minor = 0;
    props->clock_khz = 0;
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_device_synchronize(void) {
    OPRT_CHECK(host_need_device(__func__));
    return OPRT_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* memory                                                                     */

oprt_status_t oprt_malloc(void **ptr, size_t bytes) {
    OPRT_CHECK_NOT_NULL(ptr);
    *ptr = NULL;
    OPRT_CHECK(host_need_device(__func__));
    if (bytes > HOST_MAX_ALLOC)
        return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "oprt_malloc: cannot allocate %zu bytes (host limit %zu)",
                              bytes, (size_t)HOST_MAX_ALLOC);
    void *p = malloc(bytes ? bytes : 1);
    if (p == NULL)
        return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "oprt_malloc: out of host memory allocating %zu bytes",
                              bytes);
    *ptr = p;
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_free(void *ptr) {
    free(ptr);
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_memcpy(void *dst, const void *src, size_t bytes, oprt_memcpy_kind_t kind) {
    if ((int)kind < OPRT_MEMCPY_HOST_TO_DEVICE || (int)kind > OPRT_MEMCPY_DEVICE_TO_DEVICE)
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "oprt_memcpy: unknown kind %d (valid: 0=h2d, 1=d2h, 2=d2d)",
                              (int)kind);
    OPRT_CHECK(host_check_faulted(__func__));
    if (bytes == 0) return OPRT_STATUS_SUCCESS;
    OPRT_CHECK_NOT_NULL(dst);
    OPRT_CHECK_NOT_NULL(src);
    memmove(dst, src, bytes);
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_memset(void *ptr, int32_t value, size_t bytes) {
    OPRT_CHECK(host_check_faulted(__func__));
    if (bytes == 0) return OPRT_STATUS_SUCCESS;
    OPRT_CHECK_NOT_NULL(ptr);
    memset(ptr, value, bytes);
    return OPRT_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* streams and events                                                         */

#define HOST_STREAM_MAGIC 0x5354524du
#define HOST_EVENT_MAGIC 0x4556454eu

typedef struct {
    uint32_t magic;
} host_stream_t;

typedef struct {
    uint32_t magic;
    int32_t recorded;
    double t_ms;
} host_event_t;

static double host_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static oprt_status_t host_check_stream(oprt_stream_t stream, const char *func) {
    OPRT_CHECK(host_check_faulted(func));
    if (stream != NULL && ((host_stream_t *)stream)->magic != HOST_STREAM_MAGIC)
        return oprt_set_error(OPRT_STATUS_DEVICE_ERROR, "%s: invalid stream handle (invalid resource handle)", func);
    return OPRT_STATUS_SUCCESS;
}

static oprt_status_t host_check_event(oprt_event_t event, const char *func, const char *name) {
    if (event == NULL) return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: argument '%s' is NULL", func, name);
    if (((host_event_t *)event)->magic != HOST_EVENT_MAGIC)
        return oprt_set_error(OPRT_STATUS_DEVICE_ERROR, "%s: invalid event handle '%s' (invalid resource handle)",
                              func, name);
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_stream_create(oprt_stream_t *stream) {
    OPRT_CHECK_NOT_NULL(stream);
    host_stream_t *s = (host_stream_t *)calloc(1, sizeof *s);
    if (s == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "oprt_stream_create: out of host memory");
    s->magic = HOST_STREAM_MAGIC;
    *stream = s;
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_stream_destroy(oprt_stream_t stream) {
    OPRT_CHECK_NOT_NULL(stream);
    OPRT_CHECK(host_check_stream(stream, __func__));
    ((host_stream_t *)stream)->magic = 0;
    free(stream);
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_stream_synchronize(oprt_stream_t stream) { return host_check_stream(stream, __func__); }

oprt_status_t oprt_event_create(oprt_event_t *event) {
    OPRT_CHECK_NOT_NULL(event);
    host_event_t *e = (host_event_t *)calloc(1, sizeof *e);
    if (e == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "oprt_event_create: out of host memory");
    e->magic = HOST_EVENT_MAGIC;
    *event = e;
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_event_destroy(oprt_event_t event) {
    OPRT_CHECK(host_check_event(event, __func__, "event"));
    ((host_event_t *)event)->magic = 0;
    free(event);
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_event_record(oprt_event_t event, oprt_stream_t stream) {
    OPRT_CHECK(host_check_event(event, __func__, "event"));
    OPRT_CHECK(host_check_stream(stream, __func__));
    host_event_t *e = (host_event_t *)event;
    e->t_ms = host_now_ms();
    e->recorded = 1;
    return OPRT_STATUS_SUCCESS;
}

oprt_status_t oprt_event_synchronize(oprt_event_t event) { return host_check_event(event, __func__, "event"); }

oprt_status_t oprt_event_elapsed_ms(float *ms, oprt_event_t start, oprt_event_t end) {
    OPRT_CHECK_NOT_NULL(ms);
    OPRT_CHECK(host_check_event(start, __func__, "start"));
    OPRT_CHECK(host_check_event(end, __func__, "end"));
    const host_event_t *a = (const host_event_t *)start, *b = (const host_event_t *)end;
    if (!a->recorded || !b->recorded)
        return oprt_set_error(OPRT_STATUS_DEVICE_ERROR,
                              "oprt_event_elapsed_ms: %s event was never recorded (invalid resource handle)",
                              !a->recorded ? "start" : "end");
    *ms = (float)(b->t_ms - a->t_ms);
    return OPRT_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* op plumbing                                                                */

/* The "kernel" start of every launch: the stream, then a planned fault (OPRT_HOST_FAULT_OPS). The generated entry
 * points (oprt_entry.h) have checked the descriptor, the workspace, NULL pointers and overlap before. */
static oprt_status_t host_launch_prologue(oprt_stream_t stream, const char *func) {
    OPRT_CHECK(host_check_stream(stream, func));
    return host_fault_launch(func);
}

enum { EW_COPY, EW_ADD, EW_RELU };

static void host_elementwise(const oprt_elementwise_plan_t *p, int kind, float slope, char *out, const char *a,
                             const char *b) {
    const int32_t dt = p->dtype;
    const int64_t es = (int64_t)oprt_dtype_size(dt);
    int64_t idx[OPRT_MAX_NDIM] = {0};
    int64_t oo = 0, oa = 0, ob = 0;
    for (int64_t n = 0; n < p->numel; ++n) {
        switch (kind) {
        case EW_COPY: memcpy(out + oo * es, a + oa * es, (size_t)es); break;
        case EW_ADD: store_f(out, oo, dt, load_f(a, oa, dt) + load_f(b, ob, dt)); break;
        default: {
            float x = load_f(a, oa, dt);
            store_f(out, oo, dt, x > 0.0f ? x : x * slope);
        }
        }
        for (int32_t d = p->ndim - 1; d >= 0; --d) {
            oo += p->out_strides[d];
            oa += p->in_strides[0][d];
            ob += p->in_strides[1][d];
            if (++idx[d] < p->shape[d]) break;
            oo -= p->out_strides[d] * p->shape[d];
            oa -= p->in_strides[0][d] * p->shape[d];
            ob -= p->in_strides[1][d] * p->shape[d];
            idx[d] = 0;
        }
    }
}

/* ---- copy, vector_add, relu ---- */

typedef struct {
    oprt_elementwise_plan_t plan;
    float negative_slope;
} host_ew_state_t;

static oprt_status_t host_plan_copy(host_ew_state_t *s, size_t *workspace, const oprt_tensor_desc_t *out,
                                    const oprt_tensor_desc_t *x) {
    HOST_CHECK_UNSUPPORTED("copy");
    *workspace = 0;
    return oprt_plan_copy(&s->plan, out, x);
}

static oprt_status_t host_copy(const host_ew_state_t *s, void *workspace, void *out, const void *x,
                               oprt_stream_t stream) {
    (void)workspace;
    OPRT_CHECK(host_launch_prologue(stream, "oprt_copy"));
    host_elementwise(&s->plan, EW_COPY, 0.0f, (char *)out, (const char *)x, NULL);
    return OPRT_STATUS_SUCCESS;
}

OPRT_DEFINE_OP(copy, host_ew_state_t, host_plan_copy, host_copy)

static oprt_status_t host_plan_vector_add(host_ew_state_t *s, size_t *workspace, const oprt_tensor_desc_t *out,
                                          const oprt_tensor_desc_t *a, const oprt_tensor_desc_t *b) {
    HOST_CHECK_UNSUPPORTED("vector_add");
    *workspace = 0;
    return oprt_plan_vector_add(&s->plan, out, a, b);
}

static oprt_status_t host_vector_add(const host_ew_state_t *s, void *workspace, void *out, const void *a,
                                     const void *b, oprt_stream_t stream) {
    (void)workspace;
    OPRT_CHECK(host_launch_prologue(stream, "oprt_vector_add"));
    host_elementwise(&s->plan, EW_ADD, 0.0f, (char *)out, (const char *)a, (const char *)b);
    return OPRT_STATUS_SUCCESS;
}

OPRT_DEFINE_OP(vector_add, host_ew_state_t, host_plan_vector_add, host_vector_add)

static oprt_status_t host_plan_relu(host_ew_state_t *s, size_t *workspace, const oprt_tensor_desc_t *out,
                                    const oprt_tensor_desc_t *x, float negative_slope) {
    HOST_CHECK_UNSUPPORTED("relu");
    *workspace = 0;
    s->negative_slope = negative_slope;
    return oprt_plan_relu(&s->plan, out, x, negative_slope);
}

static oprt_status_t host_relu(const host_ew_state_t *s, void *workspace, void *out, const void *x,
                               oprt_stream_t stream) {
    (void)workspace;
    OPRT_CHECK(host_launch_prologue(stream, "oprt_relu"));
    host_elementwise(&s->plan, EW_RELU, s->negative_slope, (char *)out, (const char *)x, NULL);
    return OPRT_STATUS_SUCCESS;
}

OPRT_DEFINE_OP(relu, host_ew_state_t, host_plan_relu, host_relu)

/* ---- reduce_sum ---- */

static inline int host_is_reduced(const oprt_axis_plan_t *p, int32_t i) { return p->axis < 0 || i == p->axis; }

/* workspace: an f32 per output element (part of the ABI contract, validated by the entry point) */
static oprt_status_t host_plan_reduce_sum(oprt_axis_plan_t *s, size_t *workspace, const oprt_tensor_desc_t *out,
                                          const oprt_tensor_desc_t *x, int32_t axis, int32_t keepdims) {
    HOST_CHECK_UNSUPPORTED("reduce_sum");
    OPRT_CHECK(oprt_plan_reduce_sum(s, out, x, axis, keepdims));
    *workspace = (size_t)s->numel_out * sizeof(float);
    return OPRT_STATUS_SUCCESS;
}

static oprt_status_t host_reduce_sum(const oprt_axis_plan_t *p, void *workspace, void *out, const void *x,
                                     oprt_stream_t stream) {
    OPRT_CHECK(host_launch_prologue(stream, "oprt_reduce_sum"));
    const int32_t dt = p->dtype, nd = p->ndim;
    /* f64 accumulators: a sequential f32 sum errs by ~n eps, beyond the spec's log2(n) eps budget (which a
     * GPU's tree reduction meets) once n reaches a few hundred same-sign values -- found by fuzzing. The f32
     * workspace stays part of the ABI contract (validated above) and holds the rounded sums. */
    double *acc = (double *)calloc(p->numel_out > 0 ? (size_t)p->numel_out : 1, sizeof(double));
    if (acc == NULL) return oprt_set_error(OPRT_STATUS_OUT_OF_MEMORY, "%s: out of host memory", __func__);
    /* dense accumulator strides over the kept dims (0 on reduced dims) */
    int64_t dense[OPRT_MAX_NDIM];
    int64_t run = 1;
    for (int32_t i = nd - 1; i >= 0; --i) {
        dense[i] = host_is_reduced(p, i) ? 0 : run;
        if (!host_is_reduced(p, i)) run *= p->shape[i];
    }
    int64_t idx[OPRT_MAX_NDIM] = {0};
    int64_t ox = 0, oa = 0;
    for (int64_t n = 0; n < p->numel_in; ++n) {
        acc[oa] += load_f((const char *)x, ox, dt);
        for (int32_t d = nd - 1; d >= 0; --d) {
            ox += p->x_strides[d];
            oa += dense[d];
            if (++idx[d] < p->shape[d]) break;
            ox -= p->x_strides[d] * p->shape[d];
            oa -= dense[d] * p->shape[d];
            idx[d] = 0;
        }
    }
    /* write the accumulators: walk x's dims with the reduced ones collapsed to 1 */
    int64_t oshape[OPRT_MAX_NDIM];
    for (int32_t i = 0; i < nd; ++i) oshape[i] = host_is_reduced(p, i) ? 1 : p->shape[i];
    for (int32_t i = 0; i < nd; ++i) idx[i] = 0;
    int64_t oo = 0;
    oa = 0;
    for (int64_t n = 0; n < p->numel_out; ++n) {
        ((float *)workspace)[oa] = (float)acc[oa];
        store_f((char *)out, oo, dt, (float)acc[oa]);
        for (int32_t d = nd - 1; d >= 0; --d) {
            oo += p->out_strides[d];
            oa += dense[d];
            if (++idx[d] < oshape[d]) break;
            oo -= p->out_strides[d] * oshape[d];
            oa -= dense[d] * oshape[d];
            idx[d] = 0;
        }
    }
    free(acc);
    return OPRT_STATUS_SUCCESS;
}

OPRT_DEFINE_OP(reduce_sum, oprt_axis_plan_t, host_plan_reduce_sum, host_reduce_sum)

/* ---- softmax ---- */

static oprt_status_t host_plan_softmax(oprt_axis_plan_t *s, size_t *workspace, const oprt_tensor_desc_t *out,
                                       const oprt_tensor_desc_t *x, int32_t axis) {
    HOST_CHECK_UNSUPPORTED("softmax");
    *workspace = 0;
    return oprt_plan_softmax(s, out, x, axis);
}

static oprt_status_t host_softmax(const oprt_axis_plan_t *p, void *workspace, void *out, const void *x,
                                  oprt_stream_t stream) {
    (void)workspace;
    OPRT_CHECK(host_launch_prologue(stream, "oprt_softmax"));
    if (p->numel_in == 0) return OPRT_STATUS_SUCCESS;
    const int32_t dt = p->dtype, nd = p->ndim, ax = p->axis;
    const int64_t len = p->shape[ax], sx = p->x_strides[ax], so = p->out_strides[ax];
    const int64_t rows = p->numel_in / len;
    int64_t idx[OPRT_MAX_NDIM] = {0};
    int64_t ox = 0, oo = 0;
    for (int64_t r = 0; r < rows; ++r) {
        float m = -INFINITY;
        for (int64_t k = 0; k < len; ++k) {
            float v = load_f((const char *)x, ox + k * sx, dt);
            if (v > m) m = v;
        }
        float s = 0.0f;
        for (int64_t k = 0; k < len; ++k) s += expf(load_f((const char *)x, ox + k * sx, dt) - m);
        for (int64_t k = 0; k < len; ++k)
            store_f((char *)out, oo + k * so, dt, expf(load_f((const char *)x, ox + k * sx, dt) - m) / s);
        /* next row: walk every dim but the softmax axis */
        for (int32_t d = nd - 1; d >= 0; --d) {
            if (d == ax) continue;
            ox += p->x_strides[d];
            oo += p->out_strides[d];
            if (++idx[d] < p->shape[d]) break;
            ox -= p->x_strides[d] * p->shape[d];
            oo -= p->out_strides[d] * p->shape[d];
            idx[d] = 0;
        }
    }
    return OPRT_STATUS_SUCCESS;
}

OPRT_DEFINE_OP(softmax, oprt_axis_plan_t, host_plan_softmax, host_softmax)

/* ------------------------------------------------------------------------- */
/* The model ops, through oprt_entry.h: a plan function and a launch function each */

/* ---- rms_norm, layer_norm: per row, f32 sums in a sequential loop ---- */

static void host_norm_rows(const oprt_rows_plan_t *p, int layer, char *out, const char *x, const char *w,
                           const char *b) {
    const int32_t dt = p->dtype;
    for (int64_t r = 0; r < p->rows; ++r) {
        int64_t xo, oo;
        oprt_row_offsets(p, r, &xo, &oo);
        float mean = 0.0f, ss = 0.0f;
        if (layer) {
            for (int64_t i = 0; i < p->n; ++i) mean += load_f(x, xo + i * p->x_inner, dt);
            mean /= (float)p->n;
        }
        for (int64_t i = 0; i < p->n; ++i) {
            const float d = load_f(x, xo + i * p->x_inner, dt) - mean;
            ss += d * d;
        }
        const float rstd = 1.0f / sqrtf(ss / (float)p->n + p->eps);
        for (int64_t i = 0; i < p->n; ++i) {
            float y = (load_f(x, xo + i * p->x_inner, dt) - mean) * rstd * load_f(w, i * p->vec_strides[0], dt);
            if (layer) y += load_f(b, i * p->vec_strides[1], dt);
            store_f(out, oo + i * p->out_inner, dt, y);
        }
    }
}

static oprt_status_t host_plan_rms_norm(oprt_rows_plan_t *s, size_t *workspace, const oprt_tensor_desc_t *out,
                                        const oprt_tensor_desc_t *x, const oprt_tensor_desc_t *weight, float eps) {
    HOST_CHECK_UNSUPPORTED("rms_norm");
    *workspace = 0;
    return oprt_plan_rms_norm(s, out, x, weight, eps);
}

static oprt_status_t host_rms_norm(const oprt_rows_plan_t *s, void *workspace, void *out, const void *x,
                                   const void *weight, oprt_stream_t stream) {
    (void)workspace;
    OPRT_CHECK(host_launch_prologue(stream, "oprt_rms_norm"));
    host_norm_rows(s, 0, (char *)out, (const char *)x, (const char *)weight, NULL);
    return OPRT_STATUS_SUCCESS;
}

OPRT_DEFINE_OP(rms_norm, oprt_rows_plan_t, host_plan_rms_norm, host_rms_norm)

static oprt_status_t host_plan_layer_norm(oprt_rows_plan_t *s, size_t *workspace, const oprt_tensor_desc_t *out,
                                          const oprt_tensor_desc_t *x, const oprt_tensor_desc_t *weight,
                                          const oprt_tensor_desc_t *bias, float eps) {
    HOST_CHECK_UNSUPPORTED("layer_norm");
    *workspace = 0;
    return oprt_plan_layer_norm(s, out, x, weight, bias, eps);
}

static oprt_status_t host_layer_norm(const oprt_rows_plan_t *s, void *workspace, void *out, const void *x,
                                     const void *weight, const void *bias, oprt_stream_t stream) {
    (void)workspace;
    OPRT_CHECK(host_launch_prologue(stream, "oprt_layer_norm"));
    host_norm_rows(s, 1, (char *)out, (const char *)x, (const char *)weight, (const char *)bias);
    return OPRT_STATUS_SUCCESS;
}

OPRT_DEFINE_OP(layer_norm, oprt_rows_plan_t, host_plan_layer_norm, host_layer_norm)

/* ---- add_rms_norm (two outputs): per row, h = x + residual stored (rounded to the dtype) first, then normalised
 * from h as stored; out and h may each be x or residual (each element is read before it is written) ---- */

static oprt_status_t host_plan_add_rms_norm(oprt_add_rows_plan_t *s, size_t *workspace, const oprt_tensor_desc_t *out,
                                            const oprt_tensor_desc_t *h, const oprt_tensor_desc_t *x,
                                            const oprt_tensor_desc_t *residual, const oprt_tensor_desc_t *weight,
                                            float eps) {
    HOST_CHECK_UNSUPPORTED("add_rms_norm");
    *workspace = 0;
    return oprt_plan_add_rms_norm(s, out, h, x, residual, weight, eps);
}

static oprt_status_t host_add_rms_norm(const oprt_add_rows_plan_t *s, void *workspace, void *out_, void *h_,
                                       const void *x_, const void *residual_, const void *weight_,
                                       oprt_stream_t stream) {
    (void)workspace;
    OPRT_CHECK(host_launch_prologue(stream, "oprt_add_rms_norm"));
    const oprt_rows_plan_t *p = &s->rows;
    const int32_t dt = p->dtype;
    char *out = (char *)out_, *h = (char *)h_;
    const char *x = (const char *)x_, *res = (const char *)residual_, *w = (const char *)weight_;
    for (int64_t r = 0; r < p->rows; ++r) {
        int64_t xo, oo, ro, ho;
        oprt_row_offsets(p, r, &xo, &oo);
        oprt_add_row_offsets(s, r, &ro, &ho);
        float ss = 0.0f, block = 0.0f; /* blocks of 256 summed apart, as a GPU's threads do (a sequential f32 sum of
                                          * 20000 squares strays past the budget's log2(n) bound) */
        for (int64_t i = 0; i < p->n; ++i) {
            const float sum = load_f(x, xo + i * p->x_inner, dt) + load_f(res, ro + i * s->res_inner, dt);
            store_f(h, ho + i * s->h_inner, dt, sum);
            const float v = load_f(h, ho + i * s->h_inner, dt);
            block += v * v;
            if ((i & 255) == 255 || i == p->n - 1) {
                ss += block;
                block = 0.0f;
            }
        }
        const float rstd = 1.0f / sqrtf(ss / (float)p->n + p->eps);
        for (int64_t i = 0; i < p->n; ++i)
            store_f(out, oo + i * p->out_inner, dt,
                    load_f(h, ho + i * s->h_inner, dt) * rstd * load_f(w, i * p->vec_strides[0], dt));
    }
    return OPRT_STATUS_SUCCESS;
}

OPRT_DEFINE_OP(add_rms_norm, oprt_add_rows_plan_t, host_plan_add_rms_norm, host_add_rms_norm)

/* ---- silu_mul ---- */

static oprt_status_t host_plan_silu_mul(oprt_elementwise_plan_t *s, size_t *workspace, const oprt_tensor_desc_t *out,
                                        const oprt_tensor_desc_t *gate, const oprt_tensor_desc_t *up) {
    HOST_CHECK_UNSUPPORTED("silu_mul");
    *workspace = 0;
    return oprt_plan_silu_mul(s, out, gate, up);
}

static oprt_status_t host_silu_mul(const oprt_elementwise_plan_t *p, void *workspace, void *out_, const void *gate,
                                   const void *up, oprt_stream_t stream) {
    (void)workspace;
    OPRT_CHECK(host_launch_prologue(stream, "oprt_silu_mul"));
    const int32_t dt = p->dtype;
    char *out = (char *)out_;
    const char *g = (const char *)gate, *u = (const char *)up;
    for (int64_t n = 0; n < p->numel; ++n) {
        /* element n's offsets, walking the plan's merged dims */
        int64_t oo = 0, og = 0, ou = 0, rest = n;
        for (int32_t d = p->ndim - 1; d >= 0; --d) {
            const int64_t q = rest % p->shape[d];
            rest /= p->shape[d];
            oo += q * p->out_strides[d];
            og += q * p->in_strides[0][d];
            ou += q * p->in_strides[1][d];
        }
        const float x = load_f(g, og, dt);
        store_f(out, oo, dt, x / (1.0f + expf(-x)) * load_f(u, ou, dt));
    }
    return OPRT_STATUS_SUCCESS;
}

OPRT_DEFINE_OP(silu_mul, oprt_elementwise_plan_t, host_plan_silu_mul, host_silu_mul)

/* ---- cross_entropy: per row, an online max and sum of exponentials in f32 (one pass), the mean summed in f64 ---- */

static oprt_status_t host_plan_cross_entropy(oprt_xent_plan_t *s, size_t *workspace, const oprt_tensor_desc_t *out,
                                             const oprt_tensor_desc_t *logits, const oprt_tensor_desc_t *target,
                                             int32_t ignore_index, int32_t reduction) {
    HOST_CHECK_UNSUPPORTED("cross_entropy");
    *workspace = 0;
    return oprt_plan_cross_entropy(s, out, logits, target, ignore_index, reduction);
}

static oprt_status_t host_cross_entropy(const oprt_xent_plan_t *p, void *workspace, void *out_, const void *logits,
                                        const void *target, oprt_stream_t stream) {
    (void)workspace;
    OPRT_CHECK(host_launch_prologue(stream, "oprt_cross_entropy"));
    const int32_t dt = p->dtype;
    char *out = (char *)out_;
    const char *x = (const char *)logits;
    const int64_t *t = (const int64_t *)target;
    double total = 0.0;
    int64_t counted = 0;
    for (int64_t r = 0; r < p->rows; ++r) {
        int64_t xo, to, oo;
        oprt_xent_row_offsets(p, r, &xo, &to, &oo);
        const int64_t cls = t[to];
        float loss = 0.0f;
        if (cls != p->ignore_index) {
            float m = -INFINITY, s = 0.0f;
            for (int64_t i = 0; i < p->v; ++i) {
                const float v = load_f(x, xo + i * p->x_inner, dt);
                if (v > m) {
                    s = s * expf(m - v) + 1.0f;
                    m = v;
                } else {
                    s += expf(v - m);
                }
            }
            loss = cls >= 0 && cls < p->v ? m + logf(s) - load_f(x, xo + cls * p->x_inner, dt) : NAN;
            total += loss;
            ++counted;
        }
        if (p->reduction == OPRT_REDUCTION_NONE) store_f(out, oo, dt, loss);
    }
    if (p->reduction == OPRT_REDUCTION_MEAN) store_f(out, 0, dt, (float)(total / (double)counted));
    return OPRT_STATUS_SUCCESS;
}

OPRT_DEFINE_OP(cross_entropy, oprt_xent_plan_t, host_plan_cross_entropy, host_cross_entropy)

/* ---- rope (two outputs): per token, each pair of every q head then every k head rotated by the token's cos / sin
 * row in f32; NaN for a position outside [0, P). A pair's two elements are read before either is written, so
 * q_out may be q and k_out k. ---- */

static oprt_status_t host_plan_rope(oprt_rope_plan_t *s, size_t *workspace, const oprt_tensor_desc_t *q_out,
                                    const oprt_tensor_desc_t *k_out, const oprt_tensor_desc_t *q,
                                    const oprt_tensor_desc_t *k, const oprt_tensor_desc_t *cos,
                                    const oprt_tensor_desc_t *sin, const oprt_tensor_desc_t *positions,
                                    int32_t style) {
    HOST_CHECK_UNSUPPORTED("rope");
    *workspace = 0;
    return oprt_plan_rope(s, q_out, k_out, q, k, cos, sin, positions, style);
}

static oprt_status_t host_rope(const oprt_rope_plan_t *p, void *workspace, void *q_out_, void *k_out_,
                               const void *q_, const void *k_, const void *cos_, const void *sin_,
                               const void *positions, oprt_stream_t stream) {
    (void)workspace;
    OPRT_CHECK(host_launch_prologue(stream, "oprt_rope"));
    const int32_t dt = p->dtype;
    char *const outs[2] = {(char *)q_out_, (char *)k_out_};
    const char *const ins[2] = {(const char *)q_, (const char *)k_};
    const int64_t *const in_s[2] = {p->q_strides, p->k_strides};
    const int64_t *const out_s[2] = {p->qo_strides, p->ko_strides};
    const int64_t heads[2] = {p->hq, p->hk};
    const char *cs = (const char *)cos_, *sn = (const char *)sin_;
    for (int64_t t = 0; t < p->t; ++t) {
        const int64_t pos = p->pos_dtype == OPRT_DTYPE_I32 ? (int64_t)((const int32_t *)positions)[t * p->pos_stride]
                                                           : ((const int64_t *)positions)[t * p->pos_stride];
        const int valid = pos >= 0 && pos < p->p;
        for (int64_t i = 0; i < p->d / 2; ++i) {
            const float c = valid ? load_f(cs, pos * p->cos_strides[0] + i * p->cos_strides[1], dt) : NAN;
            const float s = valid ? load_f(sn, pos * p->sin_strides[0] + i * p->sin_strides[1], dt) : NAN;
            for (int w = 0; w < 2; ++w) {
                for (int64_t h = 0; h < heads[w]; ++h) {
                    int64_t i1, i2, o1, o2;
                    oprt_rope_pair(p, i, in_s[w][2], &i1, &i2);
                    oprt_rope_pair(p, i, out_s[w][2], &o1, &o2);
                    const int64_t xb = t * in_s[w][0] + h * in_s[w][1], ob = t * out_s[w][0] + h * out_s[w][1];
                    const float x1 = load_f(ins[w], xb + i1, dt), x2 = load_f(ins[w], xb + i2, dt);
                    store_f(outs[w], ob + o1, dt, x1 * c - x2 * s);
                    store_f(outs[w], ob + o2, dt, x2 * c + x1 * s);
                }
            }
        }
    }
    return OPRT_STATUS_SUCCESS;
}

OPRT_DEFINE_OP(rope, oprt_rope_plan_t, host_plan_rope, host_rope)

/* ---- matmul: per output element, the K products summed in f32 in a sequential loop, times alpha, plus beta * c
 * where the plan reads c (read before the element is written: out may be c itself), one rounding (allow_tf32 is
 * allowed, never used: full f32 products) ---- */

static oprt_status_t host_plan_matmul(oprt_matmul_plan_t *s, size_t *workspace, const oprt_tensor_desc_t *out,
                                      const oprt_tensor_desc_t *a, const oprt_tensor_desc_t *b,
                                      const oprt_tensor_desc_t *c, float alpha, float beta, int32_t allow_tf32) {
    HOST_CHECK_UNSUPPORTED("matmul");
    *workspace = 0;
    return oprt_plan_matmul(s, out, a, b, c, alpha, beta, allow_tf32);
}

static oprt_status_t host_matmul(const oprt_matmul_plan_t *p, void *workspace, void *out_, const void *a_,
                                 const void *b_, const void *c_, oprt_stream_t stream) {
    (void)workspace;
    OPRT_CHECK(host_launch_prologue(stream, "oprt_matmul"));
    const int32_t dt = p->dtype;
    char *out = (char *)out_;
    const char *a = (const char *)a_, *b = (const char *)b_, *c = (const char *)c_;
    for (int64_t q = 0; q < p->batch; ++q)
        for (int64_t i = 0; i < p->m; ++i)
            for (int64_t j = 0; j < p->n; ++j) {
                float acc = 0.0f;
                for (int64_t l = 0; l < p->k; ++l)
                    acc += load_f(a, q * p->a_bs + i * p->a_rs + l * p->a_cs, dt) *
                           load_f(b, q * p->b_bs + l * p->b_rs + j * p->b_cs, dt);
                float v = p->alpha * acc;
                if (p->has_c) v += p->beta * load_f(c, q * p->c_bs + i * p->c_rs + j * p->c_cs, dt);
                store_f(out, q * p->o_bs + i * p->o_rs + j * p->o_cs, dt, v);
            }
    return OPRT_STATUS_SUCCESS;
}

OPRT_DEFINE_OP(matmul, oprt_matmul_plan_t, host_plan_matmul, host_matmul)

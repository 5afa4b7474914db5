/*
 * oprt_validate.h: argument validation and launch plans shared by every
 * compiled backend. Header-only (C99 and C++), in the style of stb: every
 * translation unit may include it; exactly one translation unit per library
 * defines OPRT_IMPLEMENTATION before including it, which emits
 * oprt_status_string(), oprt_last_error_message(), oprt_library_abi_version()
 * and the thread-local error buffer behind oprt_set_error().
 *
 * A backend's oprt_create_<op>_descriptor() calls oprt_plan_<op>() and keeps
 * the plan; the plan is all a kernel launcher needs besides data pointers:
 *  - elementwise ops (copy, vector_add, relu): inputs broadcast to the output
 *    shape (stride 0 on broadcast dims), size-1 dims dropped, mergeable dims
 *    merged, and a flag for the all-contiguous fast path;
 *  - axis ops (reduce_sum, softmax): the tensor seen as [outer, reduce, inner]
 *    when contiguous, and per-dim strides of x and out otherwise.
 * Every plan also holds the byte spans of out and the inputs (oprt_alias_t): a
 * descriptor has no data pointers, so the launch decides overlap with
 * oprt_check_alias() on the pointers it is given.
 */
#ifndef OPRT_VALIDATE_H_
#define OPRT_VALIDATE_H_

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "oprt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Records a formatted message as oprt_last_error_message() and returns status. */
oprt_status_t oprt_set_error(oprt_status_t status, const char *fmt, ...);
/* Clears the message (called by successful entry points that want to). */
void oprt_clear_error(void);
/* OPRT_ABI_VERSION of the oprt.h the library was compiled against: CompiledBackend compares it with oprt-core's
 * before it drives an op package's own library (oprt_core.compiled.c_library). */
int32_t oprt_library_abi_version(void);

#define OPRT_CHECK(expr)                                   \
    do {                                                   \
        oprt_status_t oprt_check_status_ = (expr);         \
        if (oprt_check_status_ != OPRT_STATUS_SUCCESS)     \
            return oprt_check_status_;                     \
    } while (0)

#define OPRT_CHECK_NOT_NULL(ptr)                                                   \
    do {                                                                           \
        if ((ptr) == NULL)                                                         \
            return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: argument '%s' is NULL", \
                                  __func__, #ptr);                                 \
    } while (0)

static inline size_t oprt_dtype_size(int32_t dtype) {
    switch (dtype) {
    case OPRT_DTYPE_F32: return 4;
    case OPRT_DTYPE_F16: return 2;
    case OPRT_DTYPE_BF16: return 2;
    case OPRT_DTYPE_I32: return 4;
    case OPRT_DTYPE_I64: return 8;
    case OPRT_DTYPE_F8E4M3: return 1;
    default: return 0;
    }
}

static inline const char *oprt_dtype_name(int32_t dtype) {
    switch (dtype) {
    case OPRT_DTYPE_F32: return "f32";
    case OPRT_DTYPE_F16: return "f16";
    case OPRT_DTYPE_BF16: return "bf16";
    case OPRT_DTYPE_I32: return "i32";
    case OPRT_DTYPE_I64: return "i64";
    case OPRT_DTYPE_F8E4M3: return "e4m3";
    default: return "unknown";
    }
}

static inline int64_t oprt_numel(const oprt_tensor_desc_t *t) {
    int64_t n = 1;
    for (int32_t i = 0; i < t->ndim; ++i) n *= t->shape[i];
    return n;
}

/* Checks dtype, ndim and shape of one tensor descriptor; `name` is used in messages. */
/* |s| without overflow: INT64_MIN (whose negation is UB) saturates to INT64_MAX. oprt_check_tensor
 * refuses INT64_MIN strides outright, so past validation this is plain |s|. */
static inline int64_t oprt_abs_stride(int64_t s) {
    return s >= 0 ? s : (s == INT64_MIN ? INT64_MAX : -s);
}

static inline int oprt_is_value_dtype(int32_t dtype) {
    return dtype == OPRT_DTYPE_F32 || dtype == OPRT_DTYPE_F16 || dtype == OPRT_DTYPE_BF16;
}

static inline oprt_status_t oprt_check_layout_(const oprt_tensor_desc_t *t, const char *name);

/* A value tensor (out and the value inputs of every op): f32, f16 or bf16. */
static inline oprt_status_t oprt_check_tensor(const oprt_tensor_desc_t *t, const char *name) {
    if (t == NULL)
        return oprt_set_error(OPRT_STATUS_NULL_POINTER, "tensor descriptor '%s' is NULL", name);
    if (oprt_dtype_size(t->dtype) == 0)
        return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE,
                              "tensor '%s' has unknown dtype code %d (valid: 0=f32, 1=f16, 2=bf16)",
                              name, (int)t->dtype);
    if (t->dtype == OPRT_DTYPE_F8E4M3)
        return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE,
                              "tensor '%s' has dtype e4m3 where f32, f16 or bf16 is needed (e4m3 is matmul's a and b "
                              "only, with a bf16 out)", name);
    if (!oprt_is_value_dtype(t->dtype))
        return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE,
                              "tensor '%s' has dtype %s (an index dtype) where f32, f16 or bf16 is needed", name,
                              oprt_dtype_name(t->dtype));
    return oprt_check_layout_(t, name);
}

/* A tensor of a value dtype or e4m3 (matmul's a and b). */
static inline oprt_status_t oprt_check_tensor_or_e4m3(const oprt_tensor_desc_t *t, const char *name) {
    if (t != NULL && t->dtype == OPRT_DTYPE_F8E4M3) return oprt_check_layout_(t, name);
    return oprt_check_tensor(t, name);
}

/* An index tensor (cross_entropy's target): dtype i64 where `allow_i32` is 0, i32 or i64 where it is 1. */
static inline oprt_status_t oprt_check_index_tensor(const oprt_tensor_desc_t *t, const char *op, const char *name,
                                                    int allow_i32) {
    if (t == NULL)
        return oprt_set_error(OPRT_STATUS_NULL_POINTER, "tensor descriptor '%s' is NULL", name);
    if (t->dtype != OPRT_DTYPE_I64 && !(allow_i32 && t->dtype == OPRT_DTYPE_I32))
        return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE, "%s: %s must be an index tensor of %s, got %s (code %d)",
                              op, name, allow_i32 ? "i32 or i64" : "i64", oprt_dtype_name(t->dtype), (int)t->dtype);
    return oprt_check_layout_(t, name);
}

/* ndim, shape and strides of a tensor whose dtype is checked. */
static inline oprt_status_t oprt_check_layout_(const oprt_tensor_desc_t *t, const char *name) {
    if (t->ndim < 0 || t->ndim > OPRT_MAX_NDIM)
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "tensor '%s' has ndim %d (valid: 0..%d)", name,
                              (int)t->ndim, OPRT_MAX_NDIM);
    /* on every dim, whatever its extent: backends negate strides (oprt_layout.h's canonicalize) */
    for (int32_t i = 0; i < t->ndim; ++i)
        if (t->strides[i] == INT64_MIN)
            return oprt_set_error(OPRT_STATUS_BAD_STRIDES, "tensor '%s' has stride %lld in dim %d that overflows",
                                  name, (long long)t->strides[i], (int)i);
    int64_t numel = 1;
    for (int32_t i = 0; i < t->ndim; ++i) {
        if (t->shape[i] < 0)
            return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "tensor '%s' has negative extent %lld in dim %d",
                                  name, (long long)t->shape[i], (int)i);
        if (t->shape[i] > 0 && numel > (INT64_MAX / 16) / t->shape[i])
            return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "tensor '%s' has too many elements", name);
        numel *= t->shape[i];
    }
    if (numel > 1) {
        for (int32_t i = 0; i < t->ndim; ++i) {
            int64_t s = oprt_abs_stride(t->strides[i]);
            if (t->shape[i] > 1 && s > (INT64_MAX / 16) / t->shape[i])
                return oprt_set_error(OPRT_STATUS_BAD_STRIDES, "tensor '%s' has stride %lld in dim %d that overflows",
                                      name, (long long)t->strides[i], (int)i);
        }
    }
    return OPRT_STATUS_SUCCESS;
}

/* An output may not have two index tuples mapping to the same element (no zero
 * or overlapping strides on dims of extent > 1). */
static inline oprt_status_t oprt_check_output_strides(const oprt_tensor_desc_t *t, const char *name) {
    if (oprt_numel(t) <= 1) return OPRT_STATUS_SUCCESS;
    int32_t order[OPRT_MAX_NDIM];
    int32_t n = 0;
    for (int32_t i = 0; i < t->ndim; ++i)
        if (t->shape[i] > 1) order[n++] = i;
    /* insertion sort of the non-trivial dims by |stride| */
    for (int32_t i = 1; i < n; ++i) {
        int32_t d = order[i];
        int64_t sd = oprt_abs_stride(t->strides[d]);
        int32_t j = i - 1;
        while (j >= 0) {
            int64_t sj = oprt_abs_stride(t->strides[order[j]]);
            if (sj <= sd) break;
            order[j + 1] = order[j];
            --j;
        }
        order[j + 1] = d;
    }
    int64_t span = 1; /* elements covered by the smaller dims */
    for (int32_t i = 0; i < n; ++i) {
        int32_t d = order[i];
        int64_t s = oprt_abs_stride(t->strides[d]);
        if (s < span)
            return oprt_set_error(OPRT_STATUS_BAD_STRIDES,
                                  "output '%s' has overlapping strides (dim %d has stride %lld): "
                                  "an output element would be written twice",
                                  name, (int)d, (long long)t->strides[d]);
        span = s * t->shape[d];
    }
    return OPRT_STATUS_SUCCESS;
}

static inline int oprt_same_shape(const oprt_tensor_desc_t *a, const oprt_tensor_desc_t *b) {
    if (a->ndim != b->ndim) return 0;
    for (int32_t i = 0; i < a->ndim; ++i)
        if (a->shape[i] != b->shape[i]) return 0;
    return 1;
}

static inline int oprt_is_contiguous(const oprt_tensor_desc_t *t) {
    int64_t expected = 1;
    for (int32_t i = t->ndim - 1; i >= 0; --i) {
        if (t->shape[i] != 1 && t->strides[i] != expected) return 0;
        expected *= t->shape[i];
    }
    return 1;
}

static inline void oprt_format_shape(const oprt_tensor_desc_t *t, char *buf, size_t n) {
    size_t used = 0;
    used += (size_t)snprintf(buf + used, n - used, "(");
    for (int32_t i = 0; i < t->ndim && used < n; ++i)
        used += (size_t)snprintf(buf + used, n - used, i ? ", %lld" : "%lld", (long long)t->shape[i]);
    if (used < n) snprintf(buf + used, n - used, t->ndim == 1 ? ",)" : ")");
}

static inline oprt_status_t oprt_check_same_dtype(const oprt_tensor_desc_t *out, const oprt_tensor_desc_t *in,
                                                  const char *in_name) {
    if (out->dtype != in->dtype)
        return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE,
                              "dtype mismatch: out is %s but %s is %s (mixed dtypes are not supported)",
                              oprt_dtype_name(out->dtype), in_name, oprt_dtype_name(in->dtype));
    return OPRT_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Aliasing of out and the inputs                                             */

#define OPRT_MAX_INPUTS 5 /* the most inputs an op of oprt.h takes (rope: q, k, cos, sin, positions) */

/* What a launch needs to decide whether out may share memory with an input. An op allows out to be exactly
 * input k (inplace[k]: it runs in place on it) or nothing; a plan leaves every inplace[k] 0 (no aliasing) and
 * the core ops that run in place set theirs. */
/* A tensor as rows along its outermost dim (the largest stride of extent > 1, positive): `step` bytes apart, the
 * other dims' bytes [lo, hi) from a row's start fitting in one step; step 0 where it is not so laid out. */
typedef struct {
    int64_t step, lo, hi;
} oprt_rows_span_t;

typedef struct {
    int32_t ninputs;
    int32_t inplace[OPRT_MAX_INPUTS];     /* out may be exactly input k */
    int32_t same_layout[OPRT_MAX_INPUTS]; /* input k has out's shape and strides (those of extent-1 dims aside) */
    int64_t out_lo, out_hi;               /* out's bytes are [out + out_lo, out + out_hi); empty when equal */
    int64_t in_lo[OPRT_MAX_INPUTS], in_hi[OPRT_MAX_INPUTS];
    oprt_rows_span_t out_rows, in_rows[OPRT_MAX_INPUTS];
} oprt_alias_t;

/* The bytes a validated tensor covers, from its pointer: [lo, hi) (lo <= 0 < hi), or [0, 0) when it is empty.
 * Saturated at +-2^61 bytes (no real tensor is that large), so oprt_spans_intersect cannot overflow. */
static inline void oprt_byte_span(const oprt_tensor_desc_t *t, int64_t *lo, int64_t *hi) {
    const int64_t cap = (int64_t)1 << 61, size = (int64_t)oprt_dtype_size(t->dtype);
    int64_t l = 0, h = 0;
    *lo = *hi = 0;
    if (oprt_numel(t) == 0) return;
    for (int32_t i = 0; i < t->ndim; ++i) {
        if (t->shape[i] <= 1) continue;
        const int64_t reach = (t->shape[i] - 1) * t->strides[i]; /* bounded by oprt_check_tensor */
        if (reach < 0) l = l + reach < -cap ? -cap : l + reach;
        else h = h + reach > cap ? cap : h + reach;
    }
    *lo = l <= -cap / size ? -cap : l * size;
    *hi = h >= cap / size ? cap : (h + 1) * size;
}

/* Whether [a + alo, a + ahi) and [b + blo, b + bhi) share a byte; spans from oprt_byte_span. */
static inline int oprt_spans_intersect(uintptr_t a, int64_t alo, int64_t ahi, uintptr_t b, int64_t blo,
                                       int64_t bhi) {
    if (alo == ahi || blo == bhi) return 0;
    /* with a <= b: b's span starts before a's ends iff b - a < ahi - blo (it cannot end before a's starts,
     * since alo <= 0 < bhi); symmetric otherwise */
    return a <= b ? (uint64_t)(b - a) < (uint64_t)(ahi - blo) : (uint64_t)(a - b) < (uint64_t)(bhi - alo);
}

static inline void oprt_rows_span(const oprt_tensor_desc_t *t, oprt_rows_span_t *r) {
    const int64_t size = (int64_t)oprt_dtype_size(t->dtype);
    int32_t outer = -1;
    r->step = r->lo = r->hi = 0;
    if (oprt_numel(t) == 0) return;
    for (int32_t i = 0; i < t->ndim; ++i) {
        if (t->shape[i] <= 1) continue;
        const int64_t s = t->strides[i] < 0 ? -t->strides[i] : t->strides[i];
        const int64_t o = outer < 0 ? -1 : (t->strides[outer] < 0 ? -t->strides[outer] : t->strides[outer]);
        if (s > o) outer = i;
    }
    if (outer < 0 || t->strides[outer] <= 0 || t->strides[outer] > ((int64_t)1 << 56) / size) return;
    int64_t l = 0, h = 0; /* bounded by oprt_check_tensor */
    for (int32_t i = 0; i < t->ndim; ++i) {
        if (i == outer || t->shape[i] <= 1) continue;
        const int64_t reach = (t->shape[i] - 1) * t->strides[i];
        if (reach < 0) l += reach;
        else h += reach;
    }
    if ((h + 1 - l) > t->strides[outer]) return;
    r->step = t->strides[outer] * size;
    r->lo = l * size;
    r->hi = (h + 1) * size;
}

/* Whether tensors at a and b laid out as rows of one step (oprt_rows_span) share no byte: each byte of b's rows lies
 * (b - a) mod step from the start of a row of a. 0 where it cannot tell. */
static inline int oprt_rows_disjoint(uintptr_t a, const oprt_rows_span_t *ra, uintptr_t b, const oprt_rows_span_t *rb) {
    if (ra->step == 0 || ra->step != rb->step) return 0;
    const int64_t s = ra->step;
    int64_t r = (int64_t)((uint64_t)(b - a) % (uint64_t)s);
    if (b < a) r = (s - (int64_t)((uint64_t)(a - b) % (uint64_t)s)) % s;
    for (int64_t j = -2; j <= 2; ++j)
        if (rb->lo + r + j * s < ra->hi && ra->lo < rb->hi + r + j * s) return 0;
    return 1;
}

static inline int oprt_same_layout(const oprt_tensor_desc_t *a, const oprt_tensor_desc_t *b) {
    if (a->dtype != b->dtype || !oprt_same_shape(a, b)) return 0;
    for (int32_t i = 0; i < a->ndim; ++i)
        if (a->shape[i] > 1 && a->strides[i] != b->strides[i]) return 0;
    return 1;
}

/* Fills an alias record for validated tensors; inplace left 0 (the op's plan sets what it allows). A NULL input
 * (an optional input left out, matmul's c) covers no byte: it overlaps nothing. */
static inline void oprt_plan_alias(oprt_alias_t *alias, const oprt_tensor_desc_t *out,
                                   const oprt_tensor_desc_t *const *inputs, int32_t ninputs) {
    memset(alias, 0, sizeof *alias);
    alias->ninputs = ninputs;
    oprt_byte_span(out, &alias->out_lo, &alias->out_hi);
    oprt_rows_span(out, &alias->out_rows);
    for (int32_t k = 0; k < ninputs; ++k) {
        if (inputs[k] == NULL) continue; /* spans [0, 0): empty */
        oprt_byte_span(inputs[k], &alias->in_lo[k], &alias->in_hi[k]);
        oprt_rows_span(inputs[k], &alias->in_rows[k]);
        alias->same_layout[k] = oprt_same_layout(out, inputs[k]);
    }
}

/* oprt_check_alias of an output named `out_name` (an op with several outputs names each; one output is "out"). */
static inline oprt_status_t oprt_check_alias_named(const oprt_alias_t *alias, const char *op, const char *out_name,
                                                   const void *out, const void *const *inputs,
                                                   const char *const *names) {
    for (int32_t k = 0; k < alias->ninputs; ++k) {
        if (!oprt_spans_intersect((uintptr_t)out, alias->out_lo, alias->out_hi, (uintptr_t)inputs[k],
                                  alias->in_lo[k], alias->in_hi[k]))
            continue;
        if (oprt_rows_disjoint((uintptr_t)out, &alias->out_rows, (uintptr_t)inputs[k], &alias->in_rows[k]))
            continue; /* rows that interleave without a shared byte (q and k of one fused qkv buffer) */
        const int exact = out == inputs[k] && alias->same_layout[k];
        if (exact && alias->inplace[k]) continue;
        if (exact && strcmp(out_name, "out") == 0)
            return oprt_set_error(OPRT_STATUS_OVERLAP,
                                  "%s: out is input %s itself, and %s cannot run in place; use a separate output",
                                  op, names[k], op);
        if (exact)
            return oprt_set_error(OPRT_STATUS_OVERLAP,
                                  "%s: %s is input %s itself, and %s cannot write %s over %s; use a separate output",
                                  op, out_name, names[k], op, out_name, names[k]);
        return oprt_set_error(OPRT_STATUS_OVERLAP, "%s: %s overlaps input %s (%s); use a separate output%s%s%s%s%s",
                              op, out_name, names[k],
                              out == inputs[k] ? "the same memory in another layout"
                                               : "partial overlap of the same memory",
                              alias->inplace[k] ? ", or " : "", alias->inplace[k] ? names[k] : "",
                              alias->inplace[k] ? " itself as " : "", alias->inplace[k] ? out_name : "",
                              alias->inplace[k] ? " (in place)" : "");
    }
    return OPRT_STATUS_SUCCESS;
}

/* At launch: refuses (OPRT_STATUS_OVERLAP) an out that shares a byte with an input, unless it is exactly that
 * input (same pointer and layout) and the op runs in place on it. Pointers only: device memory is not read. */
static inline oprt_status_t oprt_check_alias(const oprt_alias_t *alias, const char *op, const void *out,
                                             const void *const *inputs, const char *const *names) {
    return oprt_check_alias_named(alias, op, "out", out, inputs, names);
}

/* ------------------------------------------------------------------------- */
/* Elementwise plans                                                          */

typedef struct {
    int32_t dtype;
    int32_t ndim;          /* after dropping size-1 dims and merging; 0 for a scalar */
    int32_t ninputs;
    int32_t contiguous;    /* every tensor row-major contiguous with the out shape (no broadcast) */
    int64_t numel;
    int64_t shape[OPRT_MAX_NDIM];
    int64_t out_strides[OPRT_MAX_NDIM];
    int64_t in_strides[OPRT_MAX_INPUTS][OPRT_MAX_NDIM]; /* 0 on broadcast dims */
    oprt_alias_t alias;
} oprt_elementwise_plan_t;

/* Broadcasts each input to out's shape (numpy rules: align trailing dims, an
 * extent of 1 stretches), then simplifies the iteration space. */
static inline oprt_status_t oprt_plan_elementwise(oprt_elementwise_plan_t *plan, const oprt_tensor_desc_t *out,
                                                  const oprt_tensor_desc_t *const *inputs, int32_t ninputs,
                                                  const char *const *names) {
    OPRT_CHECK_NOT_NULL(plan);
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    for (int32_t k = 0; k < ninputs; ++k) {
        OPRT_CHECK(oprt_check_tensor(inputs[k], names[k]));
        OPRT_CHECK(oprt_check_same_dtype(out, inputs[k], names[k]));
    }
    OPRT_CHECK(oprt_check_output_strides(out, "out"));
    int64_t bstr[OPRT_MAX_INPUTS][OPRT_MAX_NDIM];
    for (int32_t k = 0; k < ninputs; ++k) {
        const oprt_tensor_desc_t *in = inputs[k];
        if (in->ndim > out->ndim) goto mismatch;
        for (int32_t i = 0; i < out->ndim; ++i) {
            int32_t j = i - (out->ndim - in->ndim);
            if (j < 0) { bstr[k][i] = 0; continue; }
            if (in->shape[j] == out->shape[i]) bstr[k][i] = in->shape[j] == 1 ? 0 : in->strides[j];
            else if (in->shape[j] == 1) bstr[k][i] = 0;
            else goto mismatch;
        }
        continue;
    mismatch: {
            char so[160], si[160];
            oprt_format_shape(out, so, sizeof so);
            oprt_format_shape(in, si, sizeof si);
            return oprt_set_error(OPRT_STATUS_BAD_SHAPE,
                                  "shape mismatch: %s has shape %s, which does not broadcast to out's shape %s",
                                  names[k], si, so);
        }
    }
    memset(plan, 0, sizeof *plan);
    oprt_plan_alias(&plan->alias, out, inputs, ninputs);
    plan->dtype = out->dtype;
    plan->ninputs = ninputs;
    plan->numel = oprt_numel(out);
    int contiguous = oprt_is_contiguous(out);
    for (int32_t k = 0; k < ninputs; ++k)
        contiguous = contiguous && oprt_same_shape(out, inputs[k]) && oprt_is_contiguous(inputs[k]);
    plan->contiguous = contiguous;
    /* drop size-1 dims */
    int32_t n = 0;
    for (int32_t i = 0; i < out->ndim; ++i) {
        if (out->shape[i] == 1) continue;
        plan->shape[n] = out->shape[i];
        plan->out_strides[n] = out->strides[i];
        for (int32_t k = 0; k < ninputs; ++k) plan->in_strides[k][n] = bstr[k][i];
        ++n;
    }
    if (plan->numel == 0) { /* nothing to iterate */
        plan->ndim = 1;
        plan->shape[0] = 0;
        return OPRT_STATUS_SUCCESS;
    }
    /* merge dim i into i+1 when every tensor walks them as one */
    int32_t m = 0;
    for (int32_t i = 0; i < n; ++i) {
        if (m > 0) {
            int32_t p = m - 1;
            int ok = plan->out_strides[p] == plan->out_strides[i] * plan->shape[i];
            for (int32_t k = 0; k < ninputs; ++k)
                ok = ok && plan->in_strides[k][p] == plan->in_strides[k][i] * plan->shape[i];
            if (ok) {
                plan->shape[p] *= plan->shape[i];
                plan->out_strides[p] = plan->out_strides[i];
                for (int32_t k = 0; k < ninputs; ++k) plan->in_strides[k][p] = plan->in_strides[k][i];
                continue;
            }
        }
        plan->shape[m] = plan->shape[i];
        plan->out_strides[m] = plan->out_strides[i];
        for (int32_t k = 0; k < ninputs; ++k) plan->in_strides[k][m] = plan->in_strides[k][i];
        ++m;
    }
    plan->ndim = m;
    return OPRT_STATUS_SUCCESS;
}

static inline oprt_status_t oprt_plan_copy(oprt_elementwise_plan_t *plan, const oprt_tensor_desc_t *out,
                                           const oprt_tensor_desc_t *x) {
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    OPRT_CHECK(oprt_check_tensor(x, "x"));
    if (!oprt_same_shape(out, x)) {
        char so[160], sx[160];
        oprt_format_shape(out, so, sizeof so);
        oprt_format_shape(x, sx, sizeof sx);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "shape mismatch: copy needs out %s to equal x %s", so, sx);
    }
    const oprt_tensor_desc_t *ins[1] = {x};
    const char *names[1] = {"x"};
    OPRT_CHECK(oprt_plan_elementwise(plan, out, ins, 1, names));
    plan->alias.inplace[0] = 1; /* each element is read before it is written */
    return OPRT_STATUS_SUCCESS;
}

static inline oprt_status_t oprt_plan_vector_add(oprt_elementwise_plan_t *plan, const oprt_tensor_desc_t *out,
                                                 const oprt_tensor_desc_t *a, const oprt_tensor_desc_t *b) {
    const oprt_tensor_desc_t *ins[2] = {a, b};
    const char *names[2] = {"a", "b"};
    OPRT_CHECK(oprt_check_tensor(a, "a"));
    OPRT_CHECK(oprt_check_tensor(b, "b"));
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    /* out must be exactly the broadcast shape of a and b, not something larger */
    int32_t nd = a->ndim > b->ndim ? a->ndim : b->ndim;
    int ok = out->ndim == nd;
    for (int32_t i = 0; ok && i < nd; ++i) {
        int32_t ia = i - (nd - a->ndim), ib = i - (nd - b->ndim);
        int64_t ea = ia >= 0 ? a->shape[ia] : 1, eb = ib >= 0 ? b->shape[ib] : 1;
        int64_t e = ea == 1 ? eb : ea;
        if (ea != 1 && eb != 1 && ea != eb) ok = 0;
        else if (out->shape[i] != e) ok = 0;
    }
    if (!ok) {
        char so[160], sa[160], sb[160];
        oprt_format_shape(out, so, sizeof so);
        oprt_format_shape(a, sa, sizeof sa);
        oprt_format_shape(b, sb, sizeof sb);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE,
                              "shape mismatch: a %s and b %s do not broadcast to out %s", sa, sb, so);
    }
    OPRT_CHECK(oprt_plan_elementwise(plan, out, ins, 2, names));
    plan->alias.inplace[0] = plan->alias.inplace[1] = 1;
    return OPRT_STATUS_SUCCESS;
}

static inline oprt_status_t oprt_plan_relu(oprt_elementwise_plan_t *plan, const oprt_tensor_desc_t *out,
                                           const oprt_tensor_desc_t *x, float negative_slope) {
    if (!isfinite(negative_slope))
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "relu: negative_slope must be finite, got %g",
                              (double)negative_slope);
    return oprt_plan_copy(plan, out, x);
}

/* ------------------------------------------------------------------------- */
/* Axis plans (reduce_sum, softmax)                                           */

typedef struct {
    int32_t dtype;
    int32_t axis;          /* normalised axis of x, or -1 when reducing over all */
    int32_t keepdims;
    int32_t contiguous;    /* x and out both row-major contiguous */
    int64_t outer, reduce, inner;   /* x seen as [outer, reduce, inner] */
    int64_t numel_in, numel_out;
    int32_t ndim;                   /* x's ndim */
    int64_t shape[OPRT_MAX_NDIM];   /* x's shape */
    int64_t x_strides[OPRT_MAX_NDIM];
    int64_t out_strides[OPRT_MAX_NDIM]; /* out's strides mapped onto x's dims; 0 on reduced dims (reduce_sum) */
    oprt_alias_t alias;
} oprt_axis_plan_t;

static inline oprt_status_t oprt_normalize_axis(int32_t axis, int32_t ndim, int32_t *normalized, const char *op) {
    if (axis < -ndim || axis >= ndim || ndim == 0)
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "%s: axis %d is out of range for a %d-d tensor (valid: %d..%d)",
                              op, (int)axis, (int)ndim, (int)-ndim, (int)ndim - 1);
    *normalized = axis < 0 ? axis + ndim : axis;
    return OPRT_STATUS_SUCCESS;
}

static inline void oprt_axis_split(oprt_axis_plan_t *plan, const oprt_tensor_desc_t *x) {
    plan->ndim = x->ndim;
    plan->outer = 1;
    plan->reduce = 1;
    plan->inner = 1;
    for (int32_t i = 0; i < x->ndim; ++i) {
        plan->shape[i] = x->shape[i];
        plan->x_strides[i] = x->strides[i];
        if (plan->axis < 0) plan->reduce *= x->shape[i];
        else if (i < plan->axis) plan->outer *= x->shape[i];
        else if (i == plan->axis) plan->reduce = x->shape[i];
        else plan->inner *= x->shape[i];
    }
    plan->numel_in = oprt_numel(x);
}

static inline oprt_status_t oprt_plan_reduce_sum(oprt_axis_plan_t *plan, const oprt_tensor_desc_t *out,
                                                 const oprt_tensor_desc_t *x, int32_t axis, int32_t keepdims) {
    OPRT_CHECK_NOT_NULL(plan);
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    OPRT_CHECK(oprt_check_tensor(x, "x"));
    OPRT_CHECK(oprt_check_same_dtype(out, x, "x"));
    memset(plan, 0, sizeof *plan);
    plan->dtype = x->dtype;
    plan->keepdims = keepdims != 0;
    if (axis == OPRT_AXIS_ALL) plan->axis = -1;
    else OPRT_CHECK(oprt_normalize_axis(axis, x->ndim, &plan->axis, "reduce_sum"));
    oprt_axis_split(plan, x);
    /* expected out shape */
    oprt_tensor_desc_t expect;
    memset(&expect, 0, sizeof expect);
    expect.dtype = x->dtype;
    int32_t map[OPRT_MAX_NDIM]; /* out dim -> x dim */
    for (int32_t i = 0; i < x->ndim; ++i) {
        int reduced = plan->axis < 0 || i == plan->axis;
        if (reduced && !plan->keepdims) continue;
        map[expect.ndim] = i;
        expect.shape[expect.ndim++] = reduced ? 1 : x->shape[i];
    }
    if (!oprt_same_shape(out, &expect)) {
        char so[160], se[160];
        oprt_format_shape(out, so, sizeof so);
        oprt_format_shape(&expect, se, sizeof se);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "shape mismatch: reduce_sum out has shape %s, expected %s",
                              so, se);
    }
    OPRT_CHECK(oprt_check_output_strides(out, "out"));
    for (int32_t i = 0; i < x->ndim; ++i) plan->out_strides[i] = 0;
    for (int32_t j = 0; j < out->ndim; ++j)
        plan->out_strides[map[j]] = out->shape[j] == 1 ? 0 : out->strides[j];
    plan->numel_out = oprt_numel(out);
    plan->contiguous = oprt_is_contiguous(x) && oprt_is_contiguous(out);
    oprt_plan_alias(&plan->alias, out, &x, 1); /* never in place: a sum may land on x while others still read it */
    return OPRT_STATUS_SUCCESS;
}

static inline oprt_status_t oprt_plan_softmax(oprt_axis_plan_t *plan, const oprt_tensor_desc_t *out,
                                              const oprt_tensor_desc_t *x, int32_t axis) {
    OPRT_CHECK_NOT_NULL(plan);
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    OPRT_CHECK(oprt_check_tensor(x, "x"));
    OPRT_CHECK(oprt_check_same_dtype(out, x, "x"));
    if (!oprt_same_shape(out, x)) {
        char so[160], sx[160];
        oprt_format_shape(out, so, sizeof so);
        oprt_format_shape(x, sx, sizeof sx);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "shape mismatch: softmax needs out %s to equal x %s", so, sx);
    }
    OPRT_CHECK(oprt_check_output_strides(out, "out"));
    memset(plan, 0, sizeof *plan);
    plan->dtype = x->dtype;
    OPRT_CHECK(oprt_normalize_axis(axis, x->ndim, &plan->axis, "softmax"));
    oprt_axis_split(plan, x);
    for (int32_t i = 0; i < x->ndim; ++i) plan->out_strides[i] = out->strides[i];
    plan->numel_out = plan->numel_in;
    plan->contiguous = oprt_is_contiguous(x) && oprt_is_contiguous(out);
    oprt_plan_alias(&plan->alias, out, &x, 1);
    plan->alias.inplace[0] = 1; /* a slice's elements are read (max, sum) before any of them is written */
    return OPRT_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* Row plans (rms_norm, layer_norm): x of shape (..., n) taken row by row along its last axis, with per-element
 * vectors (weight, bias) of shape (n,)                                        */

/* The leading `lead` dims of `shape`, walked by `nt` tensors (tensor k's strides in strides[k], NULL for a tensor
 * that stays put: all 0), with extent-1 dims dropped and each dim merged into the one before it where every tensor
 * walks the two as one. Writes the merged extents to mshape and tensor k's strides to mstrides[k]; returns the
 * merged dim count (0: one row). */
static inline int32_t oprt_merge_leading(int32_t lead, const int64_t *shape, int32_t nt,
                                         const int64_t *const *strides, int64_t *mshape, int64_t *const *mstrides) {
    int32_t m = 0;
    for (int32_t i = 0; i < lead; ++i) {
        const int64_t e = shape[i];
        if (e == 1) continue;
        int merge = m > 0;
        for (int32_t k = 0; merge && k < nt; ++k)
            merge = mstrides[k][m - 1] == (strides[k] ? strides[k][i] : 0) * e;
        const int32_t d = merge ? m - 1 : m;
        mshape[d] = merge ? mshape[d] * e : e;
        for (int32_t k = 0; k < nt; ++k) mstrides[k][d] = strides[k] ? strides[k][i] : 0;
        if (!merge) ++m;
    }
    return m;
}

typedef struct {
    int32_t dtype;
    int32_t nvec;                    /* the vectors after x: weight (and bias) */
    int64_t rows, n;                 /* x seen as rows x n */
    int64_t numel;
    int32_t ndim;                    /* leading dims, extent-1 dims dropped and mergeable dims merged; rows is their
                                      * product (0 dims: one row) */
    int64_t shape[OPRT_MAX_NDIM];
    int64_t x_strides[OPRT_MAX_NDIM], out_strides[OPRT_MAX_NDIM];
    int64_t x_inner, out_inner;      /* strides along the last axis (0 where n == 1) */
    int64_t vec_strides[2];          /* weight's and bias's strides */
    float eps;
} oprt_rows_plan_t;

/* Validates x (..., n), out of x's shape and dtype, the `nvec` vectors of shape (n,) and eps (finite, >= 0), and
 * plans the rows. `names` names x then the vectors. */
static inline oprt_status_t oprt_plan_rows(oprt_rows_plan_t *plan, const char *op, const oprt_tensor_desc_t *out,
                                           const oprt_tensor_desc_t *x, const oprt_tensor_desc_t *const *vecs,
                                           int32_t nvec, const char *const *names, float eps) {
    OPRT_CHECK_NOT_NULL(plan);
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    OPRT_CHECK(oprt_check_tensor(x, names[0]));
    OPRT_CHECK(oprt_check_same_dtype(out, x, names[0]));
    if (x->ndim < 1)
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "%s: x must have at least 1 dim (rows along its last axis), "
                              "got a 0-d tensor", op);
    const int64_t n = x->shape[x->ndim - 1];
    for (int32_t k = 0; k < nvec; ++k) {
        OPRT_CHECK(oprt_check_tensor(vecs[k], names[k + 1]));
        OPRT_CHECK(oprt_check_same_dtype(out, vecs[k], names[k + 1]));
        if (vecs[k]->ndim != 1 || vecs[k]->shape[0] != n) {
            char sv[160], sx[160];
            oprt_format_shape(vecs[k], sv, sizeof sv);
            oprt_format_shape(x, sx, sizeof sx);
            return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "%s: shape mismatch: %s has shape %s, expected (%lld,) for "
                                  "x of shape %s", op, names[k + 1], sv, (long long)n, sx);
        }
    }
    if (!oprt_same_shape(out, x)) {
        char so[160], sx[160];
        oprt_format_shape(out, so, sizeof so);
        oprt_format_shape(x, sx, sizeof sx);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "shape mismatch: %s needs out %s to equal x %s", op, so, sx);
    }
    if (!isfinite(eps) || eps < 0.0f)
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "%s: eps must be finite and >= 0, got %g", op, (double)eps);
    OPRT_CHECK(oprt_check_output_strides(out, "out"));
    memset(plan, 0, sizeof *plan);
    plan->dtype = x->dtype;
    plan->nvec = nvec;
    plan->n = n;
    plan->numel = oprt_numel(x);
    plan->rows = 1;
    for (int32_t i = 0; i < x->ndim - 1; ++i) plan->rows *= x->shape[i];
    plan->x_inner = n > 1 ? x->strides[x->ndim - 1] : 0;
    plan->out_inner = n > 1 ? out->strides[x->ndim - 1] : 0;
    for (int32_t k = 0; k < nvec; ++k) plan->vec_strides[k] = n > 1 ? vecs[k]->strides[0] : 0;
    plan->eps = eps;
    const int64_t *const strides[2] = {x->strides, out->strides};
    int64_t *const merged[2] = {plan->x_strides, plan->out_strides};
    plan->ndim = oprt_merge_leading(x->ndim - 1, x->shape, 2, strides, plan->shape, merged);
    return OPRT_STATUS_SUCCESS;
}

/* Element offsets of row r's first element in x and out (r in [0, rows)). */
static inline void oprt_row_offsets(const oprt_rows_plan_t *p, int64_t r, int64_t *xo, int64_t *oo) {
    int64_t a = 0, b = 0;
    for (int32_t i = p->ndim - 1; i >= 0; --i) {
        const int64_t e = p->shape[i], q = r % e;
        a += q * p->x_strides[i];
        b += q * p->out_strides[i];
        r /= e;
    }
    *xo = a;
    *oo = b;
}

static inline oprt_status_t oprt_plan_rms_norm(oprt_rows_plan_t *plan, const oprt_tensor_desc_t *out,
                                               const oprt_tensor_desc_t *x, const oprt_tensor_desc_t *weight,
                                               float eps) {
    static const char *const names[2] = {"x", "weight"};
    const oprt_tensor_desc_t *vecs[1] = {weight};
    return oprt_plan_rows(plan, "rms_norm", out, x, vecs, 1, names, eps);
}

static inline oprt_status_t oprt_plan_layer_norm(oprt_rows_plan_t *plan, const oprt_tensor_desc_t *out,
                                                 const oprt_tensor_desc_t *x, const oprt_tensor_desc_t *weight,
                                                 const oprt_tensor_desc_t *bias, float eps) {
    static const char *const names[3] = {"x", "weight", "bias"};
    const oprt_tensor_desc_t *vecs[2] = {weight, bias};
    return oprt_plan_rows(plan, "layer_norm", out, x, vecs, 2, names, eps);
}

/* ------------------------------------------------------------------------- */
/* cross_entropy: logits of shape (..., V) taken row by row, an i64 target per row (the leading shape), out per
 * row (reduction none) or one element (mean)                                  */

#define OPRT_REDUCTION_NONE 0
#define OPRT_REDUCTION_MEAN 1

typedef struct {
    int32_t dtype;                   /* logits' and out's */
    int32_t reduction;               /* OPRT_REDUCTION_NONE or OPRT_REDUCTION_MEAN */
    int64_t ignore_index;
    int64_t rows, v;                 /* logits seen as rows x v */
    int64_t numel;                   /* of logits */
    int32_t ndim;                    /* leading dims, extent-1 dims dropped and mergeable dims merged; rows is their
                                      * product (0 dims: one row) */
    int64_t shape[OPRT_MAX_NDIM];
    int64_t x_strides[OPRT_MAX_NDIM], t_strides[OPRT_MAX_NDIM], out_strides[OPRT_MAX_NDIM]; /* out's 0 for mean */
    int64_t x_inner;                 /* logits' stride along the classes (0 where v == 1) */
} oprt_xent_plan_t;

/* Validates logits (..., V) of a value dtype with V >= 1 (or no row), target of logits' leading shape and dtype
 * i64, out of logits' dtype and of target's shape (reduction none) or 0-d (mean), and plans the rows. */
static inline oprt_status_t oprt_plan_cross_entropy(oprt_xent_plan_t *plan, const oprt_tensor_desc_t *out,
                                                    const oprt_tensor_desc_t *logits,
                                                    const oprt_tensor_desc_t *target, int32_t ignore_index,
                                                    int32_t reduction) {
    OPRT_CHECK_NOT_NULL(plan);
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    OPRT_CHECK(oprt_check_tensor(logits, "logits"));
    OPRT_CHECK(oprt_check_same_dtype(out, logits, "logits"));
    OPRT_CHECK(oprt_check_index_tensor(target, "cross_entropy", "target", 0));
    if (logits->ndim < 1)
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "cross_entropy: logits must have at least 1 dim (classes along "
                              "its last axis), got a 0-d tensor");
    const int32_t lead = logits->ndim - 1;
    const int64_t v = logits->shape[lead];
    int same = target->ndim == lead;
    for (int32_t i = 0; same && i < lead; ++i) same = target->shape[i] == logits->shape[i];
    if (!same) {
        char st[160], sl[160];
        oprt_format_shape(target, st, sizeof st);
        oprt_format_shape(logits, sl, sizeof sl);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "cross_entropy: shape mismatch: target has shape %s, expected "
                              "logits' shape without its last dim, for logits of shape %s", st, sl);
    }
    int64_t rows = 1;
    for (int32_t i = 0; i < lead; ++i) rows *= logits->shape[i];
    if (v == 0 && rows > 0)
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "cross_entropy: logits have no class (a last dim of 0)");
    if (reduction != OPRT_REDUCTION_NONE && reduction != OPRT_REDUCTION_MEAN)
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "cross_entropy: reduction must be 0 (none) or 1 (mean), got %d",
                              (int)reduction);
    const int mean = reduction == OPRT_REDUCTION_MEAN;
    if (mean ? out->ndim != 0 : !oprt_same_shape(out, target)) {
        char so[160], st[160];
        oprt_format_shape(out, so, sizeof so);
        oprt_format_shape(target, st, sizeof st);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "cross_entropy: shape mismatch: out has shape %s, expected %s",
                              so, mean ? "() for reduction mean" : st);
    }
    OPRT_CHECK(oprt_check_output_strides(out, "out"));
    memset(plan, 0, sizeof *plan);
    plan->dtype = logits->dtype;
    plan->reduction = reduction;
    plan->ignore_index = ignore_index;
    plan->rows = rows;
    plan->v = v;
    plan->numel = oprt_numel(logits);
    plan->x_inner = v > 1 ? logits->strides[lead] : 0;
    const int64_t *const strides[3] = {logits->strides, target->strides, mean ? NULL : out->strides};
    int64_t *const merged[3] = {plan->x_strides, plan->t_strides, plan->out_strides};
    plan->ndim = oprt_merge_leading(lead, logits->shape, 3, strides, plan->shape, merged);
    return OPRT_STATUS_SUCCESS;
}

/* Element offsets of row r's first logit, its target and its loss (r in [0, rows)). */
static inline void oprt_xent_row_offsets(const oprt_xent_plan_t *p, int64_t r, int64_t *xo, int64_t *to,
                                         int64_t *oo) {
    int64_t a = 0, b = 0, c = 0;
    for (int32_t i = p->ndim - 1; i >= 0; --i) {
        const int64_t e = p->shape[i], q = r % e;
        a += q * p->x_strides[i];
        b += q * p->t_strides[i];
        c += q * p->out_strides[i];
        r /= e;
    }
    *xo = a;
    *to = b;
    *oo = c;
}

/* add_rms_norm: h = x + residual and out = rms_norm(h) * weight. A rows plan of x and out (the leading dims merged
 * only where residual's and h's merge too), with residual's and h's strides on the same leading dims. */
typedef struct {
    oprt_rows_plan_t rows;
    int64_t res_strides[OPRT_MAX_NDIM], h_strides[OPRT_MAX_NDIM];
    int64_t res_inner, h_inner;
} oprt_add_rows_plan_t;

static inline oprt_status_t oprt_plan_add_rms_norm(oprt_add_rows_plan_t *plan, const oprt_tensor_desc_t *out,
                                                   const oprt_tensor_desc_t *h, const oprt_tensor_desc_t *x,
                                                   const oprt_tensor_desc_t *residual,
                                                   const oprt_tensor_desc_t *weight, float eps) {
    static const char *const names[2] = {"x", "weight"};
    static const char *const same_names[2] = {"residual", "h"};
    const oprt_tensor_desc_t *vecs[1] = {weight};
    const oprt_tensor_desc_t *same[2] = {residual, h};
    OPRT_CHECK_NOT_NULL(plan);
    OPRT_CHECK(oprt_plan_rows(&plan->rows, "add_rms_norm", out, x, vecs, 1, names, eps));
    for (int32_t k = 0; k < 2; ++k) {
        OPRT_CHECK(oprt_check_tensor(same[k], same_names[k]));
        OPRT_CHECK(oprt_check_same_dtype(out, same[k], same_names[k]));
        if (!oprt_same_shape(same[k], x)) {
            char s1[160], sx[160];
            oprt_format_shape(same[k], s1, sizeof s1);
            oprt_format_shape(x, sx, sizeof sx);
            return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "add_rms_norm: shape mismatch: %s has shape %s, expected "
                                  "x's shape %s", same_names[k], s1, sx);
        }
    }
    OPRT_CHECK(oprt_check_output_strides(h, "h"));
    const int64_t n = plan->rows.n;
    plan->res_inner = n > 1 ? residual->strides[x->ndim - 1] : 0;
    plan->h_inner = n > 1 ? h->strides[x->ndim - 1] : 0;
    /* the leading dims again, merged only where all four tensors merge */
    oprt_rows_plan_t *r = &plan->rows;
    const int64_t *const strides[4] = {x->strides, out->strides, residual->strides, h->strides};
    int64_t *const merged[4] = {r->x_strides, r->out_strides, plan->res_strides, plan->h_strides};
    r->ndim = oprt_merge_leading(x->ndim - 1, x->shape, 4, strides, r->shape, merged);
    return OPRT_STATUS_SUCCESS;
}

/* Element offsets of row r's first element in residual and h (r in [0, rows)). */
static inline void oprt_add_row_offsets(const oprt_add_rows_plan_t *p, int64_t r, int64_t *ro, int64_t *ho) {
    int64_t a = 0, b = 0;
    for (int32_t i = p->rows.ndim - 1; i >= 0; --i) {
        const int64_t e = p->rows.shape[i], q = r % e;
        a += q * p->res_strides[i];
        b += q * p->h_strides[i];
        r /= e;
    }
    *ro = a;
    *ho = b;
}

/* ------------------------------------------------------------------------- */
/* rope: q (T, Hq, D) and k (T, Hk, D) rotated into q_out and k_out (q_out may be exactly q, k_out k), cos and sin
 * (P, D/2), positions (T,) of i32 or i64; any strides                          */

#define OPRT_ROPE_NEOX 0
#define OPRT_ROPE_GPTJ 1
#define OPRT_ROPE_MAX_HEAD_DIM 256

typedef struct {
    int32_t dtype;                   /* q's, k's, cos', sin's and the outputs' */
    int32_t pos_dtype;               /* OPRT_DTYPE_I32 or OPRT_DTYPE_I64 */
    int32_t style;                   /* OPRT_ROPE_NEOX or OPRT_ROPE_GPTJ */
    int64_t t, hq, hk, d, p;         /* tokens, q heads, k heads, head_dim, cached positions */
    int64_t q_strides[3], k_strides[3], qo_strides[3], ko_strides[3]; /* token, head, element */
    int64_t cos_strides[2], sin_strides[2];                           /* position, pair */
    int64_t pos_stride;
} oprt_rope_plan_t;

static inline oprt_status_t oprt_rope_shape_error_(const char *name, const oprt_tensor_desc_t *t,
                                                   const char *expected) {
    char st[160];
    oprt_format_shape(t, st, sizeof st);
    return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "rope: shape mismatch: %s has shape %s, expected %s", name, st,
                          expected);
}

static inline oprt_status_t oprt_plan_rope(oprt_rope_plan_t *plan, const oprt_tensor_desc_t *q_out,
                                           const oprt_tensor_desc_t *k_out, const oprt_tensor_desc_t *q,
                                           const oprt_tensor_desc_t *k, const oprt_tensor_desc_t *cos,
                                           const oprt_tensor_desc_t *sin, const oprt_tensor_desc_t *positions,
                                           int32_t style) {
    static const char *const names[6] = {"q_out", "k_out", "q", "k", "cos", "sin"};
    const oprt_tensor_desc_t *vals[6] = {q_out, k_out, q, k, cos, sin};
    OPRT_CHECK_NOT_NULL(plan);
    for (int32_t i = 0; i < 6; ++i) {
        OPRT_CHECK(oprt_check_tensor(vals[i], names[i]));
        if (i > 0) OPRT_CHECK(oprt_check_same_dtype(q_out, vals[i], names[i]));
    }
    OPRT_CHECK(oprt_check_index_tensor(positions, "rope", "positions", 1));
    if (q->ndim != 3) {
        char sq[160];
        oprt_format_shape(q, sq, sizeof sq);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "rope: q must have 3 dims (tokens, heads, head_dim), got "
                              "shape %s", sq);
    }
    const int64_t t = q->shape[0], d = q->shape[2];
    char want[200];
    snprintf(want, sizeof want, "(%lld, kv_heads, %lld): q's tokens and head_dim", (long long)t, (long long)d);
    if (k->ndim != 3 || k->shape[0] != t || k->shape[2] != d) return oprt_rope_shape_error_("k", k, want);
    if (d % 2 != 0 || d < 2 || d > OPRT_ROPE_MAX_HEAD_DIM)
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "rope: head_dim must be even and in [2, %d], got %lld",
                              OPRT_ROPE_MAX_HEAD_DIM, (long long)d);
    snprintf(want, sizeof want, "(positions, %lld): head_dim / 2 wide", (long long)(d / 2));
    if (cos->ndim != 2 || cos->shape[1] != d / 2) return oprt_rope_shape_error_("cos", cos, want);
    if (!oprt_same_shape(sin, cos)) return oprt_rope_shape_error_("sin", sin, "cos' shape");
    if (cos->shape[0] == 0 && t > 0)
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "rope: cos and sin have no position for %lld tokens",
                              (long long)t);
    snprintf(want, sizeof want, "(%lld,): one position per token", (long long)t);
    if (positions->ndim != 1 || positions->shape[0] != t)
        return oprt_rope_shape_error_("positions", positions, want);
    if (!oprt_same_shape(q_out, q)) return oprt_rope_shape_error_("q_out", q_out, "q's shape");
    if (!oprt_same_shape(k_out, k)) return oprt_rope_shape_error_("k_out", k_out, "k's shape");
    if (style != OPRT_ROPE_NEOX && style != OPRT_ROPE_GPTJ)
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "rope: style must be 0 (neox) or 1 (gptj), got %d", (int)style);
    OPRT_CHECK(oprt_check_output_strides(q_out, "q_out"));
    OPRT_CHECK(oprt_check_output_strides(k_out, "k_out"));
    memset(plan, 0, sizeof *plan);
    plan->dtype = q->dtype;
    plan->pos_dtype = positions->dtype;
    plan->style = style;
    plan->t = t;
    plan->hq = q->shape[1];
    plan->hk = k->shape[1];
    plan->d = d;
    plan->p = cos->shape[0];
    for (int32_t i = 0; i < 3; ++i) {
        plan->q_strides[i] = q->strides[i];
        plan->k_strides[i] = k->strides[i];
        plan->qo_strides[i] = q_out->strides[i];
        plan->ko_strides[i] = k_out->strides[i];
    }
    for (int32_t i = 0; i < 2; ++i) {
        plan->cos_strides[i] = cos->strides[i];
        plan->sin_strides[i] = sin->strides[i];
    }
    plan->pos_stride = positions->strides[0];
    return OPRT_STATUS_SUCCESS;
}

/* Element offsets of pair i's two elements within a head (stride `s` along head_dim). */
static inline void oprt_rope_pair(const oprt_rope_plan_t *p, int64_t i, int64_t s, int64_t *o1, int64_t *o2) {
    if (p->style == OPRT_ROPE_NEOX) {
        *o1 = i * s;
        *o2 = (i + p->d / 2) * s;
    } else {
        *o1 = 2 * i * s;
        *o2 = (2 * i + 1) * s;
    }
}

/* silu_mul: gate, up and out of one shape and dtype; any strides (an elementwise plan, no broadcasting). */
static inline oprt_status_t oprt_plan_silu_mul(oprt_elementwise_plan_t *plan, const oprt_tensor_desc_t *out,
                                               const oprt_tensor_desc_t *gate, const oprt_tensor_desc_t *up) {
    static const char *const names[2] = {"gate", "up"};
    const oprt_tensor_desc_t *ins[2] = {gate, up};
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    for (int32_t k = 0; k < 2; ++k) {
        OPRT_CHECK(oprt_check_tensor(ins[k], names[k]));
        if (!oprt_same_shape(out, ins[k])) {
            char so[160], si[160];
            oprt_format_shape(out, so, sizeof so);
            oprt_format_shape(ins[k], si, sizeof si);
            return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "shape mismatch: silu_mul needs %s %s to equal out %s "
                                  "(gate, up and out of one shape)", names[k], si, so);
        }
    }
    return oprt_plan_elementwise(plan, out, ins, 2, names);
}

/* ------------------------------------------------------------------------- */
/* matmul: out = alpha * a @ b + beta * c, a (M, K) @ b (K, N) -> (M, N), or batched (B, M, K) @ (B, K, N) ->
 * (B, M, N), c optional and of out's shape; any strides (a transposed view is a column-major operand)          */

typedef struct {
    int32_t dtype;                   /* out's and c's; a's and b's too, but where in_dtype says e4m3 */
    int32_t allow_tf32;              /* 0 or 1: f32 inputs may be rounded to TF32 */
    int64_t batch, m, n, k;          /* batch 1 for 2-D operands */
    int64_t a_bs, a_rs, a_cs;        /* a[p, i, l] at p * a_bs + i * a_rs + l * a_cs (a_bs 0 for 2-D) */
    int64_t b_bs, b_rs, b_cs;        /* b[p, l, j] at p * b_bs + l * b_rs + j * b_cs */
    int64_t o_bs, o_rs, o_cs;        /* out[p, i, j] at p * o_bs + i * o_rs + j * o_cs */
    float alpha;
    float beta;                      /* 0 where has_c is 0 */
    int32_t has_c;                   /* 1: c is read (given and beta != 0); 0: out = alpha * a @ b, c unread */
    int64_t c_bs, c_rs, c_cs;        /* c[p, i, j] at p * c_bs + i * c_rs + j * c_cs (0 where has_c is 0) */
    int32_t in_dtype;                /* a's and b's: dtype, or OPRT_DTYPE_F8E4M3 (dtype then bf16) */
} oprt_matmul_plan_t;

static inline oprt_status_t oprt_matmul_shape_error_(const char *what, const oprt_tensor_desc_t *a,
                                                    const oprt_tensor_desc_t *b) {
    char sa[160], sb[160];
    oprt_format_shape(a, sa, sizeof sa);
    oprt_format_shape(b, sb, sizeof sb);
    return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "matmul: %s; got a of shape %s and b of shape %s", what, sa, sb);
}

/* Validates a, b and out (one value dtype, or a and b e4m3 with out bf16; ranks 2 or 3, alike; a's K = b's K;
 * batched, one batch extent; out of shape (..., M, N)), c (NULL, or of out's dtype and exactly its shape, any strides), alpha and beta (finite; beta
 * != 0 needs c) and allow_tf32 (0 or 1), and plans the product as strided (B, rows, cols) views. c given with beta
 * == 0 is validated and not read (has_c 0), as BLAS defines it. Aliasing is the launch's (oprt_check_launch): out
 * may be exactly c, nothing else. */
static inline oprt_status_t oprt_plan_matmul(oprt_matmul_plan_t *plan, const oprt_tensor_desc_t *out,
                                             const oprt_tensor_desc_t *a, const oprt_tensor_desc_t *b,
                                             const oprt_tensor_desc_t *c, float alpha, float beta,
                                             int32_t allow_tf32) {
    OPRT_CHECK_NOT_NULL(plan);
    OPRT_CHECK(oprt_check_tensor(out, "out"));
    OPRT_CHECK(oprt_check_tensor_or_e4m3(a, "a"));
    OPRT_CHECK(oprt_check_tensor_or_e4m3(b, "b"));
    if (c != NULL) OPRT_CHECK(oprt_check_tensor(c, "c"));
    if (a->dtype == OPRT_DTYPE_F8E4M3 || b->dtype == OPRT_DTYPE_F8E4M3) {
        /* the one mix: e4m3 a and b, bf16 out (and c, checked below against out) */
        if (a->dtype != b->dtype || out->dtype != OPRT_DTYPE_BF16)
            return oprt_set_error(OPRT_STATUS_UNSUPPORTED_DTYPE,
                                  "matmul: dtype mismatch: a is %s, b is %s and out is %s; the only mixed dtypes "
                                  "matmul takes are e4m3 a and b with bf16 out and c", oprt_dtype_name(a->dtype),
                                  oprt_dtype_name(b->dtype), oprt_dtype_name(out->dtype));
    } else {
        OPRT_CHECK(oprt_check_same_dtype(out, a, "a"));
        OPRT_CHECK(oprt_check_same_dtype(out, b, "b"));
    }
    if (c != NULL) OPRT_CHECK(oprt_check_same_dtype(out, c, "c"));
    if ((a->ndim != 2 && a->ndim != 3) || (b->ndim != 2 && b->ndim != 3))
        return oprt_matmul_shape_error_("a and b must be 2-D (M, K) and (K, N), or 3-D (B, M, K) and (B, K, N)", a,
                                        b);
    if (a->ndim != b->ndim)
        return oprt_matmul_shape_error_("a and b must have the same rank (both 2-D or both 3-D, batched)", a, b);
    const int32_t nd = a->ndim;
    if (a->shape[nd - 1] != b->shape[nd - 2])
        return oprt_matmul_shape_error_("inner dims mismatch: a's last extent (K) must equal b's second-to-last",
                                        a, b);
    if (nd == 3 && a->shape[0] != b->shape[0])
        return oprt_matmul_shape_error_("batch mismatch: batched inputs must have the same batch extent", a, b);
    const int64_t m = a->shape[nd - 2], n = b->shape[nd - 1];
    if (out->ndim != nd || out->shape[nd - 2] != m || out->shape[nd - 1] != n ||
        (nd == 3 && out->shape[0] != a->shape[0])) {
        char so[160], sa[160], sb[160];
        oprt_format_shape(out, so, sizeof so);
        oprt_format_shape(a, sa, sizeof sa);
        oprt_format_shape(b, sb, sizeof sb);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "matmul: shape mismatch: out has shape %s, expected %s(%lld, "
                              "%lld) for a of shape %s and b of shape %s", so, nd == 3 ? "a batch of " : "",
                              (long long)m, (long long)n, sa, sb);
    }
    if (c != NULL && !oprt_same_shape(c, out)) {
        char sc[160], so[160];
        oprt_format_shape(c, sc, sizeof sc);
        oprt_format_shape(out, so, sizeof so);
        return oprt_set_error(OPRT_STATUS_BAD_SHAPE, "matmul: c has shape %s, expected out's shape %s (c is not "
                              "broadcast)", sc, so);
    }
    if (!isfinite(alpha))
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "matmul: alpha must be finite, got %g", (double)alpha);
    if (!isfinite(beta))
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "matmul: beta must be finite, got %g", (double)beta);
    if (beta != 0.0f && c == NULL)
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "matmul: beta is %g but c is NULL: alpha * a @ b + beta * c "
                              "needs c, of out's shape (pass c, or beta 0)", (double)beta);
    if (allow_tf32 != 0 && allow_tf32 != 1)
        return oprt_set_error(OPRT_STATUS_BAD_PARAM, "matmul: allow_tf32 must be 0 or 1, got %d", (int)allow_tf32);
    OPRT_CHECK(oprt_check_output_strides(out, "out"));
    memset(plan, 0, sizeof *plan);
    plan->dtype = out->dtype;
    plan->in_dtype = a->dtype;
    plan->allow_tf32 = allow_tf32;
    plan->batch = nd == 3 ? a->shape[0] : 1;
    plan->m = m;
    plan->n = n;
    plan->k = a->shape[nd - 1];
    const int32_t o = nd - 2; /* the first of the two matrix dims */
    plan->a_bs = nd == 3 ? a->strides[0] : 0;
    plan->b_bs = nd == 3 ? b->strides[0] : 0;
    plan->o_bs = nd == 3 ? out->strides[0] : 0;
    plan->a_rs = a->strides[o];
    plan->a_cs = a->strides[o + 1];
    plan->b_rs = b->strides[o];
    plan->b_cs = b->strides[o + 1];
    plan->o_rs = out->strides[o];
    plan->o_cs = out->strides[o + 1];
    plan->alpha = alpha;
    if (c != NULL && beta != 0.0f) {
        plan->has_c = 1;
        plan->beta = beta;
        plan->c_bs = nd == 3 ? c->strides[0] : 0;
        plan->c_rs = c->strides[o];
        plan->c_cs = c->strides[o + 1];
    }
    return OPRT_STATUS_SUCCESS;
}

/* ------------------------------------------------------------------------- */
/* What the generated entry points (oprt_entry.h) keep beside a backend's own state                  */

typedef struct {
    size_t workspace_size;              /* bytes a launch needs (the backend's plan function sets it) */
    int64_t numel_out;
    int32_t ninputs;
    int64_t numel_in[OPRT_MAX_INPUTS];
    oprt_alias_t alias;
} oprt_op_common_t;

/* Fills `c` (but workspace_size) for validated tensors; alias.inplace left 0 (the generated code sets the
 * inputs the op's declaration lets out be). A NULL input is an optional one left out: empty to the launch checks
 * (its pointer is not looked at). */
static inline void oprt_op_common_init(oprt_op_common_t *c, const oprt_tensor_desc_t *out,
                                       const oprt_tensor_desc_t *const *inputs, int32_t ninputs) {
    c->numel_out = oprt_numel(out);
    c->ninputs = ninputs;
    for (int32_t k = 0; k < ninputs; ++k) c->numel_in[k] = inputs[k] != NULL ? oprt_numel(inputs[k]) : 0;
    oprt_plan_alias(&c->alias, out, inputs, ninputs);
}

/* The checks every launch makes before its kernel: workspace large enough (and not NULL where needed), out and
 * each non-empty input not NULL, no overlap of out with an input beyond what the op allows. */
static inline oprt_status_t oprt_check_launch(const oprt_op_common_t *c, const char *op, const void *workspace,
                                              size_t workspace_size, const void *out, const void *const *inputs,
                                              const char *const *names) {
    if (workspace_size < c->workspace_size)
        return oprt_set_error(OPRT_STATUS_INSUFFICIENT_WORKSPACE,
                              "%s: workspace of %zu bytes is too small; this descriptor needs %zu bytes", op,
                              workspace_size, c->workspace_size);
    if (c->workspace_size > 0 && workspace == NULL)
        return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: argument 'workspace' is NULL but %zu bytes are needed",
                              op, c->workspace_size);
    if (c->numel_out > 0 && out == NULL)
        return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: argument 'out' is NULL", op);
    for (int32_t k = 0; k < c->ninputs; ++k)
        if (c->numel_in[k] > 0 && inputs[k] == NULL)
            return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: argument '%s' is NULL", op, names[k]);
    return oprt_check_alias(&c->alias, op, out, inputs, names);
}

/* ------------------------------------------------------------------------- */
/* What the generated entry points of an op with several outputs keep (oprt_entry.h: OPRT_DEFINE_OP of such an op) */

#define OPRT_MAX_OUTPUTS 4

typedef struct {
    size_t workspace_size;               /* bytes a launch needs (the backend's plan function sets it) */
    int32_t noutputs, ninputs;
    int64_t numel_out[OPRT_MAX_OUTPUTS];
    int64_t numel_in[OPRT_MAX_INPUTS];
    oprt_alias_t alias[OPRT_MAX_OUTPUTS]; /* output j against the inputs; alias[j].inplace[k]: output j may be input k */
} oprt_op_outputs_t;

/* Fills `c` (but workspace_size) for validated tensors; every inplace left 0 (the generated code sets what the op's
 * declaration allows). */
static inline void oprt_op_outputs_init(oprt_op_outputs_t *c, const oprt_tensor_desc_t *const *outs,
                                        int32_t noutputs, const oprt_tensor_desc_t *const *inputs, int32_t ninputs) {
    c->noutputs = noutputs;
    c->ninputs = ninputs;
    for (int32_t k = 0; k < ninputs; ++k) c->numel_in[k] = inputs[k] != NULL ? oprt_numel(inputs[k]) : 0;
    for (int32_t j = 0; j < noutputs; ++j) {
        c->numel_out[j] = oprt_numel(outs[j]);
        oprt_plan_alias(&c->alias[j], outs[j], inputs, ninputs);
    }
}

/* oprt_check_launch of an op with several outputs: the workspace, no NULL output or input (but empty ones), each
 * output's overlap with the inputs as its declaration allows, and no two outputs sharing a byte. */
static inline oprt_status_t oprt_check_launch_outputs(const oprt_op_outputs_t *c, const char *op,
                                                      const void *workspace, size_t workspace_size,
                                                      void *const *outs, const char *const *out_names,
                                                      const void *const *inputs, const char *const *names) {
    if (workspace_size < c->workspace_size)
        return oprt_set_error(OPRT_STATUS_INSUFFICIENT_WORKSPACE,
                              "%s: workspace of %zu bytes is too small; this descriptor needs %zu bytes", op,
                              workspace_size, c->workspace_size);
    if (c->workspace_size > 0 && workspace == NULL)
        return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: argument 'workspace' is NULL but %zu bytes are needed",
                              op, c->workspace_size);
    for (int32_t j = 0; j < c->noutputs; ++j)
        if (c->numel_out[j] > 0 && outs[j] == NULL)
            return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: argument '%s' is NULL", op, out_names[j]);
    for (int32_t k = 0; k < c->ninputs; ++k)
        if (c->numel_in[k] > 0 && inputs[k] == NULL)
            return oprt_set_error(OPRT_STATUS_NULL_POINTER, "%s: argument '%s' is NULL", op, names[k]);
    for (int32_t j = 0; j < c->noutputs; ++j) {
        OPRT_CHECK(oprt_check_alias_named(&c->alias[j], op, out_names[j], outs[j], inputs, names));
        for (int32_t i = 0; i < j; ++i)
            if (oprt_spans_intersect((uintptr_t)outs[i], c->alias[i].out_lo, c->alias[i].out_hi, (uintptr_t)outs[j],
                                     c->alias[j].out_lo, c->alias[j].out_hi) &&
                !oprt_rows_disjoint((uintptr_t)outs[i], &c->alias[i].out_rows, (uintptr_t)outs[j],
                                    &c->alias[j].out_rows))
                return oprt_set_error(OPRT_STATUS_OVERLAP, "%s: outputs %s and %s share memory; use separate outputs",
                                      op, out_names[i], out_names[j]);
    }
    return OPRT_STATUS_SUCCESS;
}

/* Element offset of the flat index `idx` (row-major over shape) given strides. */
static inline int64_t oprt_offset_of(int64_t idx, int32_t ndim, const int64_t *shape, const int64_t *strides) {
    int64_t off = 0;
    for (int32_t i = ndim - 1; i >= 0; --i) {
        int64_t e = shape[i];
        off += (idx % e) * strides[i];
        idx /= e;
    }
    return off;
}

#ifdef __cplusplus
}
#endif

/* ------------------------------------------------------------------------- */
#ifdef OPRT_IMPLEMENTATION

#ifdef __cplusplus
#define OPRT_THREAD_LOCAL thread_local
#else
#define OPRT_THREAD_LOCAL _Thread_local
#endif

static OPRT_THREAD_LOCAL char oprt_error_buffer_[1024];

#ifdef __cplusplus
extern "C" {
#endif

oprt_status_t oprt_set_error(oprt_status_t status, const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    vsnprintf(oprt_error_buffer_, sizeof oprt_error_buffer_, fmt, args);
    va_end(args);
    return status;
}

void oprt_clear_error(void) { oprt_error_buffer_[0] = '\0'; }

const char *oprt_last_error_message(void) { return oprt_error_buffer_; }

int32_t oprt_library_abi_version(void) { return OPRT_ABI_VERSION; }

const char *oprt_status_string(oprt_status_t status) {
    switch (status) {
    case OPRT_STATUS_SUCCESS: return "success";
    case OPRT_STATUS_NULL_POINTER: return "null pointer";
    case OPRT_STATUS_BAD_SHAPE: return "bad shape";
    case OPRT_STATUS_BAD_STRIDES: return "bad strides";
    case OPRT_STATUS_BAD_PARAM: return "bad parameter";
    case OPRT_STATUS_UNSUPPORTED_DTYPE: return "unsupported dtype";
    case OPRT_STATUS_UNSUPPORTED_CASE: return "unsupported case";
    case OPRT_STATUS_INSUFFICIENT_WORKSPACE: return "insufficient workspace";
    case OPRT_STATUS_DEVICE_ERROR: return "device or runtime error";
    case OPRT_STATUS_OUT_OF_MEMORY: return "out of memory";
    case OPRT_STATUS_NO_DEVICE: return "no device";
    case OPRT_STATUS_BAD_DEVICE: return "bad device index";
    case OPRT_STATUS_OVERLAP: return "out overlaps an input";
    case OPRT_STATUS_DEVICE_FAULT: return "device fault (sticky: the device context is unusable)";
    }
    return "unknown status";
}

#ifdef __cplusplus
}
#endif
#endif /* OPRT_IMPLEMENTATION */

#endif /* OPRT_VALIDATE_H_ */

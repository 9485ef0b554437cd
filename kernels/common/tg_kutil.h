/* Small tensor helpers of the kernels: PyTorch's TypeMeta dtype names for out= messages,
 * out= preparation, a tensor's first element and the element offsets of a tensor visited in
 * its logical (row-major) order, and the epilogue every backend's kernels share (release the
 * temporaries, write a working copy back into out=, hand over or release the results). PyTorch's ScalarType names ("Float") and the "[2, 3]" shape
 * format are the runtime's (tg__dtype_torch_name, tg__shape_str in runtime/core/core.h).
 *
 * Included by the CPU kernels (reduce.c, linalg.c, shape.c, softmax.c, ...), the composites, the
 * *_checks.h headers and, through tg_cuda.cuh, every CUDA kernel (host code). Everything is
 * static inline; C11 and C++. */
#ifndef TG_KUTIL_H
#define TG_KUTIL_H

#include "core/core.h"
#include "tg_op_types.h" /* tg_tensors2, tg_tensors3 */

/* PyTorch's TypeMeta names ("float", "long int"), as in "Expected out tensor to have dtype
 * float, but got double instead". */
static inline const char *tg__k_meta_name(tg_dtype t)
{
    switch (t) {
    case TG_BOOL: return "bool";
    case TG_UINT8: return "unsigned char";
    case TG_INT8: return "signed char";
    case TG_INT16: return "short int";
    case TG_INT32: return "int";
    case TG_INT64: return "long int";
    case TG_FLOAT16: return "c10::Half";
    case TG_BFLOAT16: return "c10::BFloat16";
    case TG_FLOAT32: return "float";
    case TG_FLOAT64: return "double";
    default: return "nullptr (uninitialized)";
    }
}

/* Structured out= handling. out == NULL: allocates a contiguous tensor of the shape and dtype.
 * Otherwise checks out's dtype is exactly `dtype` (PyTorch's structured kernels require it),
 * resizes it when it has no elements, and requires the exact shape otherwise. Returns a new
 * reference (to the new tensor or to out), or NULL with an error recorded. */
static inline tg_tensor *tg__k_prepare_out(const char *op, tg_tensor *out, const int64_t *sizes,
                                           int64_t ndim, tg_dtype dtype)
{
    if (!out) return tg__empty(op, sizes, ndim, dtype, TG_DEVICE_CPU);
    if (out->dtype != dtype)
        return (tg_tensor *)tg__error(op,
                                      "Expected out tensor to have dtype %s, but got %s instead",
                                      tg__k_meta_name(dtype), tg__k_meta_name(out->dtype));
    if (tg__resize_out(op, out, sizes, ndim) != 0) return NULL;
    return tg_retain(out);
}

/* Element offset (from t's data pointer) of the element with row-major linear index `i`. */
static inline int64_t tg__k_offset(const tg_tensor *t, int64_t i)
{
    int64_t off = 0;
    for (int64_t d = t->ndim - 1; d >= 0 && i > 0; d--) {
        int64_t s = t->sizes[d];
        off += (i % s) * t->strides[d];
        i /= s;
    }
    return off;
}

static inline char *tg__k_data(const tg_tensor *t)
{
    return (char *)t->storage->data + t->storage_offset * (int64_t)tg_dtype_size(t->dtype);
}

/* One element's bytes in a tensor's dtype (a fill value), for a loop's context. */
typedef struct tg_k_elem {
    unsigned char bytes[16];
    size_t size;
} tg_k_elem;

/* A backward's output_mask as three flags (missing entries false). */
static inline void tg__k_output_mask(tg_bool_list mask, bool want[3])
{
    for (int i = 0; i < 3; i++) want[i] = i < mask.len && mask.data[i];
}

/* ---- epilogues ---- */

/* Releases the n tensors of t (NULL entries allowed): a kernel's temporaries. */
static inline void tg__k_release_all(tg_tensor *const *t, int n)
{
    for (int i = 0; i < n; i++) tg_release(t[i]);
}

/* An out= argument the kernel wrote through `work`, a contiguous working copy (or out itself
 * when out was contiguous): when they differ and rc is 0, copies work into out (core's copy,
 * which bumps out's version). Releases work. Returns rc, or -1 with the error recorded. */
static inline int tg__k_write_back(const char *op, tg_tensor *out, tg_tensor *work, int rc)
{
    if (rc == 0 && work != out && tg__copy_into(op, out, work) != 0) rc = -1;
    tg_release(work);
    return rc;
}

/* A kernel's result when ok, else NULL with r released. */
static inline tg_tensor *tg__k_result(bool ok, tg_tensor *r)
{
    if (ok) return r;
    tg_release(r);
    return NULL;
}

/* tg__k_result for a kernel with an out= argument: when ok and the result is the caller's out=
 * (`is_out`), out's version is bumped after the write. */
static inline tg_tensor *tg__k_result_out(bool ok, tg_tensor *r, bool is_out)
{
    if (ok && is_out) tg__bump_version(r);
    return tg__k_result(ok, r);
}

/* A backend's copy of src into dst (broadcasting, converting the dtype): core's tg__copy_into
 * or a backend's own. Returns 0, or -1 with the error recorded. */
typedef int (*tg_k_copy_fn)(const char *op, tg_tensor *dst, const tg_tensor *src);

/* t itself (a new reference) when it already has dtype dt and is contiguous; otherwise a new
 * contiguous tensor of t's shape and device in dt, filled by `copy`. NULL with the error
 * recorded. */
static inline tg_tensor *tg__k_contiguous_as(const char *op, tg_tensor *t, tg_dtype dt,
                                             tg_k_copy_fn copy)
{
    if (t->dtype == dt && tg__is_contiguous(t)) return tg_retain(t);
    tg_tensor *r = tg__empty(op, t->sizes, t->ndim, dt, t->device);
    return tg__k_result(r && copy(op, r, t) == 0, r);
}

/* A backend's conversion of t (consumed) to dtype dt: a new reference, or NULL with the error
 * recorded. */
typedef tg_tensor *(*tg_k_convert_fn)(const char *op, tg_tensor *t, tg_dtype dt);

/* A kernel's two results, r.r0 converted to dtype dt by `convert` (the working dtype back to
 * the operand's); when that fails, r.r1 is released too and both are NULL. */
static inline tg_tensors2 tg__k_convert_first(const char *op, tg_tensors2 r, tg_dtype dt,
                                              tg_k_convert_fn convert)
{
    r.r0 = convert(op, r.r0, dt);
    if (!r.r0) {
        tg_release(r.r1);
        r.r1 = NULL;
    }
    return r;
}

/* A kernel's two or three results when ok; otherwise all are released and NULL. */
static inline tg_tensors2 tg__k_results2(bool ok, tg_tensor *r0, tg_tensor *r1)
{
    tg_tensors2 r = { tg__k_result(ok, r0), tg__k_result(ok, r1) };
    return r;
}
static inline tg_tensors3 tg__k_results3(bool ok, tg_tensor *r0, tg_tensor *r1, tg_tensor *r2)
{
    tg_tensors3 r = { tg__k_result(ok, r0), tg__k_result(ok, r1), tg__k_result(ok, r2) };
    return r;
}

#endif

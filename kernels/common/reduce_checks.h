/* Argument checks, output dtypes and the common steps of the reductions (which kinds
 * accumulate in int64, the end of a run), shared by the CPU kernels (kernels/cpu/reduce.c) and
 * the CUDA kernels (kernels/cuda/reduce.cu) so that both report PyTorch's messages identically.
 * Static inline, C and C++. */
#ifndef TG_REDUCE_CHECKS_H
#define TG_REDUCE_CHECKS_H

#include "tg_kutil.h"
#include "reduce_view.h"
#include "tg_op_types.h" /* tg_values_indices */
#include <string.h>

/* PyTorch's check that a reduction with no identity (max, amax, argmax) has elements.
 * `dims` NULL means "no dim given"; `wrap` reports the wrapped dim. 0 or -1 + error. */
static inline int tg__reduce_check_nonempty(const char *op, const char *fn, const tg_tensor *self,
                                            const int64_t *dims, int64_t ndims, bool wrap)
{
    if (tg__numel(self) != 0) return 0;
    if (!dims || ndims == 0)
        return tg__fail(op,
                        "%s: Expected reduction dim to be specified for input.numel() == 0. "
                        "Specify the reduction dim with the 'dim' argument.",
                        fn);
    for (int64_t k = 0; k < ndims; k++) {
        int64_t d = tg__wrap_dim(op, dims[k], self->ndim);
        if (d < 0) return -1;
        if (self->sizes[d] == 0)
            return tg__fail(op, "%s: Expected reduction dim %lld to have non-zero size.", fn,
                            (long long)(wrap ? d : dims[k]));
    }
    return 0;
}

/* Output dtype of sum and prod: the dtype argument, else out's, else int64 for integral
 * inputs (bool included), else self's. */
static inline tg_dtype tg__reduce_sum_dtype(const tg_tensor *self, tg_dtype dtype,
                                            const tg_tensor *out)
{
    return dtype != TG_DTYPE_NONE                    ? dtype
           : out                                     ? out->dtype
           : tg_dtype_is_integral(self->dtype, true) ? TG_INT64
                                                     : self->dtype;
}

/* Output dtype of mean into *odt; integral inputs without a floating dtype argument are an
 * error. 0 or -1. */
static inline int tg__reduce_mean_dtype(const tg_tensor *self, tg_dtype dtype, const tg_tensor *out,
                                        tg_dtype *odt)
{
    tg_dtype in = dtype != TG_DTYPE_NONE                    ? dtype
                  : tg_dtype_is_integral(self->dtype, true) ? TG_INT64
                                                            : self->dtype;
    if (!tg_dtype_is_floating(in))
        return tg__fail("mean",
                        "mean(): could not infer output dtype. %s dtype must be either a "
                        "floating point or complex dtype. Got: %s",
                        dtype != TG_DTYPE_NONE ? "Optional" : "Input",
                        tg__dtype_torch_name(dtype != TG_DTYPE_NONE ? dtype : self->dtype));
    *odt = dtype != TG_DTYPE_NONE ? dtype : out ? out->dtype : self->dtype;
    return 0;
}

/* amax/amin: out's dtype must be self's, and the reduction needs elements. 0 or -1. */
static inline int tg__reduce_check_amax(const char *op, const char *fn, const tg_tensor *self,
                                        tg_int_list dim, const tg_tensor *out)
{
    if (out && out->dtype != self->dtype)
        return tg__fail(op,
                        "Expected the dtype for input and out to match, but got %s for "
                        "input's dtype and %s for out's dtype.",
                        tg__dtype_torch_name(self->dtype), tg__dtype_torch_name(out->dtype));
    return tg__reduce_check_nonempty(op, fn, self, dim.data, dim.len, false);
}

/* argmax/argmin: the dim (when given) must have elements; without a dim, the input. */
static inline int tg__reduce_check_arg(const char *op, const char *fn, const tg_tensor *self,
                                       tg_opt_int dim)
{
    int64_t d[1] = { dim };
    if (!tg_is_none_int(dim)) return tg__reduce_check_nonempty(op, fn, self, d, 1, true);
    if (tg__numel(self) != 0) return 0;
    return tg__fail(op, "%s: Expected reduction dim to be specified for input.numel() == 0.", fn);
}

/* Whether a reduction accumulates in int64 with wrap-around (else in double): sum and prod by
 * their output dtype, max, min and the arg reductions by self's; mean, var, std never. */
static inline bool tg__reduce_integral(rkind kind, tg_dtype odt, tg_dtype self_dtype)
{
    if (kind == R_SUM || kind == R_PROD) return tg_dtype_is_integral(odt, true);
    if (kind == R_MEAN || kind == R_VAR || kind == R_STD) return false;
    return tg_dtype_is_integral(self_dtype, true);
}

/* The end of a reduction in every backend, after the run's status rc: on failure the outputs
 * are released (*res2 = NULL for max.dim/min.dim's indices) and NULL returned; otherwise the
 * user's out= tensors get a version bump and res is returned. */
static inline tg_tensor *tg__reduce_done(int rc, tg_tensor *res, tg_tensor **res2,
                                         const tg_tensor *out, const tg_tensor *out2)
{
    if (rc != 0) {
        tg_release(res);
        if (res2) {
            tg_release(*res2);
            *res2 = NULL;
        }
        return NULL;
    }
    if (out) tg__bump_version(res);
    if (res2 && out2) tg__bump_version(*res2);
    return res;
}

/* var/std accept floating dtypes only. 0 or -1. */
static inline int tg__reduce_check_var(const char *op, const tg_tensor *self)
{
    if (tg_dtype_is_floating(self->dtype)) return 0;
    return tg__fail(op, "std and var only support floating point and complex dtypes");
}

/* ------------------------------------------------------------------ the operators
 * Every reduction kernel is its backend's body (reduce.c's and reduce.cu's reduce_common)
 * behind the same argument handling, which the functions below do, given that body. */

/* One reduction as the argument handling below hands it to a backend's body. */
typedef struct tg_reduce_req {
    const char *op;
    rkind kind;
    tg_tensor *self;
    tg_dtype odt;          /* the output's dtype */
    tg_tensor *out, *out2; /* the user's out= tensors, or NULL; out2: max.dim/min.dim's indices */
    int64_t correction;    /* var/std's */
    /* Filled by tg__reduce_run: */
    tg_reduce_plan plan; /* the output's shape, which input dims reduce */
    rview v;             /* self as outer (kept) x inner (reduced) dims */
    bool integer;        /* accumulates in int64 with wrap-around (tg__reduce_integral) */
} tg_reduce_req;

/* A backend's reduction body: prepares the output (rq->out, or a new tensor) and, when res2
 * is not NULL, the int64 indices (rq->out2, or new) into *res2, and runs. A new reference, or
 * NULL with the error recorded (and *res2 NULL). */
typedef tg_tensor *(*tg_reduce_fn)(const tg_reduce_req *rq, tg_tensor **res2);

static inline void tg__reduce_req_init(tg_reduce_req *rq, const char *op, rkind kind,
                                       tg_tensor *self, tg_dtype odt, tg_tensor *out)
{
    memset(rq, 0, sizeof *rq);
    rq->op = op;
    rq->kind = kind;
    rq->self = self;
    rq->odt = odt;
    rq->out = out;
}

/* Plans rq's reduction of self over dims (NULL/0: all) and runs it with the backend's body. */
static inline tg_tensor *tg__reduce_run(tg_reduce_fn run, tg_reduce_req *rq, const int64_t *dims,
                                        int64_t ndims, bool keepdim, tg_tensor **res2)
{
    if (tg__reduce_plan_make(&rq->plan, rq->op, rq->self, dims, ndims, keepdim) != 0) return NULL;
    const bool ordered = rq->kind == R_ARGMAX || rq->kind == R_ARGMIN; /* first index wins */
    tg__rv_build(&rq->v, rq->self, rq->plan.reduce_dim, !ordered);
    rq->integer = tg__reduce_integral(rq->kind, rq->odt, rq->self->dtype);
    return run(rq, res2);
}

/* sum.IntList_out: over dim (None/empty = all). */
static inline tg_tensor *tg__reduce_sum(tg_reduce_fn run, tg_tensor *self, tg_int_list dim,
                                        bool keepdim, tg_dtype dtype, tg_tensor *out)
{
    tg_reduce_req rq;
    tg__reduce_req_init(&rq, "sum", R_SUM, self, tg__reduce_sum_dtype(self, dtype, out), out);
    return tg__reduce_run(run, &rq, dim.data, dim.len, keepdim, NULL);
}

/* mean.out: floating results only. */
static inline tg_tensor *tg__reduce_mean(tg_reduce_fn run, tg_tensor *self, tg_int_list dim,
                                         bool keepdim, tg_dtype dtype, tg_tensor *out)
{
    tg_dtype odt;
    if (tg__reduce_mean_dtype(self, dtype, out, &odt) != 0) return NULL;
    tg_reduce_req rq;
    tg__reduce_req_init(&rq, "mean", R_MEAN, self, odt, out);
    return tg__reduce_run(run, &rq, dim.data, dim.len, keepdim, NULL);
}

/* prod.int_out: over one dim (the full product is the composite `prod`). */
static inline tg_tensor *tg__reduce_prod(tg_reduce_fn run, tg_tensor *self, int64_t dim,
                                         bool keepdim, tg_dtype dtype, tg_tensor *out)
{
    tg_reduce_req rq;
    tg__reduce_req_init(&rq, "prod", R_PROD, self, tg__reduce_sum_dtype(self, dtype, out), out);
    int64_t d[1] = { dim };
    return tg__reduce_run(run, &rq, d, 1, keepdim, NULL);
}

/* amax/amin (kind R_MAX, R_MIN): `fn` is PyTorch's name in messages ("amax()"). */
static inline tg_tensor *tg__reduce_amax_amin(tg_reduce_fn run, const char *op, const char *fn,
                                              rkind kind, tg_tensor *self, tg_int_list dim,
                                              bool keepdim, tg_tensor *out)
{
    if (tg__reduce_check_amax(op, fn, self, dim, out) != 0) return NULL;
    tg_reduce_req rq;
    tg__reduce_req_init(&rq, op, kind, self, self->dtype, out);
    return tg__reduce_run(run, &rq, dim.data, dim.len, keepdim, NULL);
}

/* max.dim/min.dim (kind R_ARGMAX, R_ARGMIN): the values (self's dtype) and the int64 indices
 * of the extreme along dim; both NULL on error. */
static inline tg_values_indices tg__reduce_max_min_dim(tg_reduce_fn run, const char *op,
                                                       const char *fn, rkind kind, tg_tensor *self,
                                                       int64_t dim, bool keepdim, tg_tensor *values,
                                                       tg_tensor *indices)
{
    int64_t d[1] = { dim };
    tg_values_indices r = { NULL, NULL };
    if (tg__reduce_check_nonempty(op, fn, self, d, 1, true) != 0) return r;
    tg_reduce_req rq;
    tg__reduce_req_init(&rq, op, kind, self, self->dtype, values);
    rq.out2 = indices;
    tg_tensor *idx = NULL;
    r.values = tg__reduce_run(run, &rq, d, 1, keepdim, &idx);
    if (r.values) r.indices = idx;
    return r;
}

/* argmax/argmin: the int64 index of the extreme along dim, or in the flattened tensor when
 * dim is None. */
static inline tg_tensor *tg__reduce_arg(tg_reduce_fn run, const char *op, const char *fn,
                                        rkind kind, tg_tensor *self, tg_opt_int dim, bool keepdim,
                                        tg_tensor *out)
{
    int64_t d[1] = { dim };
    if (tg__reduce_check_arg(op, fn, self, dim) != 0) return NULL;
    tg_reduce_req rq;
    tg__reduce_req_init(&rq, op, kind, self, TG_INT64, out);
    return tg__reduce_run(run, &rq, tg_is_none_int(dim) ? NULL : d, tg_is_none_int(dim) ? 0 : 1,
                          keepdim, NULL);
}

/* var/std (kind R_VAR, R_STD): correction defaults to 1 (Bessel's). */
static inline tg_tensor *tg__reduce_var_std(tg_reduce_fn run, const char *op, rkind kind,
                                            tg_tensor *self, tg_int_list dim, tg_opt_int correction,
                                            bool keepdim, tg_tensor *out)
{
    if (tg__reduce_check_var(op, self) != 0) return NULL;
    tg_reduce_req rq;
    tg__reduce_req_init(&rq, op, kind, self, self->dtype, out);
    rq.correction = tg_is_none_int(correction) ? 1 : correction;
    return tg__reduce_run(run, &rq, dim.data, dim.len, keepdim, NULL);
}

#endif

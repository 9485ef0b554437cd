/* Argument checks, output dtypes and the common steps of the reductions (which kinds
 * accumulate in int64, the end of a run), shared by the CPU kernels (kernels/cpu/reduce.c) and
 * the CUDA kernels (kernels/cuda/reduce.cu) so that both report PyTorch's messages identically.
 * Static inline, C and C++. */
#ifndef TG_REDUCE_CHECKS_H
#define TG_REDUCE_CHECKS_H

#include "tg_kutil.h"
#include "reduce_view.h"

/* PyTorch's check that a reduction with no identity (max, amax, argmax) has elements.
 * `dims` NULL means "no dim given"; `wrap` reports the wrapped dim. 0 or -1 + error. */
static inline int tg__reduce_check_nonempty(const char *op, const char *fn, const tg_tensor *self,
                                            const int64_t *dims, int64_t ndims, bool wrap)
{
    if (tg__numel(self) != 0) return 0;
    if (!dims || ndims == 0) {
        tg__error(op,
                  "%s: Expected reduction dim to be specified for input.numel() == 0. "
                  "Specify the reduction dim with the 'dim' argument.",
                  fn);
        return -1;
    }
    for (int64_t k = 0; k < ndims; k++) {
        int64_t d = tg__wrap_dim(op, dims[k], self->ndim);
        if (d < 0) return -1;
        if (self->sizes[d] == 0) {
            tg__error(op, "%s: Expected reduction dim %lld to have non-zero size.", fn,
                      (long long)(wrap ? d : dims[k]));
            return -1;
        }
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
    if (!tg_dtype_is_floating(in)) {
        tg__error("mean",
                  "mean(): could not infer output dtype. %s dtype must be either a "
                  "floating point or complex dtype. Got: %s",
                  dtype != TG_DTYPE_NONE ? "Optional" : "Input",
                  tg__dtype_torch_name(dtype != TG_DTYPE_NONE ? dtype : self->dtype));
        return -1;
    }
    *odt = dtype != TG_DTYPE_NONE ? dtype : out ? out->dtype : self->dtype;
    return 0;
}

/* amax/amin: out's dtype must be self's, and the reduction needs elements. 0 or -1. */
static inline int tg__reduce_check_amax(const char *op, const char *fn, const tg_tensor *self,
                                        tg_int_list dim, const tg_tensor *out)
{
    if (out && out->dtype != self->dtype) {
        tg__error(op,
                  "Expected the dtype for input and out to match, but got %s for "
                  "input's dtype and %s for out's dtype.",
                  tg__dtype_torch_name(self->dtype), tg__dtype_torch_name(out->dtype));
        return -1;
    }
    return tg__reduce_check_nonempty(op, fn, self, dim.data, dim.len, false);
}

/* argmax/argmin: the dim (when given) must have elements; without a dim, the input. */
static inline int tg__reduce_check_arg(const char *op, const char *fn, const tg_tensor *self,
                                       tg_opt_int dim)
{
    int64_t d[1] = { dim.value };
    if (dim.has_value) return tg__reduce_check_nonempty(op, fn, self, d, 1, true);
    if (tg__numel(self) != 0) return 0;
    tg__error(op, "%s: Expected reduction dim to be specified for input.numel() == 0.", fn);
    return -1;
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
    tg__error(op, "std and var only support floating point and complex dtypes");
    return -1;
}

/* ------------------------------------------------------------------ the operators
 * Every reduction kernel is its backend's body (reduce.c's and reduce.cu's reduce_common)
 * behind the same argument handling, which the functions below do, given that body. */

/* A backend's reduction body: plans the reduction of self over dims (NULL/0: all), prepares
 * the output (dtype odt; out NULL: allocated) and, for max.dim/min.dim, the int64 indices
 * (out2) into *res2, and runs. A new reference, or NULL with the error recorded. */
typedef tg_tensor *(*tg_reduce_fn)(const char *op, rkind kind, tg_tensor *self, const int64_t *dims,
                                   int64_t ndims, bool keepdim, tg_dtype odt, tg_tensor *out,
                                   tg_tensor *out2, tg_tensor **res2, int64_t correction);

/* sum.IntList_out: over dim (None/empty = all). */
static inline tg_tensor *tg__reduce_sum(tg_reduce_fn run, tg_tensor *self, tg_int_list dim,
                                        bool keepdim, tg_dtype dtype, tg_tensor *out)
{
    tg_dtype odt = tg__reduce_sum_dtype(self, dtype, out);
    return run("sum", R_SUM, self, dim.data, dim.len, keepdim, odt, out, NULL, NULL, 0);
}

/* mean.out: floating results only. */
static inline tg_tensor *tg__reduce_mean(tg_reduce_fn run, tg_tensor *self, tg_int_list dim,
                                         bool keepdim, tg_dtype dtype, tg_tensor *out)
{
    tg_dtype odt;
    if (tg__reduce_mean_dtype(self, dtype, out, &odt) != 0) return NULL;
    return run("mean", R_MEAN, self, dim.data, dim.len, keepdim, odt, out, NULL, NULL, 0);
}

/* prod.int_out: over one dim (the full product is the composite `prod`). */
static inline tg_tensor *tg__reduce_prod(tg_reduce_fn run, tg_tensor *self, int64_t dim,
                                         bool keepdim, tg_dtype dtype, tg_tensor *out)
{
    tg_dtype odt = tg__reduce_sum_dtype(self, dtype, out);
    int64_t d[1] = { dim };
    return run("prod", R_PROD, self, d, 1, keepdim, odt, out, NULL, NULL, 0);
}

/* amax/amin (kind R_MAX, R_MIN): `fn` is PyTorch's name in messages ("amax()"). */
static inline tg_tensor *tg__reduce_amax_amin(tg_reduce_fn run, const char *op, const char *fn,
                                              rkind kind, tg_tensor *self, tg_int_list dim,
                                              bool keepdim, tg_tensor *out)
{
    if (tg__reduce_check_amax(op, fn, self, dim, out) != 0) return NULL;
    return run(op, kind, self, dim.data, dim.len, keepdim, self->dtype, out, NULL, NULL, 0);
}

/* max.dim/min.dim (kind R_ARGMAX, R_ARGMIN): the values (self's dtype, returned) and the
 * int64 indices (*indices_res) of the extreme along dim; both NULL on error. */
static inline tg_tensor *tg__reduce_max_min_dim(tg_reduce_fn run, const char *op, const char *fn,
                                                rkind kind, tg_tensor *self, int64_t dim,
                                                bool keepdim, tg_tensor *values, tg_tensor *indices,
                                                tg_tensor **indices_res)
{
    int64_t d[1] = { dim };
    tg_tensor *idx = NULL;
    *indices_res = NULL;
    if (tg__reduce_check_nonempty(op, fn, self, d, 1, true) != 0) return NULL;
    tg_tensor *r = run(op, kind, self, d, 1, keepdim, self->dtype, values, indices, &idx, 0);
    *indices_res = r ? idx : NULL;
    return r;
}

/* argmax/argmin: the int64 index of the extreme along dim, or in the flattened tensor when
 * dim is None. */
static inline tg_tensor *tg__reduce_arg(tg_reduce_fn run, const char *op, const char *fn,
                                        rkind kind, tg_tensor *self, tg_opt_int dim, bool keepdim,
                                        tg_tensor *out)
{
    int64_t d[1] = { dim.value };
    if (tg__reduce_check_arg(op, fn, self, dim) != 0) return NULL;
    return run(op, kind, self, dim.has_value ? d : NULL, dim.has_value ? 1 : 0, keepdim, TG_INT64,
               out, NULL, NULL, 0);
}

/* var/std (kind R_VAR, R_STD): correction defaults to 1 (Bessel's). */
static inline tg_tensor *tg__reduce_var_std(tg_reduce_fn run, const char *op, rkind kind,
                                            tg_tensor *self, tg_int_list dim, tg_opt_int correction,
                                            bool keepdim, tg_tensor *out)
{
    if (tg__reduce_check_var(op, self) != 0) return NULL;
    int64_t corr = correction.has_value ? correction.value : 1;
    return run(op, kind, self, dim.data, dim.len, keepdim, self->dtype, out, NULL, NULL, corr);
}

#endif

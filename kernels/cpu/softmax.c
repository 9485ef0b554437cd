/* softmax and log_softmax (_softmax.out / _log_softmax.out) and their backward operators
 * (_softmax_backward_data, _log_softmax_backward_data); CUDA's are kernels/cuda/softmax.cu.
 *
 * self is viewed as [outer, n, inner] around `dim`. Numerically stable: each slice subtracts
 * its maximum before exponentiating, so exp never overflows and the largest term is 1.
 *
 * Reference path (any float dtype and strides): softmax_ref, computing in double.
 * Fast path: float32 with the reduced dim contiguous (stride 1, e.g. the last dim of a
 * contiguous tensor): three fused passes over each row, parallel over rows:
 *   softmax:     m = max(x);  out = exp(x - m) and s = sum(out);  out *= 1 / s
 *   log_softmax: m = max(x);  s = sum(exp(x - m));               out = x - m - log(s)
 * The rows are short enough (a few KB) that passes 2 and 3 hit L1/L2, so the row is read from
 * memory once and written once. The row is built once per CPU capability
 * (cap/softmax_rows.c).
 *
 * The backwards view their (equal-shaped) operands as [outer, n, inner] around dim,
 * contiguous, and handle one slice of n elements at a time, in parallel over slices:
 *   softmax:     gi = y * (g - sum(g * y))        (y = softmax output)
 *   log_softmax: gi = g - exp(y) * sum(g)         (y = log_softmax output)
 * float32 and float64 have typed loops (sums in double); float16/bfloat16 compute in float32. */
#include "tg_kutil.h"
#include "pointwise_convert.h"
#include "reduce_view.h" /* tg__view3 */
#include "softmax_checks.h"
#include "softmax_rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/_log_softmax.h"
#include "kernels/_log_softmax_backward_data.h"
#include "kernels/_softmax.h"
#include "kernels/_softmax_backward_data.h"

typedef struct sm_job {
    bool log;
    tg_dtype dt;
    const char *x;
    char *y;
    int64_t n, inner;                   /* slice length, inner extent */
    int64_t xs_outer, xs_dim, xs_inner; /* self strides (elements) */
    int64_t ys_outer, ys_dim, ys_inner; /* out strides (elements) */
} sm_job;

/* ------------------------------------------------------------------ reference path */

/* One slice: n elements at x (stride xs) into y (stride ys), in double. */
static void softmax_ref_slice(const sm_job *j, const char *x, char *y)
{
    size_t e = tg_dtype_size(j->dt);
    int64_t xs = j->xs_dim * (int64_t)e, ys = j->ys_dim * (int64_t)e;
    double m = -INFINITY, s = 0;
    for (int64_t k = 0; k < j->n; k++) {
        double v = tg__pw_load_f64(x + k * xs, j->dt);
        if (v > m || v != v) m = v;
        if (m != m) break;
    }
    for (int64_t k = 0; k < j->n; k++) s += exp(tg__pw_load_f64(x + k * xs, j->dt) - m);
    double ls = log(s);
    for (int64_t k = 0; k < j->n; k++) {
        double v = tg__pw_load_f64(x + k * xs, j->dt) - m;
        tg__pw_store_f64(y + k * ys, j->dt, j->log ? v - ls : exp(v) / s);
    }
}

/* ------------------------------------------------------------------ float32 rows */

/* ------------------------------------------------------------------ drivers */

static bool fast_rows(const sm_job *j)
{
    return j->dt == TG_FLOAT32 && j->xs_dim == 1 && j->ys_dim == 1;
}

static void slices_task(int64_t b, int64_t e, void *ctx)
{
    const sm_job *j = ctx;
    size_t es = tg_dtype_size(j->dt);
    const tg_softmax_rows *rows = TG_CAP_PICK(tg__softmax_rows);
    float stack_tmp[4096];
    float *tmp = stack_tmp;
    /* the default rows need no scratch, so they serve when there is none */
    if (fast_rows(j) && j->n > 4096 && !(tmp = malloc(sizeof(float) * (size_t)j->n)))
        rows = &tg__softmax_rows_default;
    for (int64_t s = b; s < e; s++) {
        int64_t o = s / j->inner, i = s % j->inner;
        const char *x = j->x + (o * j->xs_outer + i * j->xs_inner) * (int64_t)es;
        char *y = j->y + (o * j->ys_outer + i * j->ys_inner) * (int64_t)es;
        if (!fast_rows(j)) softmax_ref_slice(j, x, y);
        else rows->row_f32((const float *)x, (float *)y, tmp, j->n, j->log);
    }
    if (fast_rows(j)) rows->finish();
    if (tmp != stack_tmp && tmp) free(tmp);
}

static tg_tensor *softmax_common(const char *op, bool lg, tg_tensor *self, int64_t dim,
                                 bool half_to_float, tg_tensor *out)
{
    int64_t d = tg__wrap_dim(op, dim, self->ndim);
    if (d < 0) return NULL;
    if (tg__softmax_check_dtype(op, lg, self, d) != 0) return NULL;
    if (half_to_float)
        return tg__error(op, "%s with half to float conversion is not supported on CPU",
                         lg ? "log_softmax" : "softmax");
    tg_tensor *res = tg__k_prepare_out(op, out, self->sizes, self->ndim, self->dtype);
    if (!res) return NULL;
    int64_t n = self->ndim ? self->sizes[d] : 1;
    int64_t numel = tg__numel(self);
    if (numel == 0) return res;
    sm_job j = { lg, self->dtype, tg__k_data(self), tg__k_data(res), n, 1, 0, 0, 0, 0, 0, 0 };
    for (int64_t k = d + 1; k < self->ndim; k++) j.inner *= self->sizes[k];
    bool ok = tg__view3(self, d, &j.xs_outer, &j.xs_dim, &j.xs_inner) &&
              tg__view3(res, d, &j.ys_outer, &j.ys_dim, &j.ys_inner);
    if (!ok) {
        /* strides that do not collapse to [outer, n, inner]: walk slices by linear index */
        size_t es = tg_dtype_size(self->dtype);
        int64_t nslices = numel / n;
        for (int64_t s = 0; s < nslices; s++) {
            int64_t o = s / j.inner, i = s % j.inner, lin = (o * n) * j.inner + i;
            sm_job one = j;
            one.xs_dim = self->strides[d];
            one.ys_dim = res->strides[d];
            softmax_ref_slice(&one, j.x + tg__k_offset(self, lin) * (int64_t)es,
                              j.y + tg__k_offset(res, lin) * (int64_t)es);
        }
    } else {
        int64_t slices = numel / n;
        int64_t grain = n >= tg__grain_size() ? 1 : tg__grain_size() / n;
        tg__parallel_for(slices, grain, slices_task, &j);
    }
    if (out) tg__bump_version(res);
    return res;
}

/* self is any shape; out has self's shape; softmax along dim. */
tg_tensor *tg__cpu_softmax_out(tg_tensor *self, int64_t dim, bool half_to_float, tg_tensor *out)
{
    return softmax_common("_softmax", false, self, dim, half_to_float, out);
}

tg_tensor *tg__cpu_log_softmax_out(tg_tensor *self, int64_t dim, bool half_to_float, tg_tensor *out)
{
    return softmax_common("_log_softmax", true, self, dim, half_to_float, out);
}

/* ------------------------------------------------------------------ softmax backwards */

typedef struct smb_job {
    bool log;
    const char *g, *y;
    char *out;
    int64_t outer, n, inner;
    tg_dtype dt; /* float32 or float64 */
} smb_job;

/* Element i of a float32 (f32) or float64 array, as a double. */
TG_ALWAYS_INLINE double smb_load(const char *p, int64_t i, bool f32)
{
    return f32 ? (double)((const float *)p)[i] : ((const double *)p)[i];
}

/* A slice's sum, in double for both dtypes: of grad (log_softmax) or of grad * output
 * (softmax). Elements k * inner (k < n) from base offset `off`. */
TG_ALWAYS_INLINE double smb_sum(const smb_job *j, int64_t off, bool f32)
{
    const int64_t s = j->inner;
    double acc = 0;
    for (int64_t k = 0; k < j->n; k++) {
        double g = smb_load(j->g, off + k * s, f32);
        acc += j->log ? g : g * smb_load(j->y, off + k * s, f32);
    }
    return acc;
}

/* One slice: elements k * inner (k < n) from base offset `off`. */
static void smb_slice_f64(const smb_job *j, int64_t off)
{
    const double *g = (const double *)j->g + off, *y = (const double *)j->y + off;
    double *o = (double *)j->out + off;
    int64_t s = j->inner;
    double acc = smb_sum(j, off, false);
    if (j->log)
        for (int64_t k = 0; k < j->n; k++) o[k * s] = g[k * s] - exp(y[k * s]) * acc;
    else
        for (int64_t k = 0; k < j->n; k++) o[k * s] = y[k * s] * (g[k * s] - acc);
}

/* The float32 slice: the sum in double, the rest in float. */
static void smb_slice_f32(const smb_job *j, int64_t off)
{
    const float *g = (const float *)j->g + off, *y = (const float *)j->y + off;
    float *o = (float *)j->out + off;
    int64_t s = j->inner;
    float a = (float)smb_sum(j, off, true);
    if (j->log)
        for (int64_t k = 0; k < j->n; k++) o[k * s] = g[k * s] - expf(y[k * s]) * a;
    else
        for (int64_t k = 0; k < j->n; k++) o[k * s] = y[k * s] * (g[k * s] - a);
}

static void smb_range(int64_t b, int64_t e, void *ctx)
{
    const smb_job *j = ctx;
    for (int64_t i = b; i < e; i++) {
        int64_t off = (i / j->inner) * j->n * j->inner + i % j->inner;
        if (j->dt == TG_FLOAT64) smb_slice_f64(j, off);
        else smb_slice_f32(j, off);
    }
}

static tg_tensor *softmax_backward(const char *op, const char *check_name, bool log,
                                   tg_tensor *grad_output, tg_tensor *output, int64_t dim)
{
    int64_t d;
    if (tg__softmax_backward_check(op, check_name, grad_output, output, dim, &d) != 0) return NULL;
    tg_dtype rdt = grad_output->dtype;
    tg_dtype cdt = rdt == TG_FLOAT64 ? TG_FLOAT64 : TG_FLOAT32;
    tg_tensor *g = NULL, *y = NULL, *out = NULL;
    /* Contiguous operands in the computation dtype (copies only when needed). */
    g = grad_output->dtype == cdt ? tg__contiguous(op, grad_output)
                                  : tg__empty_like(op, grad_output, cdt);
    if (g && grad_output->dtype != cdt && tg__copy_into(op, g, grad_output) != 0) goto fail;
    y = output->dtype == cdt ? tg__contiguous(op, output) : tg__empty_like(op, output, cdt);
    if (y && output->dtype != cdt && tg__copy_into(op, y, output) != 0) goto fail;
    out = g && y ? tg__empty_like(op, grad_output, cdt) : NULL;
    if (!out) goto fail;
    smb_job j = {
        .log = log, .g = tg__k_data(g), .y = tg__k_data(y), .out = tg__k_data(out), .dt = cdt
    };
    j.n = output->ndim ? output->sizes[d] : 1;
    j.outer = 1;
    j.inner = 1;
    for (int64_t k = 0; k < d; k++) j.outer *= output->sizes[k];
    for (int64_t k = d + 1; k < output->ndim; k++) j.inner *= output->sizes[k];
    int64_t slices = j.outer * j.inner;
    if (slices > 0 && j.n > 0) {
        int64_t grain = tg__grain_size() / j.n;
        tg__parallel_for(slices, grain < 1 ? 1 : grain, smb_range, &j);
    }
    tg_release(g);
    tg_release(y);
    if (rdt == cdt) return out;
    tg_tensor *r = tg__empty_like(op, out, rdt);
    if (r && tg__copy_into(op, r, out) != 0) {
        tg_release(r);
        r = NULL;
    }
    tg_release(out);
    return r;
fail:
    tg_release(g);
    tg_release(y);
    tg_release(out);
    return NULL;
}

/* The result has grad_output's dtype (PyTorch's CPU kernels do not convert to input_dtype). */
tg_tensor *tg__cpu_softmax_backward_data(tg_tensor *grad_output, tg_tensor *output, int64_t dim,
                                         tg_dtype input_dtype)
{
    (void)input_dtype;
    return softmax_backward("_softmax_backward_data", "softmax_backward", false, grad_output,
                            output, dim);
}

tg_tensor *tg__cpu_log_softmax_backward_data(tg_tensor *grad_output, tg_tensor *output, int64_t dim,
                                             tg_dtype input_dtype)
{
    (void)input_dtype;
    return softmax_backward("_log_softmax_backward_data", "log_softmax_backward", true, grad_output,
                            output, dim);
}

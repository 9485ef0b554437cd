/* Backward kernels of the nn family: threshold_backward (relu's gradient),
 * _softmax_backward_data and _log_softmax_backward_data.
 *
 * threshold_backward is pointwise over the broadcasting iterator (grad_output and self
 * promoted to one dtype): out = self <= threshold ? 0 : grad_output.
 *
 * The softmax backwards view their (equal-shaped) operands as [outer, n, inner] around dim,
 * contiguous, and handle one slice of n elements at a time, in parallel over slices:
 *   softmax:     gi = y * (g - sum(g * y))        (y = softmax output)
 *   log_softmax: gi = g - exp(y) * sum(g)         (y = log_softmax output)
 * float32 and float64 have typed loops (sums in double); float16/bfloat16 compute in float32. */
#include "tg_kutil.h"
#include "pointwise_convert.h"
#include "softmax_checks.h"

#include <math.h>
#include <string.h>

/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/_log_softmax_backward_data.h"
#include "kernels/_softmax_backward_data.h"
#include "kernels/threshold_backward.h"

/* ------------------------------------------------------------------ threshold_backward */

typedef struct thr_ctx {
    double threshold;
    tg_dtype dt;
} thr_ctx;

static void thr_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const thr_ctx *c = vctx;
    char *o = data[0];
    const char *g = data[1], *x = data[2];
    if (c->dt == TG_FLOAT32) {
        float t = (float)c->threshold;
        if (strides[0] == 4 && strides[1] == 4 && strides[2] == 4) {
            /* Contiguous (relu's backward in training): the same loop with constant strides,
             * which the compiler vectorises (~10x the strided loop). gf[i] is read
             * unconditionally: a conditional load vectorises only with masked loads
             * (AVX-512), a select on loaded values with any SIMD (baseline SSE2 too). */
            float *of = (float *)o;
            const float *gf = (const float *)g, *xf = (const float *)x;
            for (int64_t i = 0; i < n; i++) {
                const float gv = gf[i];
                of[i] = xf[i] <= t ? 0.0f : gv;
            }
            return;
        }
        for (int64_t i = 0; i < n; i++) {
            float xv = *(const float *)(x + i * strides[2]);
            *(float *)(o + i * strides[0]) = xv <= t ? 0.0f : *(const float *)(g + i * strides[1]);
        }
    } else if (c->dt == TG_FLOAT64) {
        for (int64_t i = 0; i < n; i++) {
            double xv = *(const double *)(x + i * strides[2]);
            *(double *)(o + i * strides[0]) =
                xv <= c->threshold ? 0.0 : *(const double *)(g + i * strides[1]);
        }
    } else {
        for (int64_t i = 0; i < n; i++) {
            double xv = tg__pw_load_f64(x + i * strides[2], c->dt);
            double gv = tg__pw_load_f64(g + i * strides[1], c->dt);
            tg__pw_store_f64(o + i * strides[0], c->dt, xv <= c->threshold ? 0.0 : gv);
        }
    }
}

tg_tensor *tg__cpu_threshold_backward(tg_tensor *grad_output, tg_tensor *self, double threshold)
{
    tg_iter it;
    tg_tensor *outs[1] = { NULL };
    tg_tensor *ins[2] = { grad_output, self };
    if (tg__iter_build(&it, "threshold_backward", TG_ITER_PROMOTE_INPUTS, outs, 1, ins, 2) != 0)
        return NULL;
    if (it.dtype == TG_BOOL) {
        tg__iter_abort(&it);
        return tg__error("threshold_backward", "\"threshold_backward\" not implemented for 'Bool'");
    }
    thr_ctx c = { threshold, it.dtype };
    tg__iter_for_each(&it, thr_loop, &c);
    return tg__iter_finish(&it, 0);
}

/* ------------------------------------------------------------------ softmax backwards */

typedef struct smb_job {
    bool log;
    const char *g, *y;
    char *out;
    int64_t outer, n, inner;
    tg_dtype dt; /* float32 or float64 */
} smb_job;

/* One slice: elements k * inner (k < n) from base offset `off`. */
static void smb_slice_f64(const smb_job *j, int64_t off)
{
    const double *g = (const double *)j->g + off, *y = (const double *)j->y + off;
    double *o = (double *)j->out + off;
    int64_t s = j->inner;
    double acc = 0;
    if (j->log) {
        for (int64_t k = 0; k < j->n; k++) acc += g[k * s];
        for (int64_t k = 0; k < j->n; k++) o[k * s] = g[k * s] - exp(y[k * s]) * acc;
    } else {
        for (int64_t k = 0; k < j->n; k++) acc += g[k * s] * y[k * s];
        for (int64_t k = 0; k < j->n; k++) o[k * s] = y[k * s] * (g[k * s] - acc);
    }
}

static void smb_slice_f32(const smb_job *j, int64_t off)
{
    const float *g = (const float *)j->g + off, *y = (const float *)j->y + off;
    float *o = (float *)j->out + off;
    int64_t s = j->inner;
    double acc = 0;
    if (j->log) {
        for (int64_t k = 0; k < j->n; k++) acc += g[k * s];
        float a = (float)acc;
        for (int64_t k = 0; k < j->n; k++) o[k * s] = g[k * s] - expf(y[k * s]) * a;
    } else {
        for (int64_t k = 0; k < j->n; k++) acc += (double)g[k * s] * y[k * s];
        float a = (float)acc;
        for (int64_t k = 0; k < j->n; k++) o[k * s] = y[k * s] * (g[k * s] - a);
    }
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

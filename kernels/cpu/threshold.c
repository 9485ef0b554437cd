/* threshold_backward (relu's gradient), pointwise over the broadcasting iterator (grad_output
 * and self promoted to one dtype): out = self <= threshold ? 0 : grad_output. The comparison
 * is in float for float32 and in double for every other dtype (float16 and bfloat16 included),
 * as kernels/cuda/threshold.cu does. */
#include "tg_kutil.h"
#include "pointwise_convert.h"
#include "pointwise_checks.h"

/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/threshold_backward.h"

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

/* native_dropout (CPU): (output, mask) with mask[i] = u[i] < 1 - p for uniform draws u from
 * the default generator (so tg_manual_seed makes it reproducible), and
 * output[i] = input[i] * mask[i] * scale, scale = 1 / (1 - p) (0 when p == 1), computed as
 * PyTorch's input.mul(mask).mul_(scale) in the input's dtype. With train=False: a copy of
 * input and an all-true mask. Draws are taken in blocks of 4096 under one lock; the element
 * loop is serial (the generator is the bottleneck and the stream must not depend on the
 * thread count). */
#include "tg_kutil.h"
#include "pointwise_convert.h"
#include "dropout_checks.h"

#include <math.h>
#include <string.h>

/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/native_dropout.h"

enum { BLOCK = 4096 };

static void dropout_block(const char *x, char *y, uint8_t *m, int64_t n, const uint64_t *u,
                          uint64_t keep_below, double scale, tg_dtype dt)
{
    if (dt == TG_FLOAT32) {
        const float *xf = (const float *)x;
        float *yf = (float *)y, s = (float)scale;
        for (int64_t i = 0; i < n; i++) {
            m[i] = (u[i] >> 11) < keep_below;
            yf[i] = (xf[i] * (float)m[i]) * s;
        }
    } else if (dt == TG_FLOAT64) {
        const double *xd = (const double *)x;
        double *yd = (double *)y;
        for (int64_t i = 0; i < n; i++) {
            m[i] = (u[i] >> 11) < keep_below;
            yd[i] = (xd[i] * (double)m[i]) * scale;
        }
    } else {
        size_t es = tg_dtype_size(dt);
        for (int64_t i = 0; i < n; i++) {
            m[i] = (u[i] >> 11) < keep_below;
            char *yi = y + (int64_t)es * i;
            tg__pw_store_f64(yi, dt,
                             tg__pw_load_f64(x + (int64_t)es * i, dt) * m[i]); /* rounded, */
            tg__pw_store_f64(yi, dt, tg__pw_load_f64(yi, dt) * scale);         /* then scaled */
        }
    }
}

/* x, out, mask contiguous on the CPU (see tg_dropout_fill_fn). */
static int dropout_fill(const tg_tensor *x, tg_tensor *out, tg_tensor *mask, double p,
                        bool training)
{
    int64_t n = tg__numel(x);
    uint8_t *m = (uint8_t *)tg__k_data(mask);
    if (!training) {
        if (n) {
            memcpy(tg__k_data(out), tg__k_data(x), (size_t)n * tg_dtype_size(x->dtype));
            memset(m, 1, (size_t)n);
        }
        return 0;
    }
    double q = 1 - p, scale = q == 0 ? 0.0 : 1.0 / q;
    uint64_t keep_below = (uint64_t)ldexp(q, 53); /* u53 < q * 2^53  <=>  uniform < q */
    uint64_t u[BLOCK];
    size_t es = tg_dtype_size(x->dtype);
    tg_generator *g = tg__default_generator();
    for (int64_t b = 0; b < n; b += BLOCK) {
        int64_t k = n - b < BLOCK ? n - b : BLOCK;
        tg__random_u64_n(g, u, k);
        dropout_block(tg__k_data(x) + (int64_t)es * b, tg__k_data(out) + (int64_t)es * b, m + b, k,
                      u, keep_below, scale, x->dtype);
    }
    return 0;
}

tg_tensors2 tg__cpu_native_dropout(tg_tensor *input, double p, tg_opt_bool train)
{
    tg_tensors2 res = { NULL, NULL };
    tg__native_dropout_run(input, p, train, dropout_fill, &res.r0, &res.r1);
    return res;
}

/* Fused optimizer steps (CPU): sgd_step_ and adam_step_ update one parameter in place with
 * torch.optim's arithmetic (SGD, Adam, AdamW; torch 1.13's single-tensor implementations),
 * one pass over the elements instead of the 4-8 tensor operations Python runs.
 *
 * Every operand must have the parameter's shape and floating dtype. Contiguous float32 and
 * float64 operands take typed loops split across the OpenMP threads; any other layout or
 * floating dtype takes a serial reference loop in double. The float32 loops follow PyTorch's
 * order of operations and round the Scalar factors to float as its kernels do, so results
 * match torch.optim to a few ulp. These operators have no derivatives: call them with grad
 * mode off (TG_NO_GRAD), as torch.optim runs under torch.no_grad(). */
#include "tg_kutil.h"
#include "pointwise_convert.h"
#include "optim_checks.h"

#include <math.h>
#include <string.h>

/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/adam_step.h"
#include "optim_loops.h"
#include "kernels/sgd_step.h"

/* True when every non-NULL operand is contiguous, float32/float64. */
static bool fast_ok(tg_tensor *const *ts, int n)
{
    for (int i = 0; i < n; i++) {
        if (!ts[i]) continue;
        if (!tg__is_contiguous(ts[i]) || (ts[i]->dtype != TG_FLOAT32 && ts[i]->dtype != TG_FLOAT64))
            return false;
    }
    return true;
}

static double *ref_at(double *v, tg_tensor *t, int64_t i, bool load)
{
    if (!t) return NULL;
    size_t es = tg_dtype_size(t->dtype);
    char *p = tg__k_data(t) + tg__k_offset(t, i) * (int64_t)es;
    if (load) *v = tg__pw_load_f64(p, t->dtype);
    else tg__pw_store_f64(p, t->dtype, *v);
    return v;
}

/* ------------------------------------------------------------------ SGD */

typedef struct sgd_ctx {
    void *p, *g, *buf;
    double lr, momentum, dampening, weight_decay;
    bool nesterov, maximize, first_step;
} sgd_ctx;

static void sgd_f32(int64_t b, int64_t e, void *vctx)
{
    const sgd_ctx *c = vctx;
    float *p = c->p, *buf = c->buf;
    const float *g = c->g;
    float wd = (float)c->weight_decay, mom = (float)c->momentum, damp1 = (float)(1 - c->dampening);
    float nlr = (float)-c->lr;
    for (int64_t i = b; i < e; i++) {
        float d = c->maximize ? -g[i] : g[i];
        if (c->weight_decay != 0) d = d + wd * p[i];
        if (c->momentum != 0) {
            float m = c->first_step ? d : buf[i] * mom + damp1 * d;
            buf[i] = m;
            d = c->nesterov ? d + mom * m : m;
        }
        p[i] = p[i] + nlr * d;
    }
}

static void sgd_f64(int64_t b, int64_t e, void *vctx)
{
    const sgd_ctx *c = vctx;
    double *p = c->p, *buf = c->buf;
    const double *g = c->g;
    for (int64_t i = b; i < e; i++) {
        double d = c->maximize ? -g[i] : g[i];
        if (c->weight_decay != 0) d = d + c->weight_decay * p[i];
        if (c->momentum != 0) {
            double m = c->first_step ? d : buf[i] * c->momentum + (1 - c->dampening) * d;
            buf[i] = m;
            d = c->nesterov ? d + c->momentum * m : m;
        }
        p[i] = p[i] + -c->lr * d;
    }
}

static void sgd_ref(tg_tensor *self, tg_tensor *grad, tg_tensor *buf, const sgd_ctx *c)
{
    int64_t n = tg__numel(self);
    for (int64_t i = 0; i < n; i++) {
        double p, g, m = 0;
        ref_at(&p, self, i, true);
        ref_at(&g, grad, i, true);
        double d = c->maximize ? -g : g;
        if (c->weight_decay != 0) d = d + c->weight_decay * p;
        if (c->momentum != 0) {
            if (!c->first_step) ref_at(&m, buf, i, true);
            m = c->first_step ? d : m * c->momentum + (1 - c->dampening) * d;
            ref_at(&m, buf, i, false);
            d = c->nesterov ? d + c->momentum * m : m;
        }
        p = p + -c->lr * d;
        ref_at(&p, self, i, false);
    }
}

tg_tensor *tg__cpu_sgd_step_(tg_tensor *self, tg_tensor *grad, tg_tensor *momentum_buffer,
                             double lr, double momentum, double dampening, double weight_decay,
                             bool nesterov, bool maximize, bool first_step)
{
    const char *op = "sgd_step_";
    if (tg__sgd_check(op, self, grad, momentum_buffer, lr, momentum, dampening, weight_decay,
                      nesterov) != 0)
        return NULL;
    tg_tensor *buf = momentum != 0 ? momentum_buffer : NULL;
    sgd_ctx c = { tg__k_data(self),
                  tg__k_data(grad),
                  buf ? tg__k_data(buf) : NULL,
                  lr,
                  momentum,
                  dampening,
                  weight_decay,
                  nesterov,
                  maximize,
                  first_step };
    if (fast_ok((tg_tensor *const[]){ self, grad, buf }, 3))
        tg__parallel_for(tg__numel(self), tg__grain_size(),
                         self->dtype == TG_FLOAT32 ? sgd_f32 : sgd_f64, &c);
    else sgd_ref(self, grad, buf, &c);
    if (buf) tg__bump_version(buf);
    tg__bump_version(self);
    return tg_retain(self);
}

/* ------------------------------------------------------------------ Adam / AdamW */

typedef struct adam_ctx {
    void *p, *g, *m, *v, *vmax;
    double lr, beta1, beta2, eps, weight_decay;
    double step_size, bc2_sqrt; /* lr / (1 - beta1^step), sqrt(1 - beta2^step) */
    bool amsgrad, maximize, decoupled;
} adam_ctx;

static inline float max_nan_f32(float a, float b) { return a > b || a != a ? a : b; }
static inline double max_nan_f64(double a, double b) { return a > b || a != a ? a : b; }

static void adam_f32(int64_t b, int64_t e, void *vctx)
{
    const adam_ctx *c = vctx;
    const bool distinct = c->p != c->m && c->p != c->v && c->p != c->g && c->m != c->v &&
                          c->m != c->g && c->v != c->g;
    if (c->decoupled && !c->amsgrad && !c->maximize && distinct) { /* AdamW: the vector loop */
        const tg_adamw_consts k = { (float)(1 - c->lr * c->weight_decay),
                                    (float)c->beta1,
                                    (float)c->beta2,
                                    (float)(1 - c->beta1),
                                    (float)(1 - c->beta2),
                                    (float)c->bc2_sqrt,
                                    (float)c->eps,
                                    (float)-c->step_size };
        TG_CAP_PICK(tg__optim_loops)
            ->adamw_f32((float *)c->p + b, (float *)c->m + b, (float *)c->v + b,
                        (const float *)c->g + b, e - b, &k);
        return;
    }
    float *p = c->p, *m = c->m, *v = c->v, *vmax = c->vmax;
    const float *g = c->g;
    float decay = (float)(1 - c->lr * c->weight_decay), wd = (float)c->weight_decay;
    float b1 = (float)c->beta1, b2 = (float)c->beta2, a1 = (float)(1 - c->beta1),
          a2 = (float)(1 - c->beta2);
    float bc2 = (float)c->bc2_sqrt, eps = (float)c->eps, nstep = (float)-c->step_size;
    for (int64_t i = b; i < e; i++) {
        float gi = c->maximize ? -g[i] : g[i];
        if (c->decoupled) p[i] = p[i] * decay;
        else if (c->weight_decay != 0) gi = gi + wd * p[i];
        m[i] = m[i] * b1 + a1 * gi;
        v[i] = v[i] * b2 + a2 * gi * gi;
        float s = v[i];
        if (c->amsgrad) s = vmax[i] = max_nan_f32(vmax[i], v[i]);
        float denom = sqrtf(s) / bc2 + eps;
        p[i] = p[i] + nstep * m[i] / denom;
    }
}

static void adam_f64(int64_t b, int64_t e, void *vctx)
{
    const adam_ctx *c = vctx;
    double *p = c->p, *m = c->m, *v = c->v, *vmax = c->vmax;
    const double *g = c->g;
    for (int64_t i = b; i < e; i++) {
        double gi = c->maximize ? -g[i] : g[i];
        if (c->decoupled) p[i] = p[i] * (1 - c->lr * c->weight_decay);
        else if (c->weight_decay != 0) gi = gi + c->weight_decay * p[i];
        m[i] = m[i] * c->beta1 + (1 - c->beta1) * gi;
        v[i] = v[i] * c->beta2 + (1 - c->beta2) * gi * gi;
        double s = v[i];
        if (c->amsgrad) s = vmax[i] = max_nan_f64(vmax[i], v[i]);
        double denom = sqrt(s) / c->bc2_sqrt + c->eps;
        p[i] = p[i] + -c->step_size * m[i] / denom;
    }
}

static void adam_ref(tg_tensor *const *t, const adam_ctx *c)
{
    int64_t n = tg__numel(t[0]);
    for (int64_t i = 0; i < n; i++) {
        double p, g, m, v, vmax = 0;
        ref_at(&p, t[0], i, true);
        ref_at(&g, t[1], i, true);
        ref_at(&m, t[2], i, true);
        ref_at(&v, t[3], i, true);
        double gi = c->maximize ? -g : g;
        if (c->decoupled) p = p * (1 - c->lr * c->weight_decay);
        else if (c->weight_decay != 0) gi = gi + c->weight_decay * p;
        m = m * c->beta1 + (1 - c->beta1) * gi;
        v = v * c->beta2 + (1 - c->beta2) * gi * gi;
        double s = v;
        if (c->amsgrad) {
            ref_at(&vmax, t[4], i, true);
            s = vmax = max_nan_f64(vmax, v);
            ref_at(&vmax, t[4], i, false);
        }
        p = p + -c->step_size * m / (sqrt(s) / c->bc2_sqrt + c->eps);
        ref_at(&p, t[0], i, false);
        ref_at(&m, t[2], i, false);
        ref_at(&v, t[3], i, false);
    }
}

tg_tensor *tg__cpu_adam_step_(tg_tensor *self, tg_tensor *grad, tg_tensor *exp_avg,
                              tg_tensor *exp_avg_sq, tg_tensor *max_exp_avg_sq, int64_t step,
                              double lr, double beta1, double beta2, double eps,
                              double weight_decay, bool amsgrad, bool maximize,
                              bool decoupled_weight_decay)
{
    const char *op = "adam_step_";
    if (tg__adam_check(op, self, grad, exp_avg, exp_avg_sq, max_exp_avg_sq, step, lr, beta1, beta2,
                       eps, weight_decay, amsgrad) != 0)
        return NULL;
    tg_tensor *vmax = amsgrad ? max_exp_avg_sq : NULL;
    adam_ctx c = { tg__k_data(self),
                   tg__k_data(grad),
                   tg__k_data(exp_avg),
                   tg__k_data(exp_avg_sq),
                   vmax ? tg__k_data(vmax) : NULL,
                   lr,
                   beta1,
                   beta2,
                   eps,
                   weight_decay,
                   0,
                   0,
                   amsgrad,
                   maximize,
                   decoupled_weight_decay };
    c.step_size = lr / (1 - pow(beta1, (double)step));
    c.bc2_sqrt = sqrt(1 - pow(beta2, (double)step));
    tg_tensor *const ts[5] = { self, grad, exp_avg, exp_avg_sq, vmax };
    if (fast_ok(ts, 5))
        tg__parallel_for(tg__numel(self), tg__grain_size(),
                         self->dtype == TG_FLOAT32 ? adam_f32 : adam_f64, &c);
    else adam_ref(ts, &c);
    tg__bump_version(exp_avg);
    tg__bump_version(exp_avg_sq);
    if (vmax) tg__bump_version(vmax);
    tg__bump_version(self);
    return tg_retain(self);
}

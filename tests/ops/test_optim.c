/* sgd_step_ and adam_step_ against torch.optim (SGD, Adam, AdamW) over four steps of a
 * 7-element float32 parameter (tests/fixtures/nn_fixtures.h), plus float64, strided operands
 * and the argument checks.
 *
 * Metric: float32 |got - want| <= 1e-6 + 1e-5 |want| after four steps: the fused loops round
 * the same operations as PyTorch's kernels but may contract a*b+c differently (a few ulp,
 * compounded over the steps; Adam divides by sqrt(v) + eps, which amplifies an ulp of v). */
#include "kt_util.h"
#include "../fixtures/nn_fixtures.h"
#include "tg_cover.h"

TG_COVERS("sgd_step_", "adam_step_");

enum { N = 7, STEPS = 4 };

typedef struct opt_case {
    const char *name;
    bool adam;
    double lr, momentum, dampening, weight_decay, beta1, beta2, eps;
    bool nesterov, maximize, amsgrad, decoupled;
    const double *want; /* STEPS x N */
} opt_case;

static const opt_case cases[] = {
    { "sgd_plain", false, 0.1, 0, 0, 0, 0, 0, 0, false, false, false, false, fx_opt_sgd_plain },
    { "sgd_mom", false, 0.1, 0.9, 0.1, 0.01, 0, 0, 0, false, false, false, false, fx_opt_sgd_mom },
    { "sgd_nest", false, 0.05, 0.8, 0, 0, 0, 0, 0, true, true, false, false, fx_opt_sgd_nest },
    /* momentum 0.9, Nesterov and weight decay together (the decayed gradient feeds both the
     * buffer and the Nesterov step) */
    { "sgd_nest_wd", false, 0.1, 0.9, 0, 0.01, 0, 0, 0, true, false, false, false,
      fx_opt_sgd_nest_wd },
    { "adam", true, 0.01, 0, 0, 0, 0.9, 0.999, 1e-8, false, false, false, false, fx_opt_adam },
    { "adam_wd_ams", true, 0.02, 0, 0, 0.1, 0.8, 0.99, 1e-6, false, false, true, false,
      fx_opt_adam_wd_ams },
    { "adamw", true, 0.01, 0, 0, 0.05, 0.9, 0.999, 1e-8, false, false, false, true, fx_opt_adamw },
    { "adamw_max", true, 0.01, 0, 0, 0.05, 0.9, 0.999, 1e-8, false, true, false, true,
      fx_opt_adamw_max },
};

/* Runs a case on a parameter of `dtype`; with `strided`, every operand is a stride-2 view. */
static void run_case(const opt_case *c, tg_dtype dtype, bool strided, double rtol)
{
    tg_tensor *store[5];
    tg_tensor *t[5]; /* param, momentum/exp_avg, exp_avg_sq, max_exp_avg_sq, grad */
    for (int k = 0; k < 5; k++) {
        store[k] = tg_zeros(TG_INTS(strided ? 2 * N : N), .dtype = dtype);
        t[k] = strided ? tg_slice(store[k], .step = 2) : tg_retain(store[k]);
    }
    tg_tensor *p0 = kt_tensor(fx_opt_p0, (int64_t[]){ N }, 1, dtype);
    tg_tensor *c0 = tg_copy_(t[0], p0);
    kt_release_all(c0, p0);
    for (int s = 0; s < STEPS; s++) {
        tg_tensor *g = kt_tensor(fx_opt_grads + s * N, (int64_t[]){ N }, 1, dtype);
        tg_tensor *gc = tg_copy_(t[4], g);
        kt_release_all(gc, g);
        tg_tensor *r =
            c->adam ? tg_adam_step_(t[0], t[4], t[1], t[2], t[3], s + 1, .lr = c->lr,
                                    .beta1 = c->beta1, .beta2 = c->beta2, .eps = c->eps,
                                    .weight_decay = c->weight_decay, .amsgrad = c->amsgrad,
                                    .maximize = c->maximize, .decoupled_weight_decay = c->decoupled)
                    : tg_sgd_step_(t[0], t[4], t[1], c->lr, .momentum = c->momentum,
                                   .dampening = c->dampening, .weight_decay = c->weight_decay,
                                   .nesterov = c->nesterov, .maximize = c->maximize,
                                   .first_step = s == 0);
        cr_assert_eq(r, t[0], "%s: %s", c->name, tg_last_error());
        tg_release(r);
        char what[96];
        snprintf(what, sizeof what, "%s step %d (%s%s)", c->name, s + 1, tg_dtype_name(dtype),
                 strided ? ", strided" : "");
        kt_assert_close(t[0], c->want + s * N, N, rtol, 1e-6, what);
    }
    for (int k = 0; k < 5; k++) {
        kt_release_all(t[k], store[k]);
    }
}

Test(optim, matches_torch_optim)
{
    kt_live live = kt_live_now();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_case(&cases[i], TG_FLOAT32, false, 1e-5);
        run_case(&cases[i], TG_FLOAT32, true, 1e-5);  /* reference loop */
        run_case(&cases[i], TG_FLOAT64, false, 1e-5); /* torch ran in float32 */
    }
    kt_assert_no_leak(live);
}

Test(optim, large_parameter_parallel_matches_serial)
{
    kt_live live = kt_live_now();
    const int64_t n = 200001;
    tg_manual_seed(3);
    tg_tensor *p = tg_randn(TG_INTS(n)), *g = tg_randn(TG_INTS(n));
    tg_tensor *m = tg_zeros(TG_INTS(n)), *v = tg_zeros(TG_INTS(n));
    tg_tensor *pd = tg_to(p, TG_FLOAT64, .copy = true), *gd = tg_to(g, TG_FLOAT64);
    tg_tensor *md = tg_zeros(TG_INTS(n), .dtype = TG_FLOAT64),
              *vd = tg_zeros(TG_INTS(n), .dtype = TG_FLOAT64);
    for (int s = 1; s <= 3; s++) {
        tg_release(tg_adam_step_(p, g, m, v, NULL, s, .weight_decay = 0.01,
                                 .decoupled_weight_decay = true));
        tg_release(tg_adam_step_(pd, gd, md, vd, NULL, s, .weight_decay = 0.01,
                                 .decoupled_weight_decay = true));
    }
    double *a = kt_values(p);
    kt_assert_close(pd, a, n, 1e-5, 1e-6, "adamw float32 vs float64 on 200001 elements");
    free(a);
    kt_release_all(p, g, m, v, pd, gd, md, vd);
    kt_assert_no_leak(live);
}

Test(optim, argument_checks)
{
    kt_live live = kt_live_now();
    tg_tensor *p = tg_zeros(TG_INTS(3)), *g = tg_zeros(TG_INTS(3)), *g4 = tg_zeros(TG_INTS(4));
    tg_tensor *gd = tg_zeros(TG_INTS(3), .dtype = TG_FLOAT64),
              *pi = tg_zeros(TG_INTS(3), .dtype = TG_INT64);
    kt_expect_error(tg_sgd_step_(p, g, NULL, -1), "Invalid learning rate: -1");
    kt_expect_error(tg_sgd_step_(p, g, NULL, 0.1, .momentum = 0.9),
                    "momentum_buffer is required when momentum != 0");
    kt_expect_error(tg_sgd_step_(p, g, NULL, 0.1, .nesterov = true),
                    "Nesterov momentum requires a momentum and zero dampening");
    kt_expect_error(tg_sgd_step_(p, g, NULL, 0.1, .weight_decay = -0.5),
                    "Invalid weight_decay value: -0.5");
    kt_expect_error(tg_sgd_step_(p, g4, NULL, 0.1),
                    "grad has shape [4] but the parameter has shape [3]");
    kt_expect_error(tg_sgd_step_(p, gd, NULL, 0.1),
                    "grad has dtype Double but the parameter has dtype Float");
    kt_expect_error(tg_sgd_step_(pi, pi, NULL, 0.1),
                    "expected a floating point parameter, but got Long");
    kt_expect_error(tg_adam_step_(p, g, g, g, NULL, 1, .beta1 = 1.0),
                    "Invalid beta parameter at index 0: 1");
    kt_expect_error(tg_adam_step_(p, g, g, g, NULL, 1, .beta2 = -0.1),
                    "Invalid beta parameter at index 1: -0.1");
    kt_expect_error(tg_adam_step_(p, g, g, g, NULL, 1, .eps = -1e-8),
                    "Invalid epsilon value: -1e-08");
    kt_expect_error(tg_adam_step_(p, g, g, g, NULL, 0), "step counts from 1");
    kt_expect_error(tg_adam_step_(p, g, g, g, NULL, 1, .amsgrad = true),
                    "max_exp_avg_sq is required with amsgrad");
    kt_expect_error(tg_adam_step_(p, g, g4, g, NULL, 1),
                    "exp_avg has shape [4] but the parameter has shape [3]");
    kt_release_all(p, g, g4, gd, pi);
    kt_assert_no_leak(live);
}

/* Optimizers (nn/optim/): SGD, Adam and AdamW against torch.optim 1.13 (fixtures from
 * tests/nn/oracle_optim.py: fixed parameters and gradients, parameters after each of 6 steps,
 * some steps without a gradient for some parameters), parameter groups by name pattern, the
 * defaults of the option macros, PyTorch's errors, gradient accumulation and clipping, and a
 * state save/load round trip that resumes bit-identically. Parameter lists are built by hand
 * (named slots), so that these tests do not depend on the modules. Metric: max relative error
 * per element, 1e-12 in float64 (the fused kernels keep torch's order of operations; observed
 * 0 or a few ulp) and 1e-6 in float32. */
#include "../runtime/rt_test.h"
#include "kt_util.h"
#include "tensorgen.h"

#include <unistd.h>

#include "fixtures/optim_expected.h"

TestSuite(optim, .fini = rt_leak_check);

/* The three parameters of the fixtures, as named slots. */
typedef struct fix {
    tg_tensor *t[OPT_NPARAMS];
    tg_named_tensor nt[OPT_NPARAMS];
    tg_named_tensors list;
    tg_dtype dtype;
} fix;

static tg_tensor *from_doubles(const double *v, const int64_t *sizes, int ndim, tg_dtype dtype)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) n *= sizes[d];
    if (dtype == TG_FLOAT64) return tg_tensor_from_data(v, sizes, ndim, dtype);
    float f[64];
    cr_assert(n <= 64);
    for (int64_t i = 0; i < n; i++) f[i] = (float)v[i];
    return tg_tensor_from_data(f, sizes, ndim, TG_FLOAT32);
}

static int64_t param_numel(int i)
{
    return OPT_SIZES[i][0] * (OPT_NDIM[i] == 2 ? OPT_SIZES[i][1] : 1);
}

/* Parameters set from `values` (OPT_NUMEL doubles, e.g. OPT_P0). */
static void fix_init(fix *f, const double *values, tg_dtype dtype)
{
    f->dtype = dtype;
    int64_t off = 0;
    for (int i = 0; i < OPT_NPARAMS; i++) {
        f->t[i] = from_doubles(values + off, OPT_SIZES[i], OPT_NDIM[i], dtype);
        tg_tensor_set_requires_grad(f->t[i], true);
        f->nt[i] = (tg_named_tensor){ OPT_NAMES[i], &f->t[i], false };
        off += param_numel(i);
    }
    f->list = (tg_named_tensors){ f->nt, OPT_NPARAMS };
}

static void fix_free(fix *f)
{
    for (int i = 0; i < OPT_NPARAMS; i++) tg_release(f->t[i]);
}

/* The gradients of step s (none where the fixture's mask says so). */
static void fix_set_grads(fix *f, int s)
{
    int64_t off = (int64_t)s * OPT_NUMEL;
    for (int i = 0; i < OPT_NPARAMS; i++) {
        tg_tensor *g = OPT_MASK[s][i]
                           ? from_doubles(OPT_GRADS + off, OPT_SIZES[i], OPT_NDIM[i], f->dtype)
                           : NULL;
        tg_tensor_set_grad(f->t[i], g);
        tg_release(g);
        off += param_numel(i);
    }
}

static void fix_values(const fix *f, double *out)
{
    int64_t off = 0;
    for (int i = 0; i < OPT_NPARAMS; i++) {
        cr_assert_eq(tg_tensor_to_doubles(f->t[i], out + off, param_numel(i)), 0);
        off += param_numel(i);
    }
}

static void expect_close(const double *got, const double *want, int64_t n, double rtol,
                         const char *what, int step)
{
    for (int64_t i = 0; i < n; i++)
        cr_expect(fabs(got[i] - want[i]) <= rtol * fabs(want[i]) + rtol * 1e-3,
                  "%s step %d element %lld: got %.17g, want %.17g", what, step, (long long)i,
                  got[i], want[i]);
}

/* Steps [from, to) with the fixture's gradients, checking the parameters after each. */
static void run_steps(tg_optimizer *o, fix *f, const double *expected, int from, int to,
                      double rtol, const char *what)
{
    for (int s = from; s < to; s++) {
        fix_set_grads(f, s);
        cr_assert_eq(tg_optimizer_step(o), 0, "%s step %d: %s", what, s, tg_last_error());
        double got[OPT_NUMEL];
        fix_values(f, got);
        expect_close(got, expected + (int64_t)s * OPT_NUMEL, OPT_NUMEL, rtol, what, s);
    }
}

static void run_case(tg_optimizer *o, fix *f, const double *expected, double rtol, const char *what)
{
    cr_assert(o, "%s: %s", what, tg_last_error());
    run_steps(o, f, expected, 0, OPT_STEPS, rtol, what);
    tg_optimizer_free(o);
    fix_free(f);
}

#define F64_TOL 1e-12
#define F32_TOL 1e-6

/* ---- torch.optim's values ---- */

Test(optim, sgd_plain)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    run_case(tg_sgd_new(TG_NAMED_PARAMS(f.list), .lr = 0.1), &f, OPT_EXPECT_sgd_plain, F64_TOL,
             "sgd_plain");
}

Test(optim, sgd_momentum_dampening)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    run_case(tg_sgd_new(TG_NAMED_PARAMS(f.list), .lr = 0.05, .momentum = 0.9, .dampening = 0.1), &f,
             OPT_EXPECT_sgd_momentum, F64_TOL, "sgd_momentum");
}

Test(optim, sgd_nesterov)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    run_case(tg_sgd_new(TG_NAMED_PARAMS(f.list), .lr = 0.05, .momentum = 0.9, .nesterov = true), &f,
             OPT_EXPECT_sgd_nesterov, F64_TOL, "sgd_nesterov");
}

Test(optim, sgd_weight_decay)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    run_case(tg_sgd_new(TG_NAMED_PARAMS(f.list), .lr = 0.1, .momentum = 0.5, .weight_decay = 0.01),
             &f, OPT_EXPECT_sgd_weight_decay, F64_TOL, "sgd_weight_decay");
}

Test(optim, sgd_maximize)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    run_case(tg_sgd_new(TG_NAMED_PARAMS(f.list), .lr = 0.1, .momentum = 0.9, .weight_decay = 0.1,
                        .maximize = true),
             &f, OPT_EXPECT_sgd_maximize, F64_TOL, "sgd_maximize");
}

Test(optim, adam)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    run_case(tg_adam_new(TG_NAMED_PARAMS(f.list), .lr = 0.01), &f, OPT_EXPECT_adam, F64_TOL,
             "adam");
}

Test(optim, adam_amsgrad)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    run_case(tg_adam_new(TG_NAMED_PARAMS(f.list), .lr = 0.01, .beta1 = 0.8, .beta2 = 0.99,
                         .weight_decay = 0.05, .amsgrad = true),
             &f, OPT_EXPECT_adam_amsgrad, F64_TOL, "adam_amsgrad");
}

Test(optim, adam_maximize)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    run_case(tg_adam_new(TG_NAMED_PARAMS(f.list), .lr = 0.01, .eps = 1e-6, .maximize = true), &f,
             OPT_EXPECT_adam_maximize, F64_TOL, "adam_maximize");
}

Test(optim, adamw)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    run_case(tg_adamw_new(TG_NAMED_PARAMS(f.list), .lr = 0.01, .weight_decay = 0.1), &f,
             OPT_EXPECT_adamw, F64_TOL, "adamw");
}

Test(optim, adamw_amsgrad_default_decay)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    run_case(tg_adamw_new(TG_NAMED_PARAMS(f.list), .lr = 0.02, .amsgrad = true), &f,
             OPT_EXPECT_adamw_amsgrad, F64_TOL, "adamw_amsgrad");
}

Test(optim, sgd_float32)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT32);
    run_case(tg_sgd_new(TG_NAMED_PARAMS(f.list), .lr = 0.05, .momentum = 0.9, .weight_decay = 0.01),
             &f, OPT_EXPECT_sgd_f32, F32_TOL, "sgd_f32");
}

Test(optim, adam_float32)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT32);
    run_case(tg_adam_new(TG_NAMED_PARAMS(f.list), .lr = 0.01, .weight_decay = 0.01), &f,
             OPT_EXPECT_adam_f32, F32_TOL, "adam_f32");
}

/* ---- groups ---- */

Test(optim, groups_sgd)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    tg_optimizer *o =
        tg_sgd_new(TG_NAMED_PARAMS(f.list), .lr = 0.1, .momentum = 0.9, .weight_decay = 0.01);
    cr_assert(o);
    cr_assert_eq(tg_optimizer_add_group(o, "*.bias", .lr = 0.2, .weight_decay = 0), 1);
    cr_assert_eq(tg_optimizer_add_group(o, "*norm*", .lr = 0.05), 2);
    cr_expect_eq(tg_optimizer_num_groups(o), 3);
    cr_expect_str_eq(tg_optimizer_group_param(o, 1, 0), "fc.bias");
    tg_optim_group_opts g;
    cr_assert_eq(tg_optimizer_group(o, 2, &g), 0);
    cr_expect(g.lr == 0.05 && g.weight_decay == 0.01 && g.momentum == 0.9 && g.nesterov == 0);
    run_case(o, &f, OPT_EXPECT_groups_sgd, F64_TOL, "groups_sgd");
}

Test(optim, groups_adamw)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    tg_optimizer *o = tg_adamw_new(TG_NAMED_PARAMS(f.list), .lr = 0.01, .weight_decay = 0.1);
    cr_assert(o);
    /* "*.bias" first takes fc.bias; "norm.*" then makes its own group */
    cr_assert_eq(tg_optimizer_add_group(o, "*.bias", .weight_decay = 0), 1);
    cr_assert_eq(tg_optimizer_add_group(o, "norm.*", .lr = 0.001, .weight_decay = 0), 2);
    cr_expect_eq(tg_optimizer_group_size(o, 0), 1);
    cr_expect_eq(tg_optimizer_group_size(o, 1), 1);
    cr_expect_eq(tg_optimizer_group_size(o, 2), 1);
    run_case(o, &f, OPT_EXPECT_groups_adamw, F64_TOL, "groups_adamw");
}

Test(optim, later_pattern_wins_and_empty_group_stays)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    tg_optimizer *o = tg_sgd_new(TG_NAMED_PARAMS(f.list), .lr = 0.1);
    cr_assert_eq(tg_optimizer_add_group(o, "fc.*", .lr = 0.2), 1);
    cr_assert_eq(tg_optimizer_add_group(o, "*", .lr = 0.3), 2);
    cr_expect_eq(tg_optimizer_group_size(o, 0), 0);
    cr_expect_eq(tg_optimizer_group_size(o, 1), 0);
    cr_expect_eq(tg_optimizer_group_size(o, 2), OPT_NPARAMS);
    cr_expect_eq(tg_optimizer_set_lr(o, 2, 0.5), 0);
    cr_expect_eq(tg_optimizer_lr(o, 2), 0.5);
    tg_optimizer_free(o);
    fix_free(&f);
}

/* ---- defaults and errors ---- */

Test(optim, option_defaults_are_pytorchs)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    tg_optim_group_opts g;
    tg_optimizer *o = tg_adam_new(TG_NAMED_PARAMS(f.list));
    cr_assert(o);
    cr_assert_eq(tg_optimizer_group(o, 0, &g), 0);
    cr_expect(g.lr == 1e-3 && g.beta1 == 0.9 && g.beta2 == 0.999 && g.eps == 1e-8 &&
              g.weight_decay == 0 && !g.amsgrad && !g.maximize);
    cr_expect_str_eq(tg_optimizer_name(o), "Adam");
    tg_optimizer_free(o);
    o = tg_adamw_new(TG_NAMED_PARAMS(f.list), .lr = 0.1);
    cr_assert_eq(tg_optimizer_group(o, 0, &g), 0);
    cr_expect(g.lr == 0.1 && g.weight_decay == 1e-2 && g.beta1 == 0.9 && g.eps == 1e-8);
    cr_expect_eq(tg_optimizer_momentum(o, 0), 0.9); /* beta1 */
    tg_optimizer_free(o);
    o = tg_sgd_new(TG_NAMED_PARAMS(f.list), .lr = 0.1);
    cr_assert_eq(tg_optimizer_group(o, 0, &g), 0);
    cr_expect(g.lr == 0.1 && g.momentum == 0 && g.dampening == 0 && g.weight_decay == 0 &&
              !g.nesterov && !g.maximize);
    tg_optimizer_free(o);
    fix_free(&f);
}

Test(optim, bad_hyper_parameters)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    tg_optim_params p = TG_NAMED_PARAMS(f.list);
    KT_EXPECT_ERROR(tg_sgd_new(p, .lr = -1), "SGD: Invalid learning rate: -1");
    KT_EXPECT_ERROR(tg_sgd_new(p), "SGD: required optimization parameter lr is missing");
    KT_EXPECT_ERROR(tg_sgd_new(p, .lr = 0.1, .momentum = -0.5),
                    "SGD: Invalid momentum value: -0.5");
    KT_EXPECT_ERROR(tg_sgd_new(p, .lr = 0.1, .momentum = 0.9, .dampening = 0.1, .nesterov = true),
                    "SGD: Nesterov momentum requires a momentum and zero dampening");
    KT_EXPECT_ERROR(tg_sgd_new(p, .lr = 0.1, .nesterov = true),
                    "SGD: Nesterov momentum requires a momentum and zero dampening");
    KT_EXPECT_ERROR(tg_adam_new(p, .lr = -0.5), "Adam: Invalid learning rate: -0.5");
    KT_EXPECT_ERROR(tg_adam_new(p, .beta1 = 1.0), "Adam: Invalid beta parameter at index 0: 1");
    KT_EXPECT_ERROR(tg_adamw_new(p, .beta2 = -0.1),
                    "AdamW: Invalid beta parameter at index 1: -0.1");
    KT_EXPECT_ERROR(tg_adam_new(p, .eps = -1e-8), "Adam: Invalid epsilon value: -1e-08");
    KT_EXPECT_ERROR(tg_adamw_new(p, .weight_decay = -1), "AdamW: Invalid weight_decay value: -1");
    tg_named_tensors empty = { f.nt, 0 };
    KT_EXPECT_ERROR(tg_adam_new(TG_NAMED_PARAMS(empty)),
                    "Adam: optimizer got an empty parameter list");
    tg_named_tensor dup[2] = { f.nt[0], f.nt[0] };
    tg_named_tensors dl = { dup, 2 };
    KT_EXPECT_ERROR(tg_sgd_new(TG_NAMED_PARAMS(dl), .lr = 0.1),
                    "SGD: parameter name 'fc.weight' appears twice");
    dup[1].name = "alias";
    KT_EXPECT_ERROR(tg_sgd_new(TG_NAMED_PARAMS(dl), .lr = 0.1),
                    "SGD: some parameters appear more than once ('fc.weight' and 'alias')");
    fix_free(&f);
}

Test(optim, bad_groups)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    tg_optimizer *o = tg_sgd_new(TG_NAMED_PARAMS(f.list), .lr = 0.1);
    KT_EXPECT_ERROR(tg_optimizer_add_group(o, "*.gamma", .lr = 0.2) >= 0,
                    "SGD: add_group: pattern '*.gamma' matches no parameter");
    KT_EXPECT_ERROR(tg_optimizer_add_group(o, "*.bias", .lr = -2) >= 0,
                    "SGD: Invalid learning rate: -2");
    KT_EXPECT_ERROR(tg_optimizer_add_group(o, "*.bias", .nesterov = true) >= 0,
                    "SGD: Nesterov momentum requires a momentum and zero dampening");
    cr_expect_eq(tg_optimizer_num_groups(o), 1);
    KT_EXPECT_ERROR(!isnan(tg_optimizer_lr(o, 3)),
                    "SGD: group 3 does not exist (the optimizer has 1)");
    KT_EXPECT_ERROR(tg_optimizer_set_lr(o, 0, -1) == 0, "SGD: Invalid learning rate: -1");
    tg_optimizer_free(o);
    fix_free(&f);
}

/* A parameter whose state no longer fits (its slot now holds a tensor of another shape) fails
 * the step before any parameter changes. */
Test(optim, bad_state_changes_nothing)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    tg_optimizer *o = tg_adam_new(TG_NAMED_PARAMS(f.list));
    fix_set_grads(&f, 0);
    cr_assert_eq(tg_optimizer_step(o), 0);
    double before[OPT_NUMEL];
    fix_values(&f, before);
    fix_set_grads(&f, 1);
    tg_release(f.t[2]);
    f.t[2] = tg_zeros(TG_INTS(5), .dtype = TG_FLOAT64);
    tg_tensor_set_requires_grad(f.t[2], true);
    tg_tensor *g = tg_ones(TG_INTS(5), .dtype = TG_FLOAT64);
    tg_tensor_set_grad(f.t[2], g);
    tg_release(g);
    tg_clear_error();
    cr_expect_eq(tg_optimizer_step(o), -1);
    cr_expect_str_eq(tg_last_error(), "Adam: exp_avg of parameter 'norm.weight' has shape [4] but "
                                      "the parameter has shape [5]");
    tg_clear_error();
    double got[16]; /* fc.weight and fc.bias */
    cr_assert_eq(tg_tensor_to_doubles(f.t[0], got, 12), 0);
    cr_assert_eq(tg_tensor_to_doubles(f.t[1], got + 12, 4), 0);
    for (int i = 0; i < 16; i++) cr_expect_eq(got[i], before[i]);
    cr_expect_eq(tg_optimizer_param_steps(o, "fc.weight"), 1);
    tg_optimizer_free(o);
    fix_free(&f);
}

Test(optim, zero_grad_sets_none_and_skips)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    tg_optimizer *o = tg_sgd_new(TG_NAMED_PARAMS(f.list), .lr = 0.1, .momentum = 0.9);
    fix_set_grads(&f, 0);
    tg_optimizer_zero_grad(o);
    for (int i = 0; i < OPT_NPARAMS; i++) cr_expect_null(tg_tensor_grad(f.t[i]));
    cr_expect_eq(tg_optimizer_step(o), 0); /* no gradient: nothing changes, no state */
    double got[OPT_NUMEL];
    fix_values(&f, got);
    for (int i = 0; i < OPT_NUMEL; i++) cr_expect_eq(got[i], OPT_P0[i]);
    cr_expect_eq(tg_optimizer_param_steps(o, "fc.bias"), 0);
    tg_optimizer_free(o);
    fix_free(&f);
}

/* Steps inside a caller's scope: the state made there is the optimizer's, not the scope's. */
Test(optim, step_inside_scope)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    tg_optimizer *o = tg_adam_new(TG_NAMED_PARAMS(f.list), .lr = 0.01);
    for (int s = 0; s < OPT_STEPS; s++) {
        fix_set_grads(&f, s);
        tg_scope_begin();
        cr_assert(tg_mul(f.t[0], f.t[0])); /* something for the scope to own */
        cr_assert_eq(tg_optimizer_step(o), 0, "%s", tg_last_error());
        tg_scope_end();
    }
    double got[OPT_NUMEL];
    fix_values(&f, got);
    expect_close(got, OPT_EXPECT_adam + (OPT_STEPS - 1) * OPT_NUMEL, OPT_NUMEL, F64_TOL, "scope",
                 OPT_STEPS - 1);
    tg_optimizer_free(o);
    fix_free(&f);
}

/* A slot whose tensor is replaced (as tg_module_to does) is read again at the next step. */
Test(optim, slot_is_read_each_step)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    tg_optimizer *o = tg_sgd_new(TG_NAMED_PARAMS(f.list), .lr = 1.0);
    tg_tensor *old = f.t[1];
    f.t[1] = tg_zeros(TG_INTS(4), .dtype = TG_FLOAT64);
    tg_tensor_set_requires_grad(f.t[1], true);
    tg_tensor *g = tg_ones(TG_INTS(4), .dtype = TG_FLOAT64);
    tg_tensor_set_grad(f.t[1], g);
    cr_assert_eq(tg_optimizer_step(o), 0);
    double v[4];
    tg_tensor_to_doubles(f.t[1], v, 4);
    for (int i = 0; i < 4; i++) cr_expect_eq(v[i], -1.0);
    tg_release(g);
    tg_release(old);
    tg_optimizer_free(o);
    fix_free(&f);
}

/* ---- gradient accumulation ---- */

/* loss = mean((x @ w^T - y)^2) / div over rows [r0, r1) of x (8, 4) and y (8, 3). */
static void accumulate(tg_tensor *w, tg_tensor *x, tg_tensor *y, int64_t r0, int64_t r1, double div)
{
    tg_scope_begin();
    tg_tensor *xs = tg_slice(x, .dim = 0, .start = r0, .end = r1);
    tg_tensor *ys = tg_slice(y, .dim = 0, .start = r0, .end = r1);
    tg_tensor *d = tg_sub(tg_matmul(xs, tg_t(w)), ys);
    tg_tensor *loss = tg_div_scalar(tg_mean(tg_mul(d, d)), div);
    cr_assert(loss, "%s", tg_last_error());
    cr_assert_eq(tg_backward(loss), 0);
    tg_scope_end();
}

Test(optim, gradient_accumulation_equals_full_batch)
{
    double xv[32], yv[24];
    for (int i = 0; i < 32; i++) xv[i] = sin(0.7 * i + 0.1);
    for (int i = 0; i < 24; i++) yv[i] = cos(0.3 * i);
    tg_tensor *x = tg_tensor_from_data(xv, (int64_t[]){ 8, 4 }, 2, TG_FLOAT64);
    tg_tensor *y = tg_tensor_from_data(yv, (int64_t[]){ 8, 3 }, 2, TG_FLOAT64);
    tg_tensor *w[2];
    for (int k = 0; k < 2; k++) {
        w[k] = tg_tensor_from_data(OPT_P0, (int64_t[]){ 3, 4 }, 2, TG_FLOAT64);
        tg_tensor_set_requires_grad(w[k], true);
    }
    tg_named_tensor n0 = { "w", &w[0], false }, n1 = { "w", &w[1], false };
    tg_optimizer *full =
        tg_sgd_new(TG_NAMED_PARAMS(((tg_named_tensors){ &n0, 1 })), .lr = 0.1, .momentum = 0.9);
    tg_optimizer *acc =
        tg_sgd_new(TG_NAMED_PARAMS(((tg_named_tensors){ &n1, 1 })), .lr = 0.1, .momentum = 0.9);
    for (int it = 0; it < 3; it++) {
        tg_optimizer_zero_grad(full);
        tg_optimizer_zero_grad(acc);
        accumulate(w[0], x, y, 0, 8, 1.0);
        for (int m = 0; m < 4; m++) accumulate(w[1], x, y, 2 * m, 2 * m + 2, 4.0);
        double g0[12], g1[12];
        tg_tensor *a = tg_tensor_grad(w[0]), *b = tg_tensor_grad(w[1]);
        tg_tensor_to_doubles(a, g0, 12);
        tg_tensor_to_doubles(b, g1, 12);
        tg_release(a);
        tg_release(b);
        expect_close(g1, g0, 12, 1e-13, "accumulated gradient", it);
        cr_assert_eq(tg_optimizer_step(full), 0);
        cr_assert_eq(tg_optimizer_step(acc), 0);
        double p0[12], p1[12];
        tg_tensor_to_doubles(w[0], p0, 12);
        tg_tensor_to_doubles(w[1], p1, 12);
        expect_close(p1, p0, 12, 1e-13, "parameters", it);
    }
    tg_optimizer_free(full);
    tg_optimizer_free(acc);
    tg_release(w[0]);
    tg_release(w[1]);
    tg_release(x);
    tg_release(y);
}

/* ---- clipping ---- */

Test(optim, clip_grad_value)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    fix_set_grads(&f, 2); /* norm.weight has no gradient at step 2 */
    tg_optimizer *o = tg_sgd_new(TG_NAMED_PARAMS(f.list), .lr = 0.1);
    cr_assert_eq(tg_optimizer_clip_grad_value_(o, 0.5), 0);
    int64_t off = 2 * OPT_NUMEL;
    for (int i = 0; i < OPT_NPARAMS; i++) {
        tg_tensor *g = tg_tensor_grad(f.t[i]);
        cr_expect_eq(g != NULL, OPT_MASK[2][i] != 0);
        double v[12];
        for (int64_t k = 0; g && k < param_numel(i); k++) {
            tg_tensor_to_doubles(g, v, param_numel(i));
            double want = fmin(fmax(OPT_GRADS[off + k], -0.5), 0.5);
            cr_expect_eq(v[k], want);
        }
        tg_release(g);
        off += param_numel(i);
    }
    KT_EXPECT_ERROR(tg_clip_grad_value_((tg_tensor *[]){ NULL }, 1, 1.0) == 0,
                    "clip_grad_value_: parameter 0 is NULL");
    tg_optimizer_free(o);
    fix_free(&f);
}

Test(optim, clip_grad_norm_over_optimizer)
{
    fix a, b;
    fix_init(&a, OPT_P0, TG_FLOAT64);
    fix_init(&b, OPT_P0, TG_FLOAT64);
    fix_set_grads(&a, 0);
    fix_set_grads(&b, 0);
    tg_optimizer *o = tg_sgd_new(TG_NAMED_PARAMS(a.list), .lr = 0.1);
    double t1 = tg_optimizer_clip_grad_norm_(o, 1.0, 2.0);
    double t2 = tg_clip_grad_norm_(b.t, OPT_NPARAMS, 1.0, 2.0);
    cr_expect(t1 > 1.0 && t1 == t2, "%g vs %g", t1, t2);
    for (int i = 0; i < OPT_NPARAMS; i++) {
        tg_tensor *ga = tg_tensor_grad(a.t[i]), *gb = tg_tensor_grad(b.t[i]);
        double va[12], vb[12];
        tg_tensor_to_doubles(ga, va, param_numel(i));
        tg_tensor_to_doubles(gb, vb, param_numel(i));
        for (int64_t k = 0; k < param_numel(i); k++) cr_expect_eq(va[k], vb[k]);
        tg_release(ga);
        tg_release(gb);
    }
    tg_optimizer_free(o);
    fix_free(&a);
    fix_free(&b);
}

/* ---- state ---- */

/* The groups of the groups_adamw case, amsgrad on. */
static tg_optimizer *adamw_groups(fix *f)
{
    tg_optimizer *o = tg_adamw_new(TG_NAMED_PARAMS(f->list), .lr = 0.01, .weight_decay = 0.1);
    cr_assert(o);
    cr_assert_eq(tg_optimizer_add_group(o, "*.bias", .weight_decay = 0), 1);
    cr_assert_eq(tg_optimizer_add_group(o, "norm.*", .lr = 0.001, .weight_decay = 0), 2);
    return o;
}

/* k steps, save (through a file when `path`), a fresh optimizer on copies of the parameters,
 * load, the remaining steps: every value equal to the uninterrupted run's (the fixture). */
static void round_trip(tg_optimizer *(*make)(fix *), const double *expected, int k,
                       const char *path)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    tg_optimizer *o = make(&f);
    run_steps(o, &f, expected, 0, k, F64_TOL, "before save");
    tg_state *s = tg_state_new();
    cr_assert_eq(tg_optimizer_save_state(o, s, "optimizer."), 0, "%s", tg_last_error());
    if (path) {
        cr_assert_eq(tg_state_save(s, path), 0, "%s", tg_last_error());
        tg_state_free(s);
        s = tg_state_open(path);
        cr_assert(s, "%s", tg_last_error());
    }
    double now[OPT_NUMEL];
    fix_values(&f, now);
    int64_t bias_steps = tg_optimizer_param_steps(o, "fc.bias");
    /* the uninterrupted run goes on */
    double straight[OPT_NUMEL];
    for (int st = k; st < OPT_STEPS; st++) {
        fix_set_grads(&f, st);
        cr_assert_eq(tg_optimizer_step(o), 0);
    }
    fix_values(&f, straight);
    fix g;
    fix_init(&g, now, TG_FLOAT64);
    tg_optimizer *r = make(&g);
    tg_optimizer_set_lr(r, 0, 123.0); /* overwritten by the load */
    cr_assert_eq(tg_optimizer_load_state(r, s, "optimizer."), 0, "%s", tg_last_error());
    cr_expect_eq(tg_optimizer_lr(r, 0), tg_optimizer_lr(o, 0));
    cr_expect_eq(tg_optimizer_param_steps(r, "fc.bias"), bias_steps);
    for (int st = k; st < OPT_STEPS; st++) {
        fix_set_grads(&g, st);
        cr_assert_eq(tg_optimizer_step(r), 0);
    }
    double resumed[OPT_NUMEL];
    fix_values(&g, resumed);
    for (int i = 0; i < OPT_NUMEL; i++)
        cr_expect_eq(resumed[i], straight[i], "element %d: %.17g vs %.17g", i, resumed[i],
                     straight[i]);
    expect_close(resumed, expected + (OPT_STEPS - 1) * OPT_NUMEL, OPT_NUMEL, F64_TOL, "resumed",
                 OPT_STEPS - 1);
    tg_state_free(s);
    tg_optimizer_free(o);
    tg_optimizer_free(r);
    fix_free(&f);
    fix_free(&g);
}

static tg_optimizer *sgd_momentum(fix *f)
{
    return tg_sgd_new(TG_NAMED_PARAMS(f->list), .lr = 0.05, .momentum = 0.9, .dampening = 0.1);
}

Test(optim, save_load_resumes_bit_identically)
{
    round_trip(adamw_groups, OPT_EXPECT_groups_adamw, 3, NULL);
    round_trip(sgd_momentum, OPT_EXPECT_sgd_momentum, 2, NULL);
}

Test(optim, save_load_through_a_file)
{
    char dir[] = "/tmp/tg_optim_XXXXXX";
    cr_assert(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/ckpt.safetensors", dir);
    round_trip(adamw_groups, OPT_EXPECT_groups_adamw, 4, path);
    unlink(path);
    rmdir(dir);
}

Test(optim, load_errors_change_nothing)
{
    fix f;
    fix_init(&f, OPT_P0, TG_FLOAT64);
    tg_optimizer *o = adamw_groups(&f);
    run_steps(o, &f, OPT_EXPECT_groups_adamw, 0, 2, F64_TOL, "steps");
    tg_state *s = tg_state_new();
    cr_assert_eq(tg_optimizer_save_state(o, s, ""), 0);
    /* a state tensor of another shape */
    tg_tensor *bad = tg_zeros(TG_INTS(2, 2), .dtype = TG_FLOAT64);
    tg_state_put_tensor(s, "state.fc.bias.exp_avg", bad);
    tg_release(bad);
    tg_optimizer_set_lr(o, 0, 0.5);
    KT_EXPECT_ERROR(tg_optimizer_load_state(o, s, "") == 0,
                    "AdamW: load_state: 'state.fc.bias.exp_avg' has shape [2, 2] but the parameter "
                    "has shape [4]");
    cr_expect_eq(tg_optimizer_lr(o, 0), 0.5);
    cr_expect_eq(tg_optimizer_param_steps(o, "fc.bias"), 2);
    /* an unknown key */
    tg_state *s2 = tg_state_new();
    cr_assert_eq(tg_optimizer_save_state(o, s2, "opt."), 0);
    tg_tensor *z = tg_zeros(TG_INTS(4), .dtype = TG_FLOAT64);
    tg_state_put_tensor(s2, "opt.state.fc.gamma.exp_avg", z);
    tg_release(z);
    KT_EXPECT_ERROR(tg_optimizer_load_state(o, s2, "opt.") == 0,
                    "AdamW: load_state: unexpected key 'opt.state.fc.gamma.exp_avg' (no such "
                    "parameter or state)");
    /* another grouping, another kind */
    fix g;
    fix_init(&g, OPT_P0, TG_FLOAT64);
    tg_optimizer *one = tg_adamw_new(TG_NAMED_PARAMS(g.list));
    KT_EXPECT_ERROR(tg_optimizer_load_state(one, s2, "opt.") == 0,
                    "AdamW: loaded state dict has a different number of parameter groups "
                    "('opt.num_groups' is 3, the optimizer has 1)");
    tg_optimizer *sgd = tg_sgd_new(TG_NAMED_PARAMS(g.list), .lr = 0.1);
    KT_EXPECT_ERROR(tg_optimizer_load_state(sgd, s2, "opt.") == 0,
                    "SGD: load_state: 'opt.kind' is 'AdamW', not SGD");
    tg_optimizer_free(one);
    tg_optimizer_free(sgd);
    tg_state_free(s);
    tg_state_free(s2);
    tg_optimizer_free(o);
    fix_free(&f);
    fix_free(&g);
}

/* ---- a module's parameters ---- */

Test(optim, from_module)
{
    tg_module *fc = tg_nn_linear(4, 3);
    cr_assert(fc, "%s", tg_last_error());
    tg_optimizer *o = tg_sgd_new(TG_MODULE_PARAMS(fc), .lr = 0.1);
    cr_assert(o, "%s", tg_last_error());
    cr_expect_eq(tg_optimizer_group_size(o, 0), 2);
    cr_expect_str_eq(tg_optimizer_group_param(o, 0, 0), "weight");
    cr_expect_str_eq(tg_optimizer_group_param(o, 0, 1), "bias");
    cr_expect_eq(tg_optimizer_add_group(o, "bias", .weight_decay = 0), 1);
    tg_optimizer_free(o);
    tg_module_free(fc);
}

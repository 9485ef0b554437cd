/* Value cases of the nn kernels (kt_case.h): _softmax, _log_softmax and their backward data
 * operators, nll_loss forward and backward, sgd_step_, adam_step_ and cat.
 *
 * Softmax over every dim of four shapes (long and short rows, a middle dim), contiguous and
 * with the last two dims transposed, NaN and -inf rows; nll_loss with every reduction, with and
 * without class weights and ignore_index; three optimizer steps with every variant, on
 * contiguous and non-contiguous gradients; cat with promotion, permuted and t() inputs, a
 * legacy empty input and out=. Bounds: kt_tol_softmax, kt_tol_log_softmax, kt_tol_scatter
 * (nll_loss sums in double), kt_tol_optim; cat exact. */
#include "kt_case.h"

/* ------------------------------------------------------------------ softmax */

static const int64_t sm_shapes[4][3] = {
    { 37, 129, 1 }, { 8, 16, 33 }, { 4, 3000, 1 }, { 1000, 10, 1 }
};
static const int sm_ndim[4] = { 2, 3, 2, 2 };

/* parameter = (shape * 4 + dim + 1) * 2 + view (1: the last two dims transposed); the input,
 * its dim and, log, the grad_output of the backward data operators */
static int sm_setup(const kt_arg *a, tg_tensor **xv, int64_t *dim, tg_tensor **go)
{
    int s = a->param / 8, view = a->param % 2;
    *dim = a->param / 2 % 4 - 1;
    if (*dim >= sm_ndim[s]) return KT_NO_FORM;
    tg_tensor *x = kt_input(a, sm_shapes[s], sm_ndim[s], a->dtype, 20 + (uint64_t)s, -8, 8);
    *xv = view ? tg_transpose(x, -1, -2) : x;
    *go = kt_input(a, tg_tensor_sizes(*xv), tg_tensor_dim(*xv), a->dtype, 40 + (uint64_t)s, -1, 1);
    return 0;
}
static const char *sm_name(int p)
{
    static char buf[64];
    snprintf(buf, sizeof buf, "shape %d dim %d%s", p / 8, p / 2 % 4 - 1,
             p % 2 ? " transposed" : "");
    return buf;
}
KT_FN(f_softmax)
{
    tg_tensor *xv, *go;
    int64_t dim;
    if (sm_setup(a, &xv, &dim, &go)) return KT_NO_FORM;
    return kt_y1(y, tg__softmax(xv, dim, false));
}
/* log_softmax, and both backward data operators from this device's forward results */
KT_FN(f_log_softmax)
{
    tg_tensor *xv, *go;
    int64_t dim;
    if (sm_setup(a, &xv, &dim, &go)) return KT_NO_FORM;
    tg_tensor *s = tg__softmax(xv, dim, false), *l = tg__log_softmax(xv, dim, false);
    y[0] = l;
    y[1] = tg__softmax_backward_data(go, s, dim, a->dtype);
    y[2] = tg__log_softmax_backward_data(go, l, dim, a->dtype);
    return l && y[1] && y[2] ? 3 : -1;
}
KT_FN(f_softmax_rows)
{
    return kt_y2(y, tg__softmax(x[0], 1, false), tg__log_softmax(x[0], 1, false));
}
static const double nan_rows[12] = { 1, 2, NAN, 3, -INFINITY, 0, 1, -INFINITY, 5, 5, 5, 5 };

/* ------------------------------------------------------------------ nll_loss */

/* parameter = reduction * 2 + weighted (ignore_index 3, else -100): output, total_weight, and
 * the backward from this device's total_weight */
KT_FN(f_nll_loss)
{
    int red = a->param / 2, wi = a->param % 2;
    int64_t ignore = wi ? 3 : -100;
    tg_output_total_weight r = tg_nll_loss_forward(x[0], x[1], wi ? x[2] : NULL, red, ignore);
    tg_tensor *go = red ? kt_input(a, NULL, 0, a->dtype, 6, 0.5, 1.5)
                        : kt_input(a, (int64_t[]){ 300 }, 1, a->dtype, 6, -1, 1);
    y[0] = r.output;
    y[1] = r.total_weight;
    y[2] = tg_nll_loss_backward(go, x[0], x[1], wi ? x[2] : NULL, red, ignore, r.total_weight);
    return y[0] && y[2] ? 3 : -1;
}
KT_FN(f_nll_loss_bad_target)
{
    tg_tensor *t = kt_input(a, (int64_t[]){ 4 }, 1, TG_INT64, 1, 0, 3);
    tg_fill_(tg_select(t, 0, 2), 7);
    return kt_y1(y, tg_nll_loss_forward(x[0], t, NULL, 1, -100).output);
}

/* ------------------------------------------------------------------ optimizers */

/* Three steps; variant 0 plain, 1 nesterov / amsgrad on non-contiguous grads, 2 maximize /
 * decoupled weight decay: the parameter and its state. */
static int optim(const kt_arg *a, bool adam, tg_tensor **y)
{
    int variant = a->param;
    tg_dtype dt = a->dtype;
    int64_t shape[2] = { 63, 17 };
    tg_tensor *p = kt_input(a, shape, 2, dt, 1, -1, 1);
    tg_tensor *s1 = tg_zeros(TG_INTS(63, 17), .dtype = dt, .device = a->device);
    tg_tensor *s2 = tg_zeros(TG_INTS(63, 17), .dtype = dt, .device = a->device);
    tg_tensor *s3 = tg_zeros(TG_INTS(63, 17), .dtype = dt, .device = a->device);
    for (int step = 1; step <= 3; step++) {
        tg_tensor *grad = kt_input(a, shape, 2, dt, 10 + (uint64_t)step, -1, 1);
        if (variant == 1) grad = tg_t(tg_contiguous(tg_t(grad)));
        bool ok = adam ? tg_adam_step_(p, grad, s1, s2, s3, step, .lr = 0.01,
                                       .weight_decay = variant ? 0.1 : 0, .amsgrad = variant == 1,
                                       .decoupled_weight_decay = variant == 2)
                       : tg_sgd_step_(p, grad, s1, 0.1, .momentum = 0.9, .nesterov = variant == 1,
                                      .weight_decay = 0.01, .maximize = variant == 2,
                                      .first_step = step == 1);
        if (!ok) return -1;
    }
    y[0] = p;
    y[1] = s1;
    if (!adam) return 2;
    y[2] = s2;
    return 3;
}
KT_FN(f_sgd) { return optim(a, false, y); }
KT_FN(f_adam) { return optim(a, true, y); }

/* ------------------------------------------------------------------ cat */

/* 0: dim 1 with promotion, a permuted input and a legacy empty one; 1: the last dim; 2: t()
 * views */
KT_FN(f_cat)
{
    tg_tensor *e = tg_zeros(TG_INTS(0), .device = a->device);
    if (a->param == 0)
        return kt_y1(
            y, tg_cat(TG_TENSORS(x[0], x[1], tg_permute(x[2], TG_INTS(2, 1, 0)), e), .dim = 1));
    if (a->param == 1) return kt_y1(y, tg_cat(TG_TENSORS(x[0], x[0]), .dim = -1));
    return kt_y1(
        y, tg_cat(TG_TENSORS(tg_t(tg_select(x[0], 0, 1)), tg_t(tg_select(x[1], 0, 2))), .dim = 1));
}
KT_FN(f_cat3) { return kt_y1(y, tg_cat(TG_TENSORS(x[0], x[0], x[0]), .dim = 0)); }
KT_FN(f_cat_out)
{
    tg_tensor *o = tg_zeros(TG_INTS(4, 14, 6), .dtype = TG_FLOAT64, .device = a->device);
    return kt_y1(y, tg_cat_out(TG_TENSORS(x[0], x[1], x[0], x[1]), o, .dim = 1));
}
KT_FN(f_cat_ndim)
{
    return kt_y1(y, tg_cat(TG_TENSORS(x[0], tg_zeros(TG_INTS(4, 5), .device = a->device))));
}

#define CAT_INPUTS                                             \
    { KT_RAND_OF(TG_FLOAT32, -1, 1, 4, 5, 6), .seed = 1 },     \
        { KT_RAND_OF(TG_FLOAT32, -1, 1, 4, 2, 6), .seed = 2 }, \
    {                                                          \
        KT_RAND_OF(TG_INT32, -9, 9, 6, 3, 4), .seed = 3        \
    }

static const kt_case nn_cases[] = {
    KT_CASE("_softmax.out", "4 shapes, every dim", f_softmax, { { 0 } }, KT_FLOATS, &kt_tol_softmax,
            .count = 32, .param_name = sm_name),
    KT_CASE("_log_softmax.out", "4 shapes, every dim, and both backward data", f_log_softmax,
            { { 0 } }, KT_FLOATS, &kt_tol_log_softmax, .count = 32, .param_name = sm_name,
            KT_ALSO("_softmax_backward_data", "_log_softmax_backward_data")),
    KT_CASE("_softmax.out", "NaN and -inf rows", f_softmax_rows, { { KT_VALUES(nan_rows, 3, 4) } },
            KT_ONE(TG_FLOAT32), &kt_tol_softmax_special),

    KT_CASE("nll_loss_forward", "(300, 11), every reduction, weights", f_nll_loss,
            { { KT_RAND(-5, 0, 300, 11), .seed = 3 },
              { KT_RAND_OF(TG_INT64, 0, 11, 300), .seed = 4 },
              { KT_RAND(0.5, 2, 11), .seed = 5 } },
            KT_F32_F64, &kt_tol_scatter, .count = 6, KT_ALSO("nll_loss_backward")),
    KT_CASE("nll_loss_forward", "target out of bounds", f_nll_loss_bad_target,
            { { KT_RAND_OF(TG_FLOAT32, -1, 0, 4, 3) } }, .error = "Target 7 is out of bounds."),

    KT_CASE("sgd_step_", "3 steps: plain, nesterov, maximize", f_sgd, { { 0 } }, KT_FLOATS,
            &kt_tol_optim, .count = 3),
    KT_CASE("adam_step_", "3 steps: plain, amsgrad, decoupled", f_adam, { { 0 } }, KT_FLOATS,
            &kt_tol_optim, .count = 3),

    KT_CASE("cat.out", "promotion, permuted, empty, t() views", f_cat, { CAT_INPUTS }, { 0 },
            &kt_exact, .count = 3),
    KT_CASE("cat.out", "(3, 7) three times", f_cat3, { { KT_RAND(-1, 1, 3, 7), .seed = 9 } },
            KT_FLOATS, &kt_exact),
    KT_CASE("cat.out", "into a float64 out=", f_cat_out, { CAT_INPUTS }, { 0 }, &kt_exact),
    KT_CASE("cat.out", "3 and 2 dims", f_cat_ndim, { CAT_INPUTS },
            .error = "Tensors must have same number of dimensions: got 3 and 2"),
};
KT_REGISTER(nn_cases);

/* Gradcheck cases of softmax and log_softmax, the layers and losses (linear, mse_loss, nll_loss,
 * cross_entropy, dropout) and the helper operators the formulas call (gradcheck.h).
 *
 * Each case is a small function of its inputs x[] that calls the operator and returns its
 * outputs in y[] (GC_FN, gradcheck.h). In-place operators run on a clone of x[0] (a leaf requiring
 * grad cannot be modified in place); operators that draw random numbers reseed a generator
 * inside the function, so that the finite differences see the same draw on every call. Inputs
 * are chosen away from the points where an operator is not differentiable (GC_AWAY0 for relu
 * and abs, GC_POS for log and sqrt, GC_DISTINCT for max and min, which would otherwise tie). */
#include "gradcheck.h"
#include "kt_util.h"

/* ------------------------------------------------------------------ softmax */

GC_FN(f__softmax) { return gc_y1(y, tg__softmax(x[0], 1, false)); }
GC_FN(f__softmax_d0) { return gc_y1(y, tg__softmax(x[0], 0, false)); }
GC_FN(f__log_softmax) { return gc_y1(y, tg__log_softmax(x[0], -1, false)); }
GC_FN(f_softmax) { return gc_y1(y, tg_softmax(x[0], 1)); }
GC_FN(f_log_softmax) { return gc_y1(y, tg_log_softmax(x[0], 1)); }
GC_FN(f_softmax_bwd) { return gc_y1(y, tg__softmax_backward_data(x[0], x[1], 1, TG_FLOAT64)); }
GC_FN(f_log_softmax_bwd)
{
    return gc_y1(y, tg__log_softmax_backward_data(x[0], x[1], 1, TG_FLOAT64));
}
GC_FN(f_threshold_backward) { return gc_y1(y, tg_threshold_backward(x[0], x[1], 0)); }
GC_FN(f_threshold_backward_05) { return gc_y1(y, tg_threshold_backward(x[0], x[1], 0.5)); }

/* ------------------------------------------------------------------ layers and losses */

GC_FN(f_linear) { return gc_y1(y, tg_linear(x[0], x[1], .bias = x[2])); }
GC_FN(f_linear_nobias) { return gc_y1(y, tg_linear(x[0], x[1])); }
GC_FN(f_mse_loss) { return gc_y1(y, tg_mse_loss(x[0], x[1])); }
GC_FN(f_mse_loss_sum) { return gc_y1(y, tg_mse_loss(x[0], x[1], .reduction = 2)); }
GC_FN(f_mse_loss_none) { return gc_y1(y, tg_mse_loss(x[0], x[1], .reduction = 0)); }
GC_FN(f_nll_loss) { return gc_y1(y, tg_nll_loss(x[0], x[1])); }
GC_FN(f_nll_loss_w) { return gc_y1(y, tg_nll_loss(x[0], x[1], .weight = x[2], .ignore_index = 1)); }
GC_FN(f_nll_loss_none) { return gc_y1(y, tg_nll_loss(x[0], x[1], .reduction = 0)); }
GC_FN(f_nll_loss_forward) { return gc_y_otw(y, tg_nll_loss_forward(x[0], x[1], NULL, 1, -100)); }
GC_FN(f_nll_loss_forward_sum_w) { return gc_y_otw(y, tg_nll_loss_forward(x[0], x[1], x[2], 2, 3)); }
/* total_weight is computed from the same target (no grad): its mean divides by it. */
GC_FN(f_nll_loss_backward)
{
    tg_output_total_weight r = { NULL, NULL };
    TG_NO_GRAD {
        r = tg_nll_loss_forward(x[1], x[2], NULL, 1, -100);
    }
    y[0] = tg_nll_loss_backward(x[0], x[1], x[2], NULL, 1, -100, r.total_weight);
    kt_release_all(r.output, r.total_weight);
    return 1;
}
GC_FN(f_cross_entropy) { return gc_y1(y, tg_cross_entropy(x[0], x[1])); }
GC_FN(f_cross_entropy_ls)
{
    return gc_y1(y, tg_cross_entropy(x[0], x[1], .label_smoothing = 0.1, .reduction = 2));
}
GC_FN(f_cross_entropy_probs) { return gc_y1(y, tg_cross_entropy(x[0], x[1])); }
/* Dropout draws from the default generator: reseed so every call draws the same mask. */
GC_FN(f_dropout)
{
    tg_manual_seed(11);
    y[0] = tg_dropout(x[0], 0.4, true);
    return 1;
}
GC_FN(f_dropout_eval) { return gc_y1(y, tg_dropout(x[0], 0.4, false)); }
GC_FN(f_native_dropout)
{
    tg_manual_seed(11);
    tg_tensors2 r = tg_native_dropout(x[0], 0.3, true);
    return gc_y2(y, r.r0, r.r1);
}
GC_FN(f_native_dropout_backward)
{
    tg_tensor *mask = tg_gt_scalar(x[1], 0);
    y[0] = tg_native_dropout_backward(x[0], mask, 2.0);
    tg_release(mask);
    return 1;
}

/* ------------------------------------------------------------------ helpers (composites) */

GC_FN(f_sum_to_size) { return gc_y1(y, tg_sum_to_size(x[0], TG_INTS(3, 1))); }
GC_FN(f_sum_backward) { return gc_y1(y, tg_sum_backward(x[0], TG_INTS(3, 4), TG_INTS(1), false)); }
GC_FN(f_permute_backward) { return gc_y1(y, tg_permute_backward(x[0], TG_INTS(2, 0, 1))); }
GC_FN(f_var_backward)
{
    return gc_y1(y, tg_var_backward(x[0], x[1], TG_INTS(1), TG_NONE_INT, false));
}

static const gc_case nn_cases[] = {
    /* softmax */
    GC_CASE("_softmax", "dim 1", f__softmax, { REAL(3, 5) }),
    GC_CASE("_softmax", "dim 0, transposed", f__softmax_d0, { REAL_T(3, 5) }),
    GC_CASE("_log_softmax", "dim -1, strided", f__log_softmax, { REAL_S(3, 5) }),
    GC_CASE("softmax.int", "dim 1", f_softmax, { REAL(3, 5) }, .gradgrad = true),
    GC_CASE("log_softmax.int", "dim 1", f_log_softmax, { REAL(3, 5) }, .gradgrad = true),
    GC_CASE("_softmax_backward_data", "grad_output and output", f_softmax_bwd,
            { REAL(3, 4), REAL(3, 4) }),
    GC_CASE("_log_softmax_backward_data", "grad_output and output", f_log_softmax_bwd,
            { REAL(3, 4), REAL(3, 4) }),
    GC_CASE("threshold_backward", "threshold 0", f_threshold_backward, { REAL(3, 4), AWAY0(3, 4) }),
    GC_CASE("threshold_backward", "threshold 0.5, transposed", f_threshold_backward_05,
            { REAL_T(3, 4), POS(3, 4) }),

    /* layers and losses */
    GC_CASE("linear", "(5,3) x (4,3)^T + (4)", f_linear, { REAL(5, 3), REAL(4, 3), REAL(4) }),
    GC_CASE("linear", "no bias, batched (2,5,3)", f_linear_nobias, { REAL(2, 5, 3), REAL_T(4, 3) }),
    GC_CASE("linear", "1-D input (weight's gradient is an outer product)", f_linear,
            { REAL(3), REAL(4, 3), REAL(4) }, .gradgrad = true),
    GC_CASE("mse_loss", "mean", f_mse_loss, { REAL(3, 4), REAL(3, 4) }, .gradgrad = true),
    GC_CASE("mse_loss", "sum, target broadcast", f_mse_loss_sum, { REAL(3, 4), REAL(4) }),
    GC_CASE("mse_loss", "none, transposed", f_mse_loss_none, { REAL_T(3, 4), CONST(3, 4) }),
    GC_CASE("nll_loss", "mean", f_nll_loss, { REAL(4, 5), INDEX(5, 4) }),
    GC_CASE("nll_loss", "weight, ignore_index 1", f_nll_loss_w,
            { REAL(6, 3),
              INDEX(3, 6),
              { .used = true, .ndim = 1, .shape = { 3 }, .domain = GC_POS, .constant = true } }),
    GC_CASE("nll_loss", "none", f_nll_loss_none, { REAL_T(4, 5), INDEX(5, 4) }),
    GC_CASE("nll_loss_forward", "mean", f_nll_loss_forward, { REAL(4, 5), INDEX(5, 4) }),
    GC_CASE("nll_loss_forward", "sum, weight, ignore_index 3", f_nll_loss_forward_sum_w,
            { REAL(6, 4),
              INDEX(4, 6),
              { .used = true, .ndim = 1, .shape = { 4 }, .domain = GC_POS, .constant = true } }),
    GC_CASE("nll_loss_backward", "grad_output and self", f_nll_loss_backward,
            { REAL0, REAL(4, 5), INDEX(5, 4) }),
    GC_CASE("cross_entropy_loss", "class indices, mean", f_cross_entropy,
            { REAL(4, 5), INDEX(5, 4) }, .gradgrad = true),
    GC_CASE("cross_entropy_loss", "label smoothing 0.1, sum", f_cross_entropy_ls,
            { REAL_T(4, 5), INDEX(5, 4) }),
    GC_CASE("cross_entropy_loss", "class probabilities", f_cross_entropy_probs,
            { REAL(4, 5), CONST(4, 5) }),
    GC_CASE("dropout", "p 0.4, train (reseeded)", f_dropout, { REAL(4, 5) }),
    GC_CASE("dropout", "eval", f_dropout_eval, { REAL(4, 5) }),
    GC_CASE("native_dropout", "p 0.3 (reseeded)", f_native_dropout, { REAL(4, 5) }),
    GC_CASE("native_dropout_backward", "scale 2", f_native_dropout_backward,
            { REAL(4, 5), CONST(4, 5) }),

    /* helper operators the formulas call */
    GC_CASE("sum_to_size", "(3,4) -> (3,1)", f_sum_to_size, { REAL(3, 4) }),
    GC_CASE("sum_backward", "dim 1", f_sum_backward, { REAL(3) }),
    GC_CASE("permute_backward", "(2,0,1)", f_permute_backward, { REAL(4, 2, 3) }),
    GC_CASE("var_backward", "dim 1", f_var_backward, { REAL(3), REAL(3, 4) }),
};
GC_REGISTER(nn_cases);

/* Gradients on CUDA against gradients on the CPU for differentiable ops whose forward and
 * backward run on the CUDA kernels of this family: mm, sum, softmax, log_softmax,
 * cross_entropy, linear, mse_loss, cat; and three training steps of a small MLP end to end
 * (tests/cuda/test_cuda_grad_table.c runs every gradcheck case, in float64, on both devices).
 *
 * Each case builds the same leaves on both devices (the CUDA leaves are copies of the CPU
 * ones made before requires_grad is set, so both are leaves), computes a scalar loss
 * (sum(y * w) with a fixed random w when y is not already a scalar, so that the incoming
 * gradient is not uniform: sum(softmax(x)) alone would have a zero gradient), runs backward
 * and compares every leaf's .grad. Bounds: float64 1e-10 relative and absolute (different
 * summation orders only), float32 1e-4 (matmul and reductions in float32 on cuBLAS's side,
 * gradients of O(1) through a few ops). */
#include "kt_cuda.h"

#ifndef TG_WITH_CUDA
Test(cuda_grad, skipped) { KT_SKIP_NO_CUDA_BUILD(); }
#else

enum { G_MM, G_SUM, G_SOFTMAX, G_LOG_SOFTMAX, G_CROSS_ENTROPY, G_LINEAR, G_MSE, G_CAT, G_COUNT };
static const char *const case_names[G_COUNT] = {
    "mm", "sum", "softmax", "log_softmax", "cross_entropy", "linear", "mse_loss", "cat"
};

/* Leaves of one device: a (8, 12) always; b's shape and whether bias/target are used depend on
 * the case. */
typedef struct leaves {
    tg_tensor *a, *b, *bias, *target;
} leaves;

static tg_tensor *forward(int c, const leaves *l)
{
    switch (c) {
    case G_MM: return tg_mm(l->a, l->b);
    case G_SUM: return tg_sum(l->a, .dim = TG_INTS(1));
    case G_SOFTMAX: return tg_softmax(l->a, 1);
    case G_LOG_SOFTMAX: return tg_log_softmax(l->a, 0);
    case G_CROSS_ENTROPY: return tg_cross_entropy(l->a, l->target);
    case G_LINEAR: return tg_linear(l->a, l->b, .bias = l->bias);
    case G_MSE: return tg_mse_loss(l->a, l->b);
    default: return tg_cat(TG_TENSORS(l->a, l->b), .dim = 0);
    }
}

static void b_shape(int c, int64_t *shape)
{
    shape[0] = c == G_MM ? 12 : c == G_LINEAR ? 5 : c == G_CAT ? 3 : 8;
    shape[1] = c == G_MM ? 5 : 12;
}

/* Builds the leaves on the CPU and their CUDA copies, runs forward + backward on both. */
static void grad_case(int c, tg_dtype dt)
{
    int64_t sa[2] = { 8, 12 }, sb[2], sbias[1] = { 5 }, st[1] = { 8 };
    b_shape(c, sb);
    leaves cpu, gpu;
    cpu.a = kt_rand(sa, 2, dt, 1 + c, -2, 2);
    cpu.b = kt_rand(sb, 2, dt, 2 + c, -2, 2);
    cpu.bias = kt_rand(sbias, 1, dt, 3 + c, -1, 1);
    cpu.target = kt_rand(st, 1, TG_INT64, 4 + c, 0, 12);
    gpu.a = kt_cuda(cpu.a);
    gpu.b = kt_cuda(cpu.b);
    gpu.bias = kt_cuda(cpu.bias);
    gpu.target = kt_cuda(cpu.target);
    tg_tensor *const grads_of[3][2] = { { cpu.a, gpu.a },
                                        { cpu.b, gpu.b },
                                        { cpu.bias, gpu.bias } };
    for (int k = 0; k < 3; k++) {
        tg_tensor_set_requires_grad(grads_of[k][0], true);
        tg_tensor_set_requires_grad(grads_of[k][1], true);
    }
    tg_tensor *yc = forward(c, &cpu), *yg = forward(c, &gpu);
    cr_assert(yc && yg, "%s forward: %s", case_names[c], tg_last_error());
    tg_tensor *lc = yc, *lg = yg;
    if (tg_tensor_dim(yc) > 0) {
        tg_tensor *w = kt_rand(tg_tensor_sizes(yc), tg_tensor_dim(yc), dt, 99, -1, 1),
                  *gw = kt_cuda(w);
        lc = tg_sum(tg_mul(yc, w));
        lg = tg_sum(tg_mul(yg, gw));
    }
    cr_assert_eq(tg_backward(lc), 0, "%s backward (CPU): %s", case_names[c], tg_last_error());
    cr_assert_eq(tg_backward(lg), 0, "%s backward (CUDA): %s", case_names[c], tg_last_error());
    double tol = dt == TG_FLOAT64 ? 1e-10 : 1e-4;
    for (int k = 0; k < 3; k++) {
        tg_tensor *gc = tg_tensor_grad(grads_of[k][0]), *gg = tg_tensor_grad(grads_of[k][1]);
        cr_assert_eq(gc == NULL, gg == NULL, "%s: leaf %d has a gradient on one device only",
                     case_names[c], k);
        if (!gc) continue;
        char what[64];
        snprintf(what, sizeof what, "%s %s grad of leaf %d", case_names[c], tg_dtype_name(dt), k);
        kt_assert_cuda_close(gg, gc, tol, tol, what); /* the scope owns both grads */
    }
}

Test(cuda_grad, cuda_vs_cpu)
{
    KT_REQUIRE_DEVICE("cuda_grad::cuda_vs_cpu");
    kt_live base = kt_live_now();
    for (int t = 0; t < 2; t++)
        for (int c = 0; c < G_COUNT; c++) {
            tg_scope_begin();
            grad_case(c, t ? TG_FLOAT32 : TG_FLOAT64);
            tg_scope_end();
        }
    kt_assert_no_leak(base);
}

/* Three training steps of a 12-32-32-5 perceptron (linear, relu, cross_entropy, backward, Adam
 * at lr 0.01) from the same weights and batch on both devices: the weights and Adam's moments
 * after the steps agree. float64, bound 1e-10: the devices sum in different orders, and Adam,
 * which divides by the gradient's running magnitude, turns float32 noise on a near-zero
 * gradient into a full step of lr (float32 kernels are compared op by op elsewhere). */
Test(cuda_grad, mlp_training_steps)
{
    KT_REQUIRE_DEVICE("cuda_grad::mlp_training_steps");
    kt_live base = kt_live_now();
    enum { L = 3, P = 2 * L };
    static const int64_t width[L + 1] = { 12, 32, 32, 5 };
    tg_scope_begin();
    tg_tensor *p[2][P], *state[2][P][3];
    for (int k = 0; k < P; k++) {
        int l = k / 2;
        int64_t shape[2] = { width[l + 1], width[l] };
        tg_tensor *c = kt_rand(shape, k % 2 ? 1 : 2, TG_FLOAT64, 100 + (uint64_t)k, -0.3, 0.3);
        p[0][k] = c;
        p[1][k] = kt_cuda(c);
        for (int d = 0; d < 2; d++) {
            tg_tensor_set_requires_grad(p[d][k], true);
            for (int j = 0; j < 3; j++) state[d][k][j] = tg_zeros_like(p[d][k]);
        }
    }
    tg_tensor *x[2], *y[2];
    x[0] = kt_rand((int64_t[]){ 16, 12 }, 2, TG_FLOAT64, 7, -1, 1);
    y[0] = kt_rand((int64_t[]){ 16 }, 1, TG_INT64, 8, 0, 5);
    x[1] = kt_cuda(x[0]);
    y[1] = kt_cuda(y[0]);
    for (int step = 1; step <= 3; step++)
        for (int d = 0; d < 2; d++) {
            tg_tensor *h = x[d];
            for (int l = 0; l < L; l++) {
                h = tg_linear(h, p[d][2 * l], .bias = p[d][2 * l + 1]);
                if (l < L - 1) h = tg_relu(h);
            }
            tg_tensor *loss = tg_cross_entropy(h, y[d]);
            cr_assert(loss && tg_backward(loss) == 0, "step %d on %s: %s", step, d ? "CUDA" : "CPU",
                      tg_last_error());
            TG_NO_GRAD {
                for (int k = 0; k < P; k++) {
                    tg_tensor *g = tg_tensor_grad(p[d][k]);
                    cr_assert(tg_adam_step_(p[d][k], g, state[d][k][0], state[d][k][1],
                                            state[d][k][2], step, .lr = 0.01),
                              "adam on %s: %s", d ? "CUDA" : "CPU", tg_last_error());
                    tg_tensor_set_grad(p[d][k], NULL);
                }
            }
        }
    for (int k = 0; k < P; k++) {
        char what[64];
        snprintf(what, sizeof what, "%s %d after three steps", k % 2 ? "bias" : "weight", k / 2);
        kt_assert_cuda_close(p[1][k], p[0][k], 1e-10, 1e-10, what);
        kt_assert_cuda_close(state[1][k][0], state[0][k][0], 1e-10, 1e-10, "Adam's first moment");
        kt_assert_cuda_close(state[1][k][1], state[0][k][1], 1e-10, 1e-10, "Adam's second moment");
    }
    tg_scope_end();
    kt_assert_no_leak(base);
}

#endif

/* Every gradcheck case (the GC_REGISTER tables of tests/autograd/gc_cases_<family>.c: at least
 * one per differentiable operator, on broadcast, transposed and strided float64 inputs) run on
 * CUDA and on the CPU from the same inputs in the same layouts: every output and the gradient
 * of every input that requires grad must agree. The gradients come from the same formulas
 * (specs/derivatives.yaml), whose operators then run on the CUDA kernels, so this covers the
 * backward of every differentiable operator on the GPU.
 *
 * The loss is sum_o sum(out_o * w_o) over the floating outputs that require grad, w_o fixed
 * random, so no incoming gradient is uniform. Bound: float64 on both sides, differences come
 * only from summation order: |cuda - cpu| <= 1e-9 (1 + |cpu|). Cases that draw random numbers
 * (the generators differ between devices) run on CUDA and are checked for shapes and dtypes
 * only; cases that expect an error belong to the harness's own tests and are skipped. */
#include "kt_cuda.h"
#include "../autograd/gradcheck.h"

#include <criterion/parameterized.h>

#ifndef TG_WITH_CUDA
Test(cuda_grad_table, skipped) { KT_SKIP_NO_CUDA_BUILD(); }
#else

static bool draws_random_numbers(const gc_case *c)
{
    static const char *const random_ops[] = { "uniform_",      "normal_",    "random_.from",
                                              "rand_like",     "randn_like", "bernoulli",
                                              "native_dropout" };
    for (size_t i = 0; i < sizeof random_ops / sizeof *random_ops; i++)
        if (strcmp(c->op, random_ops[i]) == 0) return true;
    return (strcmp(c->op, "dropout") == 0 || strncmp(c->op, "feature_dropout", 15) == 0) &&
           !strstr(c->label, "eval");
}

typedef struct side {
    tg_tensor *in[GC_MAX_INPUTS], *out[GC_MAX_OUTPUTS];
    int n_in, n_out;
} side;

/* Inputs from the case's seed on `device`, outputs, then backward of the weighted sum. */
static void run_side(const gc_case *c, int index, tg_device device, side *s)
{
    const char *where = device.type == TG_CUDA ? "CUDA" : "CPU";
    uint64_t seed = 0xc0da0000u + (uint64_t)index, wseed = 7;
    s->n_in = 0;
    for (; s->n_in < GC_MAX_INPUTS && c->in[s->n_in].used; s->n_in++) {
        s->in[s->n_in] = gc_make_input_on(&c->in[s->n_in], &seed, device);
        cr_assert(s->in[s->n_in], "%s [%s] input %d on %s: %s", c->op, c->label, s->n_in, where,
                  tg_last_error());
    }
    if (draws_random_numbers(c)) tg_manual_seed(1234);
    s->n_out = c->fn(s->in, s->out);
    cr_assert_geq(s->n_out, 0, "%s [%s] on %s: %s", c->op, c->label, where, tg_last_error());
    /* The weights first: gc_make_input_on releases its intermediates, so it runs outside scopes. */
    tg_tensor *w[GC_MAX_OUTPUTS] = { NULL };
    for (int k = 0; k < s->n_out; k++) {
        if (!tg_tensor_requires_grad(s->out[k])) continue;
        gc_input spec = { .used = true,
                          .ndim = (int8_t)tg_tensor_dim(s->out[k]),
                          .domain = GC_REAL,
                          .constant = true };
        for (int d = 0; d < spec.ndim; d++) spec.shape[d] = tg_tensor_sizes(s->out[k])[d];
        w[k] = gc_make_input_on(&spec, &wseed, device);
        cr_assert(w[k], "%s [%s]: weight on %s: %s", c->op, c->label, where, tg_last_error());
    }
    tg_scope_begin();
    tg_tensor *loss = NULL;
    for (int k = 0; k < s->n_out; k++) {
        if (!w[k]) continue;
        tg_tensor *term = tg_sum(tg_mul(s->out[k], w[k]));
        loss = loss ? tg_add(loss, term) : term;
        cr_assert(loss, "%s [%s]: loss on %s: %s", c->op, c->label, where, tg_last_error());
    }
    if (loss)
        cr_assert_eq(tg_backward(loss), 0, "%s [%s]: backward on %s: %s", c->op, c->label, where,
                     tg_last_error());
    tg_scope_end();
    for (int k = 0; k < s->n_out; k++) tg_release(w[k]);
}

static void release_side(side *s)
{
    for (int i = 0; i < s->n_in; i++) tg_release(s->in[i]);
    for (int k = 0; k < s->n_out; k++) tg_release(s->out[k]);
}

static void compare(const tg_tensor *g, const tg_tensor *c, bool values, const char *what)
{
    if (values) {
        kt_assert_cuda_close(g, c, 1e-9, 1e-9, what);
        return;
    }
    cr_assert_eq(tg_tensor_device(g).type, TG_CUDA, "%s: not on the CUDA device", what);
    cr_assert_eq(tg_tensor_dtype(g), tg_tensor_dtype(c), "%s: dtype differs", what);
    kt_assert_shape(g, tg_tensor_sizes(c), tg_tensor_dim(c));
}

/* Cases call operators that warn like PyTorch (mse_loss with a broadcast target): not news. */
static void ignore_warning(const char *msg, void *user)
{
    (void)msg;
    (void)user;
}

static void run_case(int index)
{
    const gc_case *c = gc_case_at(index);
    KT_REQUIRE_DEVICE("cuda_grad_table::case");
    if (c->expect_error)
        cr_skip_test("cases that expect a gradcheck failure test the harness, not a device");
    tg_set_warning_handler(ignore_warning, NULL);
    kt_live base = kt_live_now();
    side cpu, gpu;
    run_side(c, index, TG_DEVICE_CPU, &cpu);
    run_side(c, index, TG_DEVICE_CUDA(0), &gpu);
    cr_assert_eq(gpu.n_out, cpu.n_out, "%s [%s]: %d outputs on CUDA, %d on the CPU", c->op,
                 c->label, gpu.n_out, cpu.n_out);
    bool values = !draws_random_numbers(c);
    char what[192];
    tg_scope_begin();
    for (int k = 0; k < cpu.n_out; k++) {
        snprintf(what, sizeof what, "%s [%s]: output %d", c->op, c->label, k);
        compare(gpu.out[k], cpu.out[k], values, what);
    }
    for (int i = 0; i < cpu.n_in; i++) {
        tg_tensor *gc = tg_tensor_grad(cpu.in[i]), *gg = tg_tensor_grad(gpu.in[i]);
        cr_assert_eq(gc == NULL, gg == NULL, "%s [%s]: input %d has a gradient on %s only", c->op,
                     c->label, i, gc ? "the CPU" : "CUDA");
        if (!gc) continue;
        snprintf(what, sizeof what, "%s [%s]: gradient of input %d", c->op, c->label, i);
        compare(gg, gc, values, what);
    }
    tg_scope_end();
    release_side(&cpu);
    release_side(&gpu);
    kt_assert_no_leak(base);
}

ParameterizedTestParameters(cuda_grad_table, case) { return kt_index_params(gc_num_cases()); }

ParameterizedTest(int *index, cuda_grad_table, case) { run_case(*index); }

#endif

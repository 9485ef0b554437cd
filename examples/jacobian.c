/* jacobian: forward-mode AD and the functional transforms (tg_functional.h,
 * docs/autograd.md "Functional transforms") on two small functions of x in R^3:
 *
 *   g(x) = tanh(A x)                      a jvp J_g(x) v, and the whole Jacobian both ways
 *   f(x) = 1/2 x^T A x + sum(sin(x))      its Hessian A - diag(sin(x)), both ways, and an hvp
 *
 * with A symmetric. Run: make -j2 && build/examples/jacobian. The printed values equal
 * PyTorch 1.13's torch.autograd.functional.jvp / jacobian / hessian / hvp on the same inputs
 * (float64). */
#include <stdio.h>

#include "tensorgen.h"

static tg_tensor *A; /* (3, 3), symmetric */

/* g(x) = tanh(A x): one output. Operators' results belong to the scope the transform opens
 * around the call, so nothing is released here. */
static int g(void *ctx, tg_tensor_list in, tg_tensor **out, int max_out)
{
    (void)ctx;
    (void)max_out;
    out[0] = tg_tanh(tg_matmul(A, in.data[0]));
    return out[0] ? 1 : -1; /* an error is already recorded when an operator failed */
}

/* f(x) = 1/2 x^T A x + sum(sin(x)): a scalar. */
static int f(void *ctx, tg_tensor_list in, tg_tensor **out, int max_out)
{
    (void)ctx;
    (void)max_out;
    tg_tensor *x = in.data[0];
    tg_tensor *quad = tg_mul_scalar(tg_matmul(x, tg_matmul(A, x)), 0.5);
    out[0] = tg_add(quad, tg_sum(tg_sin(x)));
    return out[0] ? 1 : -1;
}

static int fail(void)
{
    fprintf(stderr, "jacobian: %s\n", tg_last_error());
    return 1;
}

int main(void)
{
    const double a[] = { 2, 1, 0, 1, 3, -1, 0, -1, 1 }, xv[] = { 0.5, -1, 2 }, vv[] = { 1, 0, -1 };
    A = tg_tensor_from_data(a, (int64_t[]){ 3, 3 }, 2, TG_FLOAT64);
    tg_tensor *x = tg_tensor_from_data(xv, (int64_t[]){ 3 }, 1, TG_FLOAT64);
    tg_tensor *v = tg_tensor_from_data(vv, (int64_t[]){ 3 }, 1, TG_FLOAT64);
    int rc = 0;

    tg_scope_begin(); /* owns every result below */
    tg_tensor_list outs, jvp, jac_rev, jac_fwd, hess_rev, hess_fwd, hvp;

    /* Forward mode: one pass on dual numbers gives g(x) and J_g(x) v. */
    if (tg_jvp(g, NULL, TG_TENSORS(x), TG_TENSORS(v), &outs, &jvp)) rc = fail();
    /* The Jacobian, (3, 3): one vjp per output element, or one jvp per input element. */
    if (!rc && tg_jacobian(g, NULL, TG_TENSORS(x), &jac_rev) < 0) rc = fail();
    if (!rc && tg_jacobian(g, NULL, TG_TENSORS(x), &jac_fwd, .strategy = TG_FORWARD_MODE) < 0)
        rc = fail();
    /* The Hessian of f: reverse-over-reverse, and forward-over-reverse (one hvp per column). */
    if (!rc && tg_hessian(f, NULL, TG_TENSORS(x), &hess_rev)) rc = fail();
    if (!rc && tg_hessian(f, NULL, TG_TENSORS(x), &hess_fwd, .outer = TG_FORWARD_MODE)) rc = fail();
    tg_tensor *fx = NULL;
    if (!rc && tg_hvp(f, NULL, TG_TENSORS(x), TG_TENSORS(v), &fx, &hvp)) rc = fail();

    if (!rc) {
        const struct {
            const char *label;
            tg_tensor *t;
        } shown[] = {
            { "g(x)", outs.data[0] },
            { "jvp: J_g(x) v", jvp.data[0] },
            { "J_g(x), reverse mode", jac_rev.data[0] },
            { "J_g(x), forward mode", jac_fwd.data[0] },
            { NULL, NULL }, /* f(x), a number */
            { "Hessian of f, reverse-over-reverse", hess_rev.data[0] },
            { "Hessian of f, forward-over-reverse", hess_fwd.data[0] },
            { "hvp: H v", hvp.data[0] },
        };
        for (size_t i = 0; i < sizeof shown / sizeof *shown; i++) {
            if (!shown[i].label) {
                printf("f(x) = %.6f\n", tg_item(fx));
                continue;
            }
            printf("%s =\n", shown[i].label);
            tg_print(shown[i].t);
        }
    }
    tg_scope_end();
    tg_release(v);
    tg_release(x);
    tg_release(A);
    return rc;
}

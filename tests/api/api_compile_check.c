/* The public API compile check: calls operators with and without their optional arguments.
 * `make test` compiles this file with gcc and clang (-std=c11 -Wall -Wextra -Werror), which
 * catches a generated header that warns in user code (the options macros override their own
 * defaults, see generated/tg_ops.h). It is also linked into the test binary, so it defines
 * functions only (no main, no tests); nothing calls them. */
#include "tensorgen.h"

tg_tensor *api_check_binary(tg_tensor *a, tg_tensor *b);
tg_tensor *api_check_reduce(tg_tensor *x);
tg_values_indices api_check_multi(tg_tensor *x);
tg_tensor *api_check_lists(tg_tensor *a, tg_tensor *b);
tg_tensor *api_check_factories(void);

tg_tensor *api_check_binary(tg_tensor *a, tg_tensor *b)
{
    tg_tensor *c = tg_add(a, b); /* alpha defaults to 1 */
    tg_tensor *d = tg_add(a, b, .alpha = 2);
    tg_tensor *e = tg_mul(c, d); /* no defaults: a plain function */
    tg_tensor *f = tg_add_scalar(e, 1.5, .alpha = -1);
    tg_tensor *g = tg_div_mode(f, b, "floor");
    tg_tensor *h = tg_clamp(g, .min = 0.0, .max = 6.0);
    tg_release(c);
    tg_release(d);
    tg_release(e);
    tg_release(f);
    tg_release(g);
    return h;
}

tg_tensor *api_check_reduce(tg_tensor *x)
{
    tg_tensor *s0 = tg_sum(x); /* over every dim */
    tg_tensor *s1 = tg_sum(x, .dim = TG_INTS(1), .keepdim = true);
    tg_tensor *s2 = tg_sum(x, .dim = TG_INTS(0, 1), .dtype = TG_FLOAT64);
    tg_tensor *v = tg_var(x, .correction = 0);
    tg_tensor *am = tg_argmax(x, .dim = -1, .keepdim = false);
    tg_release(s0);
    tg_release(s2);
    tg_release(v);
    tg_release(am);
    return s1;
}

tg_values_indices api_check_multi(tg_tensor *x)
{
    tg_values_indices m = tg_max_dim(x, 1);
    tg_release(m.values);
    tg_release(m.indices);
    return tg_max_dim(x, 1, .keepdim = true);
}

tg_tensor *api_check_lists(tg_tensor *a, tg_tensor *b)
{
    tg_tensor *c = tg_cat(TG_TENSORS(a, b));
    tg_tensor *d = tg_cat(TG_TENSORS(a, b, c), .dim = 1);
    tg_tensor *e = tg_permute(d, TG_INTS(1, 0));
    tg_tensor *f = tg_reshape(e, TG_INTS(-1));
    tg_release(c);
    tg_release(d);
    tg_release(e);
    return f;
}

tg_tensor *api_check_factories(void)
{
    tg_tensor *e = tg_empty(TG_INTS(2, 3));
    tg_tensor *z = tg_zeros(TG_INTS(2, 3), .dtype = TG_INT64, .device = TG_DEVICE_CPU);
    tg_tensor *o = tg_ones(TG_INTS_EMPTY); /* a zero-dim tensor */
    tg_tensor *r = tg_arange_start_step(0, 10, .step = 2);
    tg_tensor *n = tg_randn(TG_INTS(4));
    tg_tensor *u = tg_uniform_(n, .from = -1, .to = 1);
    tg_release(e);
    tg_release(z);
    tg_release(o);
    tg_release(r);
    tg_release(n);
    return u;
}

/* The functional transforms (tg_functional.h): each options macro with and without options. */
int api_check_functional(tg_tensor *x);

static int api_identity(void *ctx, tg_tensor_list in, tg_tensor **out, int max_out)
{
    (void)ctx;
    (void)max_out;
    out[0] = tg_scope_track(tg_retain(in.data[0]));
    return 1;
}

int api_check_functional(tg_tensor *x)
{
    tg_tensor_list outs, r;
    tg_tensor *value;
    int rc = tg_jvp(api_identity, NULL, TG_TENSORS(x), TG_TENSORS(x), &outs, &r);
    rc |= tg_jvp(api_identity, NULL, TG_TENSORS(x), TG_TENSORS(x), NULL, &r, .create_graph = true);
    rc |= tg_vjp(api_identity, NULL, TG_TENSORS(x), TG_TENSORS(x), &outs, &r);
    rc |= tg_jacobian(api_identity, NULL, TG_TENSORS(x), &r) < 0;
    rc |= tg_jacobian(api_identity, NULL, TG_TENSORS(x), &r, .strategy = TG_FORWARD_MODE,
                      .create_graph = false) < 0;
    rc |= tg_hessian(api_identity, NULL, TG_TENSORS(x), &r, .outer = TG_FORWARD_MODE);
    rc |= tg_hvp(api_identity, NULL, TG_TENSORS(x), TG_TENSORS(x), &value, &r);
    rc |= tg_vhp(api_identity, NULL, TG_TENSORS(x), TG_TENSORS(x), NULL, &r, .create_graph = true);
    return rc;
}

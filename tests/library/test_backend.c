/* A device backend registered at run time (PyTorch's PrivateUse1, tg_library.h), written the
 * way a backend author would, with the public API only: "counting", whose memory is host
 * memory, counts every operator call that reaches its fallback and forwards it to the CPU
 * kernels (tg_call_boxed_cpu). It is declared by tests/library/counting_backend.yaml: tgen
 * generates its registration (counting_backend_register) and the prototype of its one kernel,
 * counting_add, which the compiler checks against the definition below. The results must be the CPU's, on the backend's device;
 * composite operators decompose before reaching it; kernels registered for its key win over
 * the fallback; autograd runs through it; and misuse gets errors naming what is wrong. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "counting_backend.h"
#include "tensorgen.h"
#include "kt_util.h"

static void leak_check(void)
{
    cr_expect_eq(tg_live_tensors(), 0, "leaked %lld tensors", (long long)tg_live_tensors());
}
TestSuite(backend, .fini = leak_check);

/* ---- the backend: host memory behind a device type of its own ---- */

static int64_t nalloc; /* live allocations on the device */
static void *counting_alloc(const char *op, size_t n, tg_device d)
{
    (void)op;
    (void)d;
    nalloc++;
    return malloc(n ? n : 1);
}
static void counting_free(void *p, size_t n, tg_device d)
{
    (void)n;
    (void)d;
    nalloc--;
    free(p);
}
static int counting_copy(void *dst, tg_device dd, const void *src, tg_device sd, size_t n)
{
    (void)dd;
    (void)sd;
    memcpy(dst, src, n);
    return 0;
}
static const tg_device_hooks counting_hooks = { counting_alloc, counting_free, counting_copy };

/* What reached the fallback, by operator name. */
typedef struct calls {
    char names[64][64];
    int counts[64];
    int n;
} calls;
static calls seen;

static int count_of(const char *op)
{
    for (int i = 0; i < seen.n; i++)
        if (!strcmp(seen.names[i], op)) return seen.counts[i];
    return 0;
}

static int counting_fallback(const tg_op_entry *op, tg_keyset keys, tg_boxed_stack *s, void *ctx)
{
    (void)keys;
    int *total = ctx;
    (*total)++;
    const char *name = tg_op_name(op);
    int i = 0;
    while (i < seen.n && strcmp(seen.names[i], name)) i++;
    if (i == seen.n && seen.n < 64)
        snprintf(seen.names[seen.n++], sizeof seen.names[0], "%s", name);
    if (i < 64) seen.counts[i]++;
    return tg_call_boxed_cpu(op, s);
}

static int total_calls;

/* Registers the backend, its kernel (add.Tensor) and its fallback through the generated
 * registration; its device type (= its dispatch key). */
static int counting_backend(void)
{
    int type = counting_backend_register(&counting_hooks, counting_fallback, &total_calls);
    cr_assert(type >= TG_KEY_BACKEND_FIRST && type <= TG_KEY_BACKEND_LAST, "%s", tg_last_error());
    return type;
}

static tg_tensor *vec(const float *v, int64_t n)
{
    return tg_tensor_from_data(v, (int64_t[]){ n }, 1, TG_FLOAT32);
}

static void expect_values(tg_tensor *t, const double *want, int64_t n, double tol)
{
    cr_assert(t, "%s", tg_last_error());
    cr_assert_eq(tg_tensor_numel(t), n);
    double got[64];
    cr_assert_eq(tg_tensor_to_doubles(t, got, n), 0, "%s", tg_last_error());
    for (int64_t i = 0; i < n; i++)
        cr_expect(fabs(got[i] - want[i]) <= tol, "element %lld: got %g, want %g", (long long)i,
                  got[i], want[i]);
}

Test(backend, operators_reach_the_fallback_and_run_on_the_cpu)
{
    int type = counting_backend();
    tg_device dev = TG_DEVICE_OF(type, 0);
    tg_tensor *a_cpu = vec((float[]){ 1, 2, 3 }, 3), *b_cpu = vec((float[]){ 10, 20, 30 }, 3);
    tg_tensor *a = tg_to_device(a_cpu, dev), *b = tg_to_device(b_cpu, dev);
    cr_assert(a && b, "%s", tg_last_error());
    cr_expect_eq(tg_tensor_device(a).type, type);
    tg_tensor *c = tg_sub(a, b, .alpha = 2);
    expect_values(c, (double[]){ -19, -38, -57 }, 3, 0);
    cr_expect_eq(tg_tensor_device(c).type, type, "the result is on the backend's device");
    cr_expect_eq(count_of("sub.Tensor"), 1);
    /* in place: the device tensor itself is written and returned */
    tg_tensor *r = tg_mul_(c, b);
    cr_expect_eq(r, c);
    expect_values(c, (double[]){ -190, -760, -1710 }, 3, 0);
    cr_expect_eq(count_of("mul_.Tensor"), 1);
    /* printing shows the device by the backend's name */
    char *text = tg_tensor_to_string(a);
    cr_expect(text && strstr(text, "device='counting:0'"), "%s", text ? text : tg_last_error());
    free(text);
    kt_release_all(r, c, a, b, a_cpu, b_cpu);
    cr_expect_eq(nalloc, 0, "the backend's memory is given back");
}

/* matmul is CompositeImplicitAutograd: it decomposes into mm before dispatch reaches the
 * backend, which sees mm only (PyTorch's rule for alias keys). */
Test(backend, composite_operators_decompose_before_the_backend)
{
    int type = counting_backend();
    tg_device dev = TG_DEVICE_OF(type, 0);
    float av[] = { 1, 2, 3, 4, 5, 6 }, bv[] = { 1, 0, 0, 1, 1, 1 };
    tg_tensor *a_cpu = tg_tensor_from_data(av, (int64_t[]){ 2, 3 }, 2, TG_FLOAT32);
    tg_tensor *b_cpu = tg_tensor_from_data(bv, (int64_t[]){ 3, 2 }, 2, TG_FLOAT32);
    tg_tensor *a = tg_to_device(a_cpu, dev), *b = tg_to_device(b_cpu, dev);
    tg_tensor *m = tg_matmul(a, b);
    expect_values(m, (double[]){ 4, 5, 10, 11 }, 4, 0);
    cr_expect_eq(count_of("matmul"), 0);
    cr_expect_eq(count_of("mm"), 1);
    kt_release_all(m, a, b, a_cpu, b_cpu);
}

/* The backend's own kernels: an unboxed one for add.Tensor (the operator's kernel type, declared
 * in the generated counting_backend.h, registered by counting_backend_register) and a boxed one
 * for neg, registered by hand; both win over the fallback. */
static int nadd, nneg;
tg_tensor *counting_add(tg_tensor *self, tg_tensor *other, double alpha)
{
    nadd++;
    tg_tensor *s = tg_to_device(self, TG_DEVICE_CPU), *o = tg_to_device(other, TG_DEVICE_CPU);
    tg_tensor *r = tg_add(s, o, .alpha = alpha);
    tg_tensor *d = r ? tg_to_device(r, tg_tensor_device(self)) : NULL;
    kt_release_all(s, o, r);
    return d;
}
static int counting_neg(const tg_op_entry *op, tg_keyset keys, tg_boxed_stack *s, void *ctx)
{
    (void)keys;
    (void)ctx;
    nneg++;
    return tg_call_boxed_cpu(op, s);
}

Test(backend, kernels_registered_for_the_key_win)
{
    int type = counting_backend();
    cr_assert_eq(tg_register_boxed_kernel("aten::neg", type, counting_neg, NULL), 0, "%s",
                 tg_last_error());
    tg_device dev = TG_DEVICE_OF(type, 0);
    tg_tensor *x_cpu = vec((float[]){ 1, -2 }, 2), *x = tg_to_device(x_cpu, dev);
    tg_tensor *y = tg_add(x, x, .alpha = 3), *z = tg_neg(x);
    expect_values(y, (double[]){ 4, -8 }, 2, 0);
    expect_values(z, (double[]){ -1, 2 }, 2, 0);
    cr_expect_eq(nadd, 1);
    cr_expect_eq(nneg, 1);
    cr_expect_eq(count_of("add.Tensor"), 0, "the fallback did not see add");
    cr_expect_eq(count_of("neg"), 0, "the fallback did not see neg");
    kt_release_all(y, z, x, x_cpu);
}

/* Backward through the backend: the gradients are the CPU's, on the backend's device. */
Test(backend, autograd_runs_through_the_backend)
{
    int type = counting_backend();
    tg_device dev = TG_DEVICE_OF(type, 0);
    tg_tensor *x_cpu = vec((float[]){ 1, 2, 3 }, 3);
    tg_tensor *x = tg_tensor_set_requires_grad(tg_to_device(x_cpu, dev), true);
    tg_scope_begin();
    tg_tensor *loss = tg_sum(tg_mul(tg_sin(x), x)); /* d/dx x sin x = sin x + x cos x */
    cr_assert_eq(tg_backward(loss), 0, "%s", tg_last_error());
    tg_scope_end();
    tg_tensor *g = tg_tensor_grad(x);
    cr_assert(g, "no gradient");
    cr_expect_eq(tg_tensor_device(g).type, type);
    double want[3];
    for (int i = 0; i < 3; i++) want[i] = sin(i + 1.0) + (i + 1.0) * cos(i + 1.0);
    expect_values(g, want, 3, 1e-5);
    cr_expect(count_of("sin") >= 1 && count_of("cos") >= 1, "sin and cos ran on the backend");
    kt_release_all(g, x, x_cpu);
}

/* ---- errors ---- */

Test(backend, a_key_without_kernel_or_fallback_fails_naming_it)
{
    int type = tg_backend_register("bare", &counting_hooks);
    cr_assert(type > 0, "%s", tg_last_error());
    /* empty is composite: it only allocates (the hooks); copying in needs a kernel (copy_) */
    tg_tensor *x = tg_empty(TG_INTS(1), .device = TG_DEVICE_OF(type, 0));
    cr_assert(x, "%s", tg_last_error());
    cr_expect_null(tg_exp(x));
    const char *want = "exp: no kernel for key bare; the operator has kernels for: CPU";
    cr_expect(!strncmp(tg_last_error(), want, strlen(want)), "%s", tg_last_error());
    tg_clear_error();
    tg_release(x);
}

Test(backend, registration_errors)
{
    cr_expect_eq(tg_backend_register("Counting!", &counting_hooks), -1);
    cr_expect_str_eq(tg_last_error(), "backend_register: invalid backend name 'Counting!': "
                                      "expected a lower-case identifier of at most 31 characters");
    tg_clear_error();
    cr_expect_eq(tg_backend_register("cuda", &counting_hooks), -1);
    cr_expect_str_eq(tg_last_error(),
                     "backend_register: the backend name 'cuda' is tensorgen's own");
    tg_clear_error();
    cr_expect_eq(tg_backend_register("nohooks", &(tg_device_hooks){ 0 }), -1);
    cr_expect_str_eq(tg_last_error(), "backend_register: backend 'nohooks': its hooks need alloc, "
                                      "free and copy");
    tg_clear_error();
    int type = counting_backend();
    cr_expect_eq(tg_backend_register("counting", &counting_hooks), -1);
    cr_expect_str_eq(tg_last_error(), "backend_register: a backend named 'counting' is already "
                                      "registered");
    tg_clear_error();
    /* six slots in all: five more fit, the seventh does not */
    const char *names[] = { "b1", "b2", "b3", "b4", "b5" };
    for (int i = 0; i < 5; i++) cr_expect(tg_backend_register(names[i], &counting_hooks) > 0);
    cr_expect_eq(tg_backend_register("b6", &counting_hooks), -1);
    cr_expect_str_eq(tg_last_error(), "backend_register: cannot register backend 'b6': all 6 "
                                      "backend slots are taken");
    tg_clear_error();
    /* kernels and fallbacks */
    cr_expect_eq(tg_register_fallback(type, counting_fallback, NULL), -1);
    cr_expect_str_eq(tg_last_error(), "register_fallback: key counting already has a fallback");
    tg_clear_error();
    cr_expect_eq(tg_register_kernel("add.Tensor", TG_KEY_AUTOGRAD, (tg_fnptr)counting_add), -1);
    cr_expect_str_eq(tg_last_error(), "register_kernel: add.Tensor: kernels are registered for "
                                      "CPU, CUDA or a backend's key (2 to 7), not key 8");
    tg_clear_error();
    cr_expect_eq(tg_register_kernel("no_such_op", type, (tg_fnptr)counting_add), -1);
    cr_expect_str_eq(tg_last_error(), "register_kernel: unknown operator 'no_such_op'");
    tg_clear_error();
    cr_expect_eq(tg_register_kernel("add.Tensor", TG_KEY_CPU, (tg_fnptr)counting_add), -1);
    cr_expect_str_eq(tg_last_error(), "add.Tensor: a kernel for key CPU is already registered");
    tg_clear_error();
    /* counting_backend_register registered add.Tensor's kernel already */
    cr_expect_eq(tg_register_kernel("add.Tensor", type, (tg_fnptr)counting_add), -1);
    cr_expect_str_eq(tg_last_error(),
                     "add.Tensor: a kernel for key counting is already registered");
    tg_clear_error();
    cr_expect_eq(tg_register_boxed_kernel("add.Tensor", type, counting_neg, NULL), -1);
    cr_expect_str_eq(tg_last_error(),
                     "add.Tensor: a kernel for key counting is already registered");
    tg_clear_error();
    cr_expect_eq(tg_register_kernel("add.Tensor", type, NULL), -1);
    cr_expect_str_eq(tg_last_error(), "register_kernel: add.Tensor: no kernel given");
    tg_clear_error();
}

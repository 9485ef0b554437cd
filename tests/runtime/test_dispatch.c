/* Dispatch: key sets, highest-key-wins, autograd fall-through, CUDA fallback, error text;
 * out-of-tree registration and boxed calls by name. */
#include "rt_test.h"
#include "dispatch/dispatch.h"
#include "fake_device.h"
#include "kt_util.h"

TestSuite(rt_dispatch, .fini = rt_leak_check);

static void k_cpu(void) {}
static void k_cuda(void) {}
static void k_autograd(void) {}

#define KEY(k) ((tg_keyset)1 << (k))

Test(rt_dispatch, tensor_keys)
{
    tg_tensor *t = rt_arange((int64_t[]){ 2 }, 1, TG_FLOAT32);
    cr_expect_eq(tg_dispatch_tensor_keys(t), KEY(TG_KEY_CPU));
    tg_tensor_set_requires_grad(t, true);
    cr_expect_eq(tg_dispatch_tensor_keys(t), KEY(TG_KEY_CPU) | KEY(TG_KEY_AUTOGRAD));
    tg_set_grad_enabled(false);
    cr_expect_eq(tg_dispatch_tensor_keys(t), KEY(TG_KEY_CPU));
    tg_set_grad_enabled(true);
    tg_release(t);
}

Test(rt_dispatch, lookup)
{
    tg_op_entry e = { .name = "add.Tensor", .nargs = 3 };
    e.kernels[TG_KEY_CPU] = k_cpu;
    e.kernels[TG_KEY_AUTOGRAD] = k_autograd;
    bool fb;
    tg_keyset cpu = KEY(TG_KEY_CPU), ag = KEY(TG_KEY_AUTOGRAD);
    cr_expect_eq(tg_dispatch_lookup(&e, cpu, &fb), k_cpu);
    cr_expect_eq(tg_dispatch_lookup(&e, cpu | ag, &fb), k_autograd);
    cr_expect_eq(tg_dispatch_lookup(&e, 0, &fb), k_cpu, "no tensors: CPU");
    /* excluded keys: an autograd kernel redispatching below itself */
    tg_keyset prev = tg_dispatch_set_excluded_keys(ag);
    cr_expect_eq(tg_dispatch_lookup(&e, cpu | ag, &fb), k_cpu);
    cr_expect_eq(tg_dispatch_set_excluded_keys(prev), ag);
    /* autograd without a kernel falls through to the backend */
    e.kernels[TG_KEY_AUTOGRAD] = NULL;
    cr_expect_eq(tg_dispatch_lookup(&e, cpu | ag, &fb), k_cpu);
    /* CUDA without a kernel: fall back to CPU */
    e.kernels[TG_KEY_AUTOGRAD] = k_autograd;
    cr_expect_null(tg_dispatch_lookup(&e, KEY(TG_KEY_CUDA), &fb));
    cr_expect(fb);
    cr_expect_null(tg_last_error());
    /* ... or fail when the caller cannot fall back */
    cr_expect_null(tg_dispatch_lookup(&e, KEY(TG_KEY_CUDA), NULL));
    cr_expect_str_eq(tg_last_error(), "add.Tensor: no kernel for key CUDA; the operator has "
                                      "kernels for: CPU, Autograd");
    tg_clear_error();
    tg_op_entry g = { .name = "mm" };
    g.kernels[TG_KEY_CUDA] = k_cuda;
    cr_expect_eq(tg_dispatch_lookup(&g, KEY(TG_KEY_CUDA) | ag, &fb), k_cuda);
    cr_expect_null(tg_dispatch_lookup(&g, cpu, &fb));
    cr_expect_str_eq(tg_last_error(),
                     "mm: no kernel for key CPU; the operator has kernels for: CUDA");
    tg_clear_error();
}

/* An out-of-tree operator "twice(Tensor self) -> Tensor" with a CPU kernel and boxed entry. */
typedef tg_tensor *(*twice_fn)(tg_tensor *);
static tg_tensor *twice_cpu(tg_tensor *self)
{
    return rt_add(self, self, NULL, TG_ITER_PROMOTE_INPUTS);
}
static int twice_boxed(tg_fnptr k, tg_boxed_stack *s)
{
    if (s->n != 1 || s->v[0].tag != TG_IV_TENSOR) {
        tg__error("twice", "expected one tensor argument");
        return -1;
    }
    tg_tensor *self = s->v[0].v.t;
    tg_tensor *r = ((twice_fn)k)(self);
    tg_release(self); /* the stack owned the argument */
    s->v[0].v.t = r;
    return r ? 0 : -1;
}
static tg_op_entry my_ops[1] = { { .name = "rttest::twice",
                                   .schema = "rttest::twice(Tensor self) -> Tensor",
                                   .call_boxed = twice_boxed,
                                   .ntensor_args = 1,
                                   .nargs = 1 } };
static tg_op_entry *const my_rows[] = { &my_ops[0] };
static const tg_library my_lib = { TG_LIBRARY_ABI, "rttest", my_rows, 1, NULL, 0 };

Test(rt_dispatch, registry_and_boxed_calls)
{
    my_ops[0].kernels[TG_KEY_CPU] = (tg_fnptr)twice_cpu;
    cr_assert_eq(tg_library_register(&my_lib), 0);
    cr_expect_eq(tg_op_find("rttest::twice"), &my_ops[0]);
    cr_expect_eq(tg_library_register(&my_lib), 0, "registering the same library again is a no-op");
    /* another library with an operator of the same name */
    static tg_op_entry clash_ops[1] = { { .name = "rttest::twice", .nargs = 1 } };
    static tg_op_entry *const clash_rows[] = { &clash_ops[0] };
    static const tg_library clash = { TG_LIBRARY_ABI, "rttest", clash_rows, 1, NULL, 0 };
    cr_expect_eq(tg_library_register(&clash), -1);
    cr_expect_str_eq(tg_last_error(),
                     "library_register: operator rttest::twice is already registered");
    tg_clear_error();
    /* a library's operators are called with their namespace */
    cr_expect_null(tg_op_find("twice"));
    cr_expect_str_eq(tg_last_error(), "op_find: unknown operator 'twice' (did you mean "
                                      "'rttest::twice'? a library's operators are called "
                                      "with their namespace)");
    tg_clear_error();
    tg_boxed_stack s = { .n = 1 };
    s.v[0].tag = TG_IV_TENSOR;
    s.v[0].v.t = rt_arange((int64_t[]){ 3 }, 1, TG_FLOAT32);
    cr_assert_eq(tg_call_boxed("rttest::twice", &s), 0);
    rt_expect_values(s.v[0].v.t, (double[]){ 0, 2, 4 }, 3);
    tg_release(s.v[0].v.t);
    /* A failed call consumes its arguments too: the fresh tensor pushed here is released. */
    int64_t live = tg_live_tensors();
    s.n = 1;
    s.v[0].v.t = rt_arange((int64_t[]){ 3 }, 1, TG_FLOAT32);
    cr_expect_eq(tg_call_boxed("no_such_op.Tensor", &s), -1);
    cr_expect_str_eq(tg_last_error(), "op_find: unknown operator 'no_such_op.Tensor'");
    cr_expect_eq(s.n, 0);
    cr_expect_eq(tg_live_tensors(), live);
    tg_clear_error();
    /* unregistered: gone by name */
    tg_library_unregister(&my_lib);
    cr_expect_null(tg_op_find("rttest::twice"));
    tg_clear_error();
}

/* The push helpers of tg_library.h: every argument in schema order, None for an absent
 * optional, a full stack refused without taking a reference; and the keys' names. */
Test(rt_dispatch, boxed_push_helpers_and_key_names)
{
    tg_tensor *x = rt_arange((int64_t[]){ 2, 3 }, 2, TG_FLOAT32); /* [[0 1 2] [3 4 5]] */
    tg_boxed_stack s = { .n = 0 };
    /* sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype) */
    cr_assert_eq(tg_boxed_push_tensor(&s, x) | tg_boxed_push_none(&s) |
                     tg_boxed_push_bool(&s, false) | tg_boxed_push_none(&s),
                 0);
    cr_assert_eq(tg_call_boxed("sum.dim_IntList", &s), 0, "%s", tg_last_error());
    rt_expect_values(s.v[0].v.t, (double[]){ 15 }, 1);
    tg_boxed_clear(&s);
    cr_expect_eq(s.n, 0);
    tg_boxed_push_tensor(&s, x);
    tg_boxed_push_int_list(&s, TG_INTS(1));
    tg_boxed_push_bool(&s, true);
    tg_boxed_push_none(&s);
    cr_assert_eq(tg_call_boxed("aten::sum.dim_IntList", &s), 0, "%s", tg_last_error());
    rt_expect_values(s.v[0].v.t, (double[]){ 3, 12 }, 2);
    cr_expect_eq(tg_tensor_dim(s.v[0].v.t), 2, "keepdim");
    tg_boxed_clear(&s);
    /* a full stack: -1, nothing pushed, no reference taken */
    int64_t live = tg_live_tensors();
    for (int i = 0; i < TG_STACK_MAX; i++) cr_assert_eq(tg_boxed_push_int(&s, i), 0);
    cr_expect_eq(tg_boxed_push_tensor(&s, x), -1);
    cr_expect_eq(tg_boxed_push_double(&s, 1.0), -1);
    cr_expect_eq(s.n, TG_STACK_MAX);
    tg_boxed_clear(&s);
    cr_expect_eq(tg_live_tensors(), live);
    tg_release(x);
    cr_expect_str_eq(tg_dispatch_key_name(TG_KEY_CPU), "CPU");
    cr_expect_str_eq(tg_dispatch_key_name(TG_KEY_CUDA), "CUDA");
    cr_expect_str_eq(tg_dispatch_key_name(TG_KEY_AUTOGRAD), "Autograd");
    cr_expect_str_eq(tg_dispatch_key_name(TG_NUM_KEYS), "Unknown");
}

/* ---- the CUDA -> CPU fallback, against a fake device whose memory is host memory ---- */

/* inc_(Tensor(a!) self) -> Tensor(a!): self += 1 in place, CPU kernel only */
static tg_tensor *inc_cpu(tg_tensor *self)
{
    tg_tensor *one = tg__scalar_tensor(1, self->dtype, TG_DEVICE_CPU);
    tg_tensor *r = rt_add(self, one, self, TG_ITER_PROMOTE_INPUTS);
    tg_release(one);
    return r;
}
static tg_op_entry fb_ops[2] = {
    { .name = "rtfb::twice2", .call_boxed = twice_boxed, .ntensor_args = 1, .nargs = 1 },
    { .name = "rtfb::inc_", .call_boxed = twice_boxed, .ntensor_args = 1, .nargs = 1 },
};
static tg_op_entry *const fb_rows[] = { &fb_ops[0], &fb_ops[1] };
static const tg_library fb_lib = { TG_LIBRARY_ABI, "rtfb", fb_rows, 2, NULL, 0 };

static int nwarn;
static void count_warn(const char *msg, void *user)
{
    (void)msg;
    (void)user;
    nwarn++;
}

Test(rt_dispatch, cuda_fallback_runs_cpu_kernel)
{
    tg__register_device_hooks(TG_CUDA, &tg_test_fake_cuda);
    tg_set_warning_handler(count_warn, NULL);
    fb_ops[0].kernels[TG_KEY_CPU] = (tg_fnptr)twice_cpu;
    fb_ops[1].kernels[TG_KEY_CPU] = (tg_fnptr)inc_cpu;
    cr_assert_eq(tg_library_register(&fb_lib), 0);
    tg_device cuda = { TG_CUDA, 0 };
    tg_tensor *g = tg__empty("t", (int64_t[]){ 3 }, 1, TG_FLOAT32, cuda);
    tg_tensor *h = rt_arange((int64_t[]){ 3 }, 1, TG_FLOAT32);
    cr_assert_eq(tg__copy_into("copy_", g, h), 0);
    for (int rep = 0; rep < 2; rep++) {
        tg_boxed_stack s = { .n = 1 };
        s.v[0] = (tg_ivalue){ .tag = TG_IV_TENSOR, .v.t = tg_retain(g) };
        cr_assert_eq(tg_call_boxed("rtfb::twice2", &s), 0, "%s", tg_last_error());
        tg_tensor *r = s.v[0].v.t;
        cr_expect_eq(r->device.type, TG_CUDA, "the result moves to the inputs' device");
        rt_expect_values(r, (double[]){ 0, 2, 4 }, 3);
        tg_release(r);
    }
    cr_expect_eq(nwarn, 1, "warned once");
    /* in place: the device tensor itself is updated and returned */
    tg_boxed_stack s = { .n = 1 };
    s.v[0] = (tg_ivalue){ .tag = TG_IV_TENSOR, .v.t = tg_retain(g) };
    cr_assert_eq(tg_call_boxed("rtfb::inc_", &s), 0, "%s", tg_last_error());
    cr_expect_eq(s.v[0].v.t, g);
    rt_expect_values(g, (double[]){ 1, 2, 3 }, 3);
    kt_release_all(s.v[0].v.t, g, h);
    tg_set_warning_handler(NULL, NULL);
}

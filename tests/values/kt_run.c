/* The value table's runner (kt_case.h): builds a case's inputs, runs it on the CPU against its
 * fixture and its variants, and on another backend against the CPU. */
#include "kt_case.h"
#include "pointwise_loops.h"

extern const kt_case_table __start_kt_case_tables[];
extern const kt_case_table __stop_kt_case_tables[];

/* Keeps the section present (and __start/__stop defined) before any family registers. */
__attribute__((used, section("kt_case_tables"),
               aligned(16))) static const kt_case_table kt__no_cases = { NULL, 0 };

#define KT_MAX_CASES 2048

static const kt_case **all_cases(int *n)
{
    static const kt_case *list[KT_MAX_CASES];
    static int count = -1;
    if (count < 0) {
        count = 0;
        for (const kt_case_table *t = __start_kt_case_tables; t < __stop_kt_case_tables; t++)
            for (int64_t j = 0; t->cases && j < t->n; j++) {
                cr_assert_lt(count, KT_MAX_CASES, "raise KT_MAX_CASES");
                list[count++] = &t->cases[j];
            }
    }
    *n = count;
    return list;
}

int kt_num_cases(void)
{
    int n;
    all_cases(&n);
    return n;
}

const kt_case *kt_case_at(int i)
{
    int n;
    const kt_case **list = all_cases(&n);
    return i >= 0 && i < n ? list[i] : NULL;
}

bool kt_cases_cover(const char *schema, bool cuda)
{
    for (int i = 0; i < kt_num_cases(); i++) {
        const kt_case *c = kt_case_at(i);
        if (cuda && (c->flags & KT_CPU_ONLY)) continue;
        if (strcmp(c->op, schema) == 0) return true;
        for (const char *const *o = c->also; o && *o; o++)
            if (strcmp(*o, schema) == 0) return true;
    }
    return false;
}

int kt_sweep(tg_tensor *const *x, const kt_arg *a, tg_tensor **y)
{
    return a->ops[a->param].fn(x, a, y);
}

int kt_sweep_out(tg_tensor *const *x, const kt_arg *a, tg_tensor **y)
{
    const kt_op *o = &a->ops[a->param];
    return o->out ? o->out(x, a, y) : KT_NO_FORM;
}

int kt_sweep_inplace(tg_tensor *const *x, const kt_arg *a, tg_tensor **y)
{
    const kt_op *o = &a->ops[a->param];
    return o->inplace ? o->inplace(x, a, y) : KT_NO_FORM;
}

void kt_assert_broadcasts(const kt_op *ops, int n, tg_tensor *g, tg_tensor *x)
{
    tg_scope_begin();
    int64_t sizes[2] = { tg_tensor_size(g, 0), tg_tensor_size(x, 1) };
    tg_int_list size = { .len = 2, .data = sizes };
    tg_dtype dt = tg_promote_types(tg_tensor_dtype(g), tg_tensor_dtype(x));
    tg_tensor *in[2] = { g, x };
    tg_tensor *flat[2] = { tg_contiguous(tg_to(tg_expand(g, size), dt)),
                           tg_contiguous(tg_to(tg_expand(x, size), dt)) };
    kt_arg a = { .dtype = dt, .device = TG_DEVICE_CPU };
    for (int i = 0; i < n; i++) {
        tg_tensor *r[KT_MAX_OUT], *want[KT_MAX_OUT];
        cr_assert_eq(ops[i].fn(in, &a, r), 1, "%s: %s", ops[i].name, tg_last_error());
        kt_assert_shape(r[0], sizes, 2);
        cr_assert_eq(ops[i].fn(flat, &a, want), 1, "%s: %s", ops[i].name, tg_last_error());
        kt_assert_identical(r[0], want[0], ops[i].name);
    }
    tg_scope_end();
}

/* ------------------------------------------------------------------ inputs */

/* Input k of c as a contiguous CPU tensor, at the case's dtypes a->dtype and a->dtype2
 * (position d in its list). */
static tg_tensor *make_input(const kt_in *s, int k, const kt_arg *a, int d)
{
    tg_dtype t = s->dtype == KT_DT ? a->dtype : s->dtype == KT_DT2 ? a->dtype2 : s->dtype;
    cr_assert_neq(t, TG_DTYPE_NONE, "input %d names no dtype and the case lists none", k);
    int64_t n = 1;
    for (int i = 0; i < s->ndim; i++) n *= s->shape[i];
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    if (s->values) {
        memcpy(v, s->values, sizeof(double) * (size_t)n);
    } else {
        double lo = t == TG_BOOL ? 0 : t == TG_UINT8 && s->lo < 0 ? 0 : s->lo;
        double hi = t == TG_BOOL ? 2 : s->hi;
        kt_fill_random(v, n, (s->seed ? s->seed : 101 + (uint64_t)k) + (uint64_t)d, lo, hi);
        if (tg_dtype_is_integral(t, true))
            for (int64_t i = 0; i < n; i++) v[i] = floor(v[i]);
        else
            for (int64_t i = 0; i < n && i < s->nspecial; i++) v[i] = s->special[i];
    }
    tg_tensor *r = kt_tensor(v, s->shape, s->ndim, t);
    free(v);
    cr_assert(r, "input %d: %s", k, tg_last_error());
    return r;
}

/* The same values as t, not contiguous: the transpose of a contiguous copy holding the
 * transposed values (the last two dims, when both exceed 1), else every other element of a
 * tensor twice as long along its largest dim. t itself when it has at most one element. */
static tg_tensor *strided_copy(tg_tensor *t)
{
    int64_t nd = tg_tensor_dim(t);
    if (tg_tensor_numel(t) <= 1) return t;
    tg_tensor *r;
    if (nd >= 2 && tg_tensor_size(t, -1) > 1 && tg_tensor_size(t, -2) > 1) {
        r = tg_transpose(tg_contiguous(tg_transpose(t, -1, -2)), -1, -2);
    } else {
        int64_t sizes[KT_MAX_DIMS], d = 0;
        for (int64_t i = 0; i < nd; i++) {
            sizes[i] = tg_tensor_size(t, i);
            if (sizes[i] > sizes[d]) d = i;
        }
        sizes[d] *= 2;
        tg_int_list size = { .len = nd, .data = sizes };
        tg_tensor *big = tg_zeros(size, .dtype = tg_tensor_dtype(t), .device = tg_tensor_device(t));
        r = tg_slice(big, .dim = d, .step = 2);
        cr_assert(tg_copy_(r, t), "strided copy: %s", tg_last_error());
    }
    cr_assert(r && !tg_tensor_is_contiguous(r), "strided copy: %s", tg_last_error());
    return r;
}

/* ------------------------------------------------------------------ one run */

typedef struct result {
    tg_tensor *y[KT_MAX_OUT];
    int n;
} result;

typedef struct instance {
    const kt_case *c;
    int d; /* the dtype's position in c->dtypes */
    kt_arg a;
    int n_in;
    tg_tensor *cpu_in[KT_MAX_IN];
    char what[256];
} instance;

static const char *form_name[] = { "", " out=", " in place", " reference loop" };

static void call(instance *s, kt_fn fn, tg_tensor *const *in, kt_form form, tg_device device,
                 tg_tensor *const *out, result *r)
{
    kt_arg a = s->a;
    a.form = form;
    a.device = device;
    a.out = out;
    for (int k = 0; k < KT_MAX_OUT; k++) r->y[k] = NULL;
    r->n = fn(in, &a, r->y);
}

/* The least precise floating dtype among the inputs (float64 when none is floating): a result
 * computed in it is no more exact for being written into a wider out= (tanh.out of float32 into
 * float64: a GPU's tanhf and glibc's differ in float32's last place). */
static tg_dtype loosest_input(const instance *s, tg_tensor *const *in)
{
    static const tg_dtype by_precision[] = { TG_FLOAT64, TG_FLOAT32, TG_FLOAT16, TG_BFLOAT16 };
    int worst = 0;
    for (int k = 0; k < s->n_in; k++)
        for (int p = worst + 1; in[k] && p < 4; p++)
            if (tg_tensor_dtype(in[k]) == by_precision[p]) worst = p;
    return by_precision[worst];
}

/* got against want: as many results, each undefined on both sides or within tol (exact: bit
 * for bit), on device; the bound of a result's dtype, or of `inputs` (loosest_input) when that
 * is looser. */
static void compare(const result *got, const result *want, const kt_tol *tol, bool exact,
                    tg_dtype inputs, tg_device device, const char *what)
{
    cr_assert_geq(got->n, 0, "%s: %s", what, tg_last_error());
    cr_assert_eq(got->n, want->n, "%s: %d results, the reference has %d", what, got->n, want->n);
    for (int k = 0; k < want->n; k++) {
        cr_assert_eq(got->y[k] == NULL, want->y[k] == NULL,
                     "%s: result %d is defined on one side only", what, k);
        if (!want->y[k]) continue;
        char w[300];
        snprintf(w, sizeof w, "%s, result %d", what, k);
        cr_assert_eq(tg_tensor_device(got->y[k]).type, device.type, "%s: on the wrong device", w);
        double rtol, atol, in_rtol, in_atol;
        kt_tol_of(tol, tg_tensor_dtype(want->y[k]), &rtol, &atol);
        kt_tol_of(tol, inputs, &in_rtol, &in_atol);
        rtol = rtol > in_rtol ? rtol : in_rtol;
        atol = atol > in_atol ? atol : in_atol;
        if (exact) kt_assert_identical(got->y[k], want->y[k], w);
        else kt_assert_same_values(got->y[k], want->y[k], rtol, atol, w);
    }
}

/* Result 0 against the case's fixture values for its dtype. */
static void compare_ref(const instance *s, const result *got, const char *what)
{
    const tg_tensor *t = got->y[0];
    cr_assert(got->n > 0 && t, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_tensor_dtype(t), s->a.dtype, "%s: dtype %s", what,
                 tg_dtype_name(tg_tensor_dtype(t)));
    double rtol, atol;
    kt_tol_of(s->c->ref_tol, s->a.dtype, &rtol, &atol);
    kt_assert_close(t, s->c->ref[s->d], tg_tensor_numel(t), rtol, atol, what);
}

/* Fresh copies of the case's inputs for one call (an operator may write its inputs: running
 * statistics, optimizer state), on device (host inputs stay on the CPU), strided or not. */
static void inputs_on(instance *s, tg_device device, bool strided, tg_tensor **in)
{
    for (int k = 0; k < s->n_in; k++) {
        tg_tensor *t = s->cpu_in[k];
        t = s->c->in[k].host || device.type == TG_CPU ? tg_clone(t) : kt_copy_to(t, device);
        in[k] = strided && !s->c->in[k].host ? strided_copy(t) : t;
    }
}

static bool has_form(const kt_case *c, kt_form f, bool strided, bool cpu)
{
    if (strided && !(c->flags & KT_STRIDED)) return false;
    switch (f) {
    case KT_FUNCTIONAL: return !cpu || strided; /* on the CPU, contiguous: the reference */
    case KT_OUT_FORM: return c->out != NULL;
    case KT_INPLACE_FORM: return c->inplace != NULL;
    default: return cpu && (c->flags & KT_REF_LOOP);
    }
}

/* Form f of the case on device (strided: every input, and the out= tensors, non-contiguous)
 * into got; out= tensors take want's shapes and dtypes. */
static void run_form(instance *s, kt_form f, bool strided, tg_device device, const result *want,
                     result *got, char *what, size_t size)
{
    snprintf(what, size, "%s%s%s on %s", s->what, form_name[f], strided ? " strided" : "",
             device.type == TG_CPU ? "CPU" : "CUDA");
    tg_tensor *in[KT_MAX_IN], *out[KT_MAX_OUT] = { NULL };
    inputs_on(s, device, strided, in);
    kt_fn fn = f == KT_OUT_FORM ? s->c->out : f == KT_INPLACE_FORM ? s->c->inplace : s->c->fn;
    if (f == KT_OUT_FORM)
        for (int k = 0; k < want->n; k++) {
            if (!want->y[k]) continue;
            tg_int_list size = { .len = tg_tensor_dim(want->y[k]),
                                 .data = tg_tensor_sizes(want->y[k]) };
            out[k] = tg_empty(size, .dtype = tg_tensor_dtype(want->y[k]), .device = device);
            if (strided) out[k] = strided_copy(out[k]);
        }
    if (f == KT_INPLACE_FORM) in[0] = strided ? strided_copy(tg_clone(in[0])) : tg_clone(in[0]);
    tg__pw_force_reference = f == KT_REFERENCE_LOOP;
    call(s, fn, in, f, device, out, got);
    tg__pw_force_reference = 0;
    if (got->n == KT_NO_FORM) return;
    for (int k = 0; f == KT_OUT_FORM && k < got->n; k++)
        cr_assert(!out[k] || got->y[k] == out[k], "%s: result %d is not its out= tensor", what, k);
    if (f == KT_INPLACE_FORM && got->n > 0)
        cr_assert_eq(got->y[0], in[0], "%s: the result is not self", what);
}

/* e without its first quoted word (a kernel's name: "relu_cpu" and "relu_cuda"). */
static void without_kernel_name(const char *e, char *buf, size_t size)
{
    const char *q = strchr(e, '"'), *q2 = q ? strchr(q + 1, '"') : NULL;
    if (q2) snprintf(buf, size, "%.*s%s", (int)(q - e), e, q2 + 1);
    else snprintf(buf, size, "%s", e);
}

/* The CPU refused (a KT_MAY_REFUSE dtype): device refuses too, in the same words. */
static void same_refusal(instance *s, tg_device device)
{
    char cpu_err[512], dev_err[512], what[300];
    cr_assert(s->c->flags & KT_MAY_REFUSE, "%s on CPU: %s", s->what, tg_last_error());
    without_kernel_name(tg_last_error(), cpu_err, sizeof cpu_err);
    tg_clear_error();
    if (device.type == TG_CPU) return;
    result got, none = { .n = 0 };
    run_form(s, KT_FUNCTIONAL, false, device, &none, &got, what, sizeof what);
    cr_assert_lt(got.n, 0, "%s: accepted what the CPU refused (%s)", what, cpu_err);
    without_kernel_name(tg_last_error(), dev_err, sizeof dev_err);
    cr_assert_str_eq(dev_err, cpu_err, "%s: refused in other words", what);
    tg_clear_error();
}

/* A case that must fail: on the CPU and on device, with its error. */
static void refused(instance *s, tg_device device)
{
    char what[300];
    result got, none = { .n = 0 };
    tg_device where[2] = { TG_DEVICE_CPU, device };
    for (int i = 0; i < (device.type == TG_CPU ? 1 : 2); i++) {
        run_form(s, KT_FUNCTIONAL, false, where[i], &none, &got, what, sizeof what);
        cr_assert_lt(got.n, 0, "%s: accepted, expected the error \"%s\"", what, s->c->error);
        kt_expect_error(got.y[0], s->c->error);
    }
}

/* KT_HALF_IN_FLOAT at float16 or bfloat16: the function on the inputs converted to float32,
 * its results rounded once to the case's dtype, equals the CPU's results bit for bit. */
static void half_in_float(instance *s, const result *want)
{
    tg_dtype dt = s->a.dtype;
    tg_tensor *in[KT_MAX_IN];
    for (int k = 0; k < s->n_in; k++)
        in[k] = s->c->in[k].dtype == KT_DT ? tg_to(s->cpu_in[k], TG_FLOAT32) : s->cpu_in[k];
    instance f32 = *s;
    f32.a.dtype = TG_FLOAT32;
    result r;
    call(&f32, s->c->fn, in, KT_FUNCTIONAL, TG_DEVICE_CPU, NULL, &r);
    for (int k = 0; k < r.n; k++)
        if (r.y[k]) r.y[k] = tg_to(r.y[k], dt);
    char what[300];
    snprintf(what, sizeof what, "%s on CPU, against float32 rounded once", s->what);
    compare(want, &r, NULL, true, dt, TG_DEVICE_CPU, what);
}

/* One dtype and parameter of the case: the CPU's functional result, then every form on device
 * against it (on the CPU: against the fixture, when the case has one). */
static void run_instance(instance *s, tg_device device)
{
    const kt_case *c = s->c;
    if (c->error) {
        refused(s, device);
        return;
    }
    result want, got;
    char what[300];
    tg_tensor *in[KT_MAX_IN];
    snprintf(what, sizeof what, "%s on CPU", s->what);
    inputs_on(s, TG_DEVICE_CPU, false, in);
    call(s, c->fn, in, KT_FUNCTIONAL, TG_DEVICE_CPU, NULL, &want);
    const tg_dtype inputs = loosest_input(s, s->cpu_in);
    if (want.n == KT_NO_FORM) return; /* no such parameter at this dtype */
    if (want.n < 0) {
        same_refusal(s, device);
        return;
    }
    bool cpu = device.type == TG_CPU, half = s->a.dtype == TG_FLOAT16 || s->a.dtype == TG_BFLOAT16;
    if (cpu && c->ref && c->ref[s->d]) compare_ref(s, &want, what);
    if (cpu && half && (c->flags & KT_HALF_IN_FLOAT)) half_in_float(s, &want);
    for (int f = KT_FUNCTIONAL; f <= KT_REFERENCE_LOOP; f++)
        for (int strided = 0; strided < 2; strided++) {
            if (!has_form(c, (kt_form)f, strided, cpu)) continue;
            run_form(s, (kt_form)f, strided, device, &want, &got, what, sizeof what);
            if (got.n == KT_NO_FORM && f != KT_FUNCTIONAL) continue;
            if (cpu && (c->flags & KT_FORMS_EXACT))
                compare(&got, &want, NULL, true, inputs, device, what);
            else if (cpu && c->ref && c->ref[s->d]) compare_ref(s, &got, what);
            else compare(&got, &want, c->tol, false, inputs, device, what);
        }
}

static void run_case(int i, tg_device device)
{
    const kt_case *c = kt_case_at(i);
    cr_assert(c, "no case %d", i);
    kt_live base = kt_live_now();
    int ndt = c->npairs ? c->npairs : c->dtypes.n ? c->dtypes.n : 1;
    int np = c->count > 1 ? c->count : 1;
    for (int d = 0; d < ndt; d++)
        for (int p = 0; p < np; p++) {
            tg_scope_begin();
            instance s = { .c = c, .d = d };
            s.a = (kt_arg){ c->dtypes.n ? c->dtypes.v[d] : TG_DTYPE_NONE,
                            TG_DTYPE_NONE,
                            TG_DEVICE_CPU,
                            p,
                            KT_FUNCTIONAL,
                            NULL,
                            c->ops };
            if (c->npairs) {
                s.a.dtype = c->pairs[d].a;
                s.a.dtype2 = c->pairs[d].b;
            }
            int len = snprintf(s.what, sizeof s.what, "%s [%s]", c->op, c->label);
            if (c->dtypes.n || c->npairs)
                len += snprintf(s.what + len, sizeof s.what - (size_t)len, " %s",
                                tg_dtype_name(s.a.dtype));
            if (c->npairs)
                len += snprintf(s.what + len, sizeof s.what - (size_t)len, ", %s",
                                tg_dtype_name(s.a.dtype2));
            if (np > 1 && c->ops)
                snprintf(s.what + len, sizeof s.what - (size_t)len, " (%s)", c->ops[p].name);
            else if (np > 1 && c->param_name)
                snprintf(s.what + len, sizeof s.what - (size_t)len, " (%s)", c->param_name(p));
            else if (np > 1)
                snprintf(s.what + len, sizeof s.what - (size_t)len, " parameter %d", p);
            for (; s.n_in < KT_MAX_IN && c->in[s.n_in].used; s.n_in++)
                s.cpu_in[s.n_in] = make_input(&c->in[s.n_in], s.n_in, &s.a, d);
            run_instance(&s, device);
            tg_scope_end();
        }
    kt_assert_no_leak(base);
}

void kt_run_cpu(int i) { run_case(i, TG_DEVICE_CPU); }

void kt_run_on(int i, tg_device device) { run_case(i, device); }

/* The profiler: what a forward + backward records, the Chrome trace read back with cJSON
 * (names, nesting, order, forward -> backward flows, shapes), threads recording at once and
 * while the session stops, out-of-tree operators, the table, .max_events and misuse. */
#include <pthread.h>
#include <unistd.h>

#include "tensorgen.h"
#include "dispatch/dispatch.h"
#include "trace_json.h"

static void prof_fini(void)
{
    tg_profiler_reset();
    cr_expect_eq(tg_live_tensors(), 0, "leaked %lld tensors", (long long)tg_live_tensors());
    cr_expect_eq(tg_live_storages(), 0, "leaked %lld storages", (long long)tg_live_storages());
}
TestSuite(profiler, .fini = prof_fini);

/* A path in the test's own temporary file. */
static void tmp_path(char *buf, size_t cap, const char *tag)
{
    snprintf(buf, cap, "/tmp/tg_prof_%s_%d.json", tag, (int)getpid());
}

/* A two-layer MLP step: linear -> relu -> linear -> sum, backward. */
static void mlp_step(void)
{
    tg_scope_begin();
    tg_tensor *w1 = tg_tensor_set_requires_grad(tg_randn(TG_INTS(8, 4)), true);
    tg_tensor *b1 = tg_tensor_set_requires_grad(tg_zeros(TG_INTS(8)), true);
    tg_tensor *w2 = tg_tensor_set_requires_grad(tg_randn(TG_INTS(3, 8)), true);
    tg_tensor *x = tg_randn(TG_INTS(5, 4));
    tg_tensor *loss = NULL;
    TG_RECORD_FUNCTION("forward")
    {
        tg_tensor *h = tg_relu(tg_linear(x, w1, .bias = b1));
        loss = tg_sum(tg_mul(tg_linear(h, w2), tg_linear(h, w2)));
    }
    TG_RECORD_FUNCTION("backward") { cr_assert_eq(tg_backward(loss), 0, "%s", tg_last_error()); }
    tg_scope_end();
}

Test(profiler, mlp_forward_backward_trace)
{
    char path[128];
    tmp_path(path, sizeof path, "mlp");
    cr_assert_eq(tg_profiler_start(.record_shapes = true, .profile_memory = true), 0);
    cr_expect(tg_profiler_is_enabled());
    mlp_step();
    cr_assert_eq(tg_profiler_stop(), 0);
    cr_expect(!tg_profiler_is_enabled());
    cr_assert_eq(tg_profiler_export_chrome_trace(path), 0, "%s", tg_last_error());
    trace t = trace_load(path);
    unlink(path);
    trace_check_nesting(&t);

    const tev *fwd = NULL, *bwd = NULL;
    int nlinear = 0, nrelu_bwd = 0, nmem = 0;
    for (int i = 0; i < t.n; i++) {
        const tev *e = &t.ev[i];
        if (tev_is(e, "X", "forward")) fwd = e;
        if (tev_is(e, "X", "backward")) bwd = e;
        nlinear += tev_is(e, "X", "linear");
        nrelu_bwd += tev_is(e, "X", "ReluBackward0");
        nmem += tev_is(e, "i", "[memory]");
    }
    cr_assert(fwd && bwd, "the user ranges are missing");
    cr_expect_eq(nlinear, 3, "%d linear events", nlinear);
    cr_expect_eq(nrelu_bwd, 1);
    cr_expect_gt(nmem, 0, "no memory events with .profile_memory");
    cr_expect(fwd->ts + fwd->dur <= bwd->ts + 1e-3, "forward must end before backward starts");
    for (int i = 0; i < t.n; i++) {
        const tev *e = &t.ev[i];
        if (!tev_is(e, "X", NULL)) continue;
        /* every forward op inside "forward"; every backward node inside "backward" */
        if (strcmp(e->name, "linear") == 0 || strcmp(e->name, "relu") == 0)
            cr_expect(tev_inside(e, fwd), "%s outside the forward range", e->name);
        if (strstr(e->name, "Backward"))
            cr_expect(tev_inside(e, bwd), "%s outside the backward range", e->name);
    }
    /* the first linear has shapes [[5, 4], [8, 4], [8]] and dtypes float32 */
    const tev *lin = NULL;
    for (int i = 0; i < t.n && !lin; i++)
        if (tev_is(&t.ev[i], "X", "linear")) lin = &t.ev[i];
    char *dims = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(lin->args, "Input Dims"));
    cr_expect_str_eq(dims, "[[5,4],[8,4],[8]]");
    free(dims);
    char *types = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(lin->args, "Input type"));
    cr_expect_str_eq(types, "[\"float32\",\"float32\",\"float32\"]");
    free(types);
    /* an mm inside a linear (linear -> matmul/addmm -> ...): self < total for linear */
    const cJSON *self = cJSON_GetObjectItemCaseSensitive(lin->args, "Self CPU (us)");
    cr_expect(self && self->valuedouble < lin->dur, "linear's self time must exclude its children");

    /* flows: every "s" has an "f" with its id, later, from a forward op to a backward node */
    int nflows = 0;
    bool relu_linked = false;
    for (int i = 0; i < t.n; i++) {
        const tev *s = &t.ev[i];
        if (!tev_is(s, "s", NULL)) continue;
        const tev *f = NULL;
        for (int j = 0; j < t.n && !f; j++)
            if (tev_is(&t.ev[j], "f", NULL) && t.ev[j].id == s->id) f = &t.ev[j];
        cr_assert(f, "flow %lld has no end", s->id);
        cr_expect_lt(s->ts, f->ts);
        const tev *op = trace_at(&t, s->tid, s->ts), *node = trace_at(&t, f->tid, f->ts);
        cr_assert(op && node, "flow %lld is not bound to events", s->id);
        cr_expect_str_eq(op->cat, "cpu_op");
        cr_expect_str_eq(node->cat, "autograd");
        cr_expect(strstr(node->name, "Backward") != NULL, "flow to %s", node->name);
        relu_linked |= strcmp(op->name, "relu") == 0 && strcmp(node->name, "ReluBackward0") == 0;
        nflows++;
    }
    cr_expect_geq(nflows, 5);
    cr_expect(relu_linked, "no flow from relu to ReluBackward0");
    trace_free(&t);
}

/* ---- threads ---- */

typedef struct worker {
    int k, n;
    volatile bool *stop; /* loop until set (NULL: n iterations) */
} worker;

static void *work(void *p)
{
    worker *w = p;
    char name[32];
    snprintf(name, sizeof name, "worker %d", w->k);
    tg_tensor *a = tg_ones(TG_INTS(4));
    for (int i = 0; w->stop ? !*w->stop : i < w->n; i++) {
        TG_RECORD_FUNCTION(name)
        {
            tg_scope_begin();
            tg_mul(tg_add(a, a), a);
            tg_scope_end();
        }
    }
    tg_release(a);
    return NULL;
}

Test(profiler, threads_record_into_their_own_tracks)
{
    enum { NT = 3, N = 20 };
    char path[128];
    tmp_path(path, sizeof path, "threads");
    cr_assert_eq(tg_profiler_start(.record_shapes = true), 0);
    pthread_t th[NT];
    worker w[NT];
    for (int k = 0; k < NT; k++) {
        w[k] = (worker){ k, N, NULL };
        pthread_create(&th[k], NULL, work, &w[k]);
    }
    for (int k = 0; k < NT; k++) pthread_join(th[k], NULL);
    cr_assert_eq(tg_profiler_stop(), 0);
    cr_assert_eq(tg_profiler_export_chrome_trace(path), 0, "%s", tg_last_error());
    trace t = trace_load(path);
    unlink(path);
    trace_check_nesting(&t);
    for (int k = 0; k < NT; k++) {
        char name[32];
        snprintf(name, sizeof name, "worker %d", k);
        long long tid = -1;
        int ranges = 0, ops = 0;
        for (int i = 0; i < t.n; i++)
            if (tev_is(&t.ev[i], "X", name)) {
                cr_expect(tid < 0 || tid == t.ev[i].tid, "one worker on two tracks");
                tid = t.ev[i].tid;
                ranges++;
            }
        cr_expect_eq(ranges, N, "%s: %d ranges", name, ranges);
        /* each of this thread's adds and muls lies inside one of its ranges, in order */
        double last = -1;
        for (int i = 0; i < t.n; i++) {
            const tev *e = &t.ev[i];
            if (!tev_is(e, "X", "add.Tensor") && !tev_is(e, "X", "mul.Tensor")) continue;
            if (e->tid != tid) continue;
            bool inside = false;
            for (int j = 0; j < t.n && !inside; j++)
                inside = tev_is(&t.ev[j], "X", name) && tev_inside(e, &t.ev[j]);
            cr_expect(inside, "%s outside its worker range", e->name);
            cr_expect_geq(e->ts, last, "events of one thread out of order");
            last = e->ts;
            ops++;
        }
        cr_expect_eq(ops, 2 * N);
    }
    trace_free(&t);
}

Test(profiler, stop_while_threads_run)
{
    enum { NT = 3 };
    volatile bool stop = false;
    pthread_t th[NT];
    worker w[NT];
    cr_assert_eq(tg_profiler_start(.profile_memory = true), 0);
    for (int k = 0; k < NT; k++) {
        w[k] = (worker){ k, 0, &stop };
        pthread_create(&th[k], NULL, work, &w[k]);
    }
    while (tg_profiler_num_events() < 200) usleep(100);
    cr_assert_eq(tg_profiler_stop(), 0); /* the workers keep calling ops */
    int64_t n = tg_profiler_num_events();
    usleep(2000);
    cr_expect_eq(tg_profiler_num_events(), n, "events recorded after stop");
    char *s = tg_profiler_table(.sort_by = TG_PROF_SORT_CALLS, .row_limit = 4);
    cr_assert(s, "%s", tg_last_error());
    cr_expect(strstr(s, "add.Tensor") && strstr(s, "mul.Tensor"), "%s", s);
    free(s);
    cr_assert_eq(tg_profiler_start(), 0); /* a second session while they still run */
    usleep(2000);
    cr_assert_eq(tg_profiler_stop(), 0);
    stop = true;
    for (int k = 0; k < NT; k++) pthread_join(th[k], NULL);
}

/* ---- out-of-tree operators, called by name ---- */

static tg_tensor *twice_cpu(tg_tensor *self) { return tg_add(self, self); }
static int twice_boxed(tg_fnptr k, tg_boxed_stack *s)
{
    tg_tensor *self = s->v[0].v.t;
    tg_tensor *r = ((tg_tensor * (*)(tg_tensor *)) k)(self);
    tg_release(self);
    s->v[0].v.t = r;
    return r ? 0 : -1;
}
static tg_op_entry prof_ops[1] = {
    { .name = "proftest::twice", .call_boxed = twice_boxed, .ntensor_args = 1, .nargs = 1 }
};
static tg_op_entry *const prof_rows[] = { &prof_ops[0] };
static const tg_library prof_lib = { TG_LIBRARY_ABI, "proftest", prof_rows, 1, NULL, 0 };

Test(profiler, out_of_tree_ops_are_recorded)
{
    prof_ops[0].kernels[TG_KEY_CPU] = (tg_fnptr)twice_cpu;
    cr_assert_eq(tg_library_register(&prof_lib), 0);
    tg_tensor *a = tg_ones(TG_INTS(3));
    cr_assert_eq(tg_profiler_start(.record_shapes = true), 0);
    tg_boxed_stack s = { .n = 1 };
    s.v[0] = (tg_ivalue){ .tag = TG_IV_TENSOR, .v.t = tg_retain(a) };
    cr_assert_eq(tg_call_boxed("proftest::twice", &s), 0);
    tg_release(s.v[0].v.t);
    cr_assert_eq(tg_profiler_stop(), 0);
    tg_release(a);
    char *tab = tg_profiler_table(.group_by_input_shape = true, .sort_by = TG_PROF_SORT_NAME);
    cr_assert(tab, "%s", tg_last_error());
    /* "twice" with its input shape, and the add.Tensor it called, nested in it */
    cr_expect(strstr(tab, "twice") && strstr(tab, "[[3]]"), "%s", tab);
    cr_expect(strstr(tab, "add.Tensor") != NULL, "%s", tab);
    free(tab);
}

/* ---- the table ---- */

Test(profiler, table_sorts_and_limits)
{
    tg_tensor *a = tg_ones(TG_INTS(2, 2));
    cr_assert_eq(tg_profiler_start(), 0);
    for (int i = 0; i < 5; i++) tg_release(tg_neg(a));
    tg_release(tg_exp(a));
    cr_assert_eq(tg_profiler_stop(), 0);
    tg_release(a);
    char *s = tg_profiler_table(.sort_by = TG_PROF_SORT_CALLS, .row_limit = 1);
    cr_assert(s, "%s", tg_last_error());
    cr_expect(strstr(s, "neg") != NULL && strstr(s, "exp") == NULL, "%s", s);
    cr_expect(strstr(s, "# of Calls") && strstr(s, "Self CPU time total:"), "%s", s);
    free(s);
    s = tg_profiler_table(.sort_by = TG_PROF_SORT_NAME);
    cr_assert(s);
    cr_expect_lt(strstr(s, "exp") - s, strstr(s, "neg") - s, "sorted by name: %s", s);
    free(s);
    cr_expect_eq(tg_profiler_print_table(.row_limit = 2), 0);
    cr_expect_null(tg_profiler_table(.row_limit = -1));
    cr_expect(strstr(tg_last_error(), "row_limit"), "%s", tg_last_error());
    tg_clear_error();
}

/* ---- bounds and misuse ---- */

Test(profiler, max_events_drops_and_counts)
{
    tg_tensor *a = tg_ones(TG_INTS(2));
    cr_assert_eq(tg_profiler_start(.max_events = 10), 0);
    for (int i = 0; i < 50; i++) tg_release(tg_neg(a));
    cr_assert_eq(tg_profiler_stop(), 0);
    tg_release(a);
    cr_expect_eq(tg_profiler_num_events(), 10);
    cr_expect_eq(tg_profiler_dropped_events(), 40);
    char *s = tg_profiler_table();
    cr_assert(s);
    cr_expect(strstr(s, "40 events were dropped"), "%s", s);
    free(s);
    cr_expect_eq(tg_profiler_start(.max_events = 0), -1);
    cr_expect(strstr(tg_last_error(), "max_events"), "%s", tg_last_error());
    tg_clear_error();
}

Test(profiler, misuse_gives_clear_errors)
{
    cr_expect_eq(tg_profiler_stop(), -1);
    cr_expect_str_eq(tg_last_error(),
                     "profiler_stop: the profiler is not running (call tg_profiler_start first)");
    tg_clear_error();
    cr_expect_eq(tg_profiler_export_chrome_trace("/tmp/never.json"), -1);
    cr_expect(strstr(tg_last_error(), "nothing was recorded"), "%s", tg_last_error());
    tg_clear_error();
    cr_expect_null(tg_profiler_table());
    tg_clear_error();

    cr_assert_eq(tg_profiler_start(), 0);
    cr_expect_eq(tg_profiler_start(), -1);
    cr_expect(strstr(tg_last_error(), "already running"), "%s", tg_last_error());
    tg_clear_error();
    cr_expect_eq(tg_profiler_export_chrome_trace("/tmp/never.json"), -1);
    cr_expect(strstr(tg_last_error(), "still running"), "%s", tg_last_error());
    tg_clear_error();
    tg_record_function_end(); /* no open range: nothing happens */
    cr_assert_eq(tg_profiler_stop(), 0);
    /* nothing ran while it was on */
    cr_expect_eq(tg_profiler_export_chrome_trace("/tmp/never.json"), -1);
    cr_expect(strstr(tg_last_error(), "nothing was recorded"), "%s", tg_last_error());
    tg_clear_error();

    tg_tensor *a = tg_ones(TG_INTS(2));
    cr_assert_eq(tg_profiler_start(), 0);
    tg_release(tg_neg(a));
    cr_assert_eq(tg_profiler_stop(), 0);
    tg_release(a);
    cr_expect_eq(tg_profiler_export_chrome_trace("/nonexistent-dir/trace.json"), -1);
    cr_expect(strstr(tg_last_error(), "cannot open '/nonexistent-dir/trace.json' for writing"),
              "%s", tg_last_error());
    tg_clear_error();
    cr_expect_eq(tg_profiler_export_chrome_trace(NULL), -1);
    tg_clear_error();
}

Test(profiler, off_records_nothing)
{
    tg_tensor *a = tg_ones(TG_INTS(2));
    cr_assert_eq(tg_profiler_start(), 0);
    tg_release(tg_neg(a));
    cr_assert_eq(tg_profiler_stop(), 0);
    int64_t n = tg_profiler_num_events();
    tg_release(tg_neg(a));
    TG_RECORD_FUNCTION("after") { tg_release(tg_exp(a)); }
    cr_expect_eq(tg_profiler_num_events(), n);
    tg_release(a);
}

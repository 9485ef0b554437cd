/* The summary table: events averaged by name (and input shapes when asked), PyTorch's
 * key_averages().table(). Self time is an event's duration minus that of the events directly
 * inside it, so the self times of all rows add up to the recorded time. */
#include "profiler/profiler_private.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct row {
    const char *name;
    char *shapes; /* owned; "" unless grouped by input shape */
    int64_t calls, self_ns, total_ns, self_mem, mem;
    double cuda_us;
    bool has_cuda;
} row;

typedef struct item {
    const char *name;
    char *shapes;
    const prof_event *e;
} item;

static int item_cmp(const void *a, const void *b)
{
    const item *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->shapes, y->shapes);
}

static int64_t row_value(const row *r, tg_profiler_sort key)
{
    switch (key) {
    case TG_PROF_SORT_TOTAL_CPU: return r->total_ns;
    case TG_PROF_SORT_AVG_CPU: return r->total_ns / r->calls;
    case TG_PROF_SORT_CUDA_TOTAL: return (int64_t)(r->cuda_us * 1000);
    case TG_PROF_SORT_CALLS: return r->calls;
    case TG_PROF_SORT_SELF_MEMORY: return r->self_mem;
    case TG_PROF_SORT_MEMORY: return r->mem;
    default: return r->self_ns;
    }
}

/* Descending by the chosen column (ascending by name for NAME), ties by name. */
static int row_cmp(const void *a, const void *b, void *ctx)
{
    const row *x = a, *y = b;
    tg_profiler_sort key = *(const tg_profiler_sort *)ctx;
    if (key != TG_PROF_SORT_NAME) {
        int64_t vx = row_value(x, key), vy = row_value(y, key);
        if (vx != vy) return vx > vy ? -1 : 1;
    }
    int c = strcmp(x->name, y->name);
    return c ? c : strcmp(x->shapes, y->shapes);
}

/* ---- text ---- */

/* PyTorch's time format: 12.345us, 1.234ms, 2.345s. */
static const char *fmt_time(char *buf, size_t cap, double us)
{
    if (us >= 1e6) snprintf(buf, cap, "%.3fs", us / 1e6);
    else if (us >= 1e3) snprintf(buf, cap, "%.3fms", us / 1e3);
    else snprintf(buf, cap, "%.3fus", us);
    return buf;
}

/* PyTorch's memory format: 1.50 Kb, -2.00 Mb, 0 b. */
static const char *fmt_mem(char *buf, size_t cap, int64_t bytes)
{
    double a = (double)(bytes < 0 ? -bytes : bytes);
    if (a >= 1024.0 * 1024 * 1024)
        snprintf(buf, cap, "%.2f Gb", (double)bytes / (1024.0 * 1024 * 1024));
    else if (a >= 1024.0 * 1024) snprintf(buf, cap, "%.2f Mb", (double)bytes / (1024.0 * 1024));
    else if (a >= 1024.0) snprintf(buf, cap, "%.2f Kb", (double)bytes / 1024.0);
    else snprintf(buf, cap, "%lld b", (long long)bytes);
    return buf;
}

static void rule(tg__text_buf *b, int namew, int ncols, int shapew)
{
    for (int i = 0; i < namew; i++) tg__text_printf(b, "-");
    for (int c = 0; c < ncols; c++) tg__text_printf(b, "  ------------");
    if (shapew) {
        tg__text_printf(b, "  ");
        for (int i = 0; i < shapew; i++) tg__text_printf(b, "-");
    }
    tg__text_printf(b, "\n");
}

/* ---- rows ---- */

/* The rows of the session (grouped, not sorted); *nrows set. NULL + error when out of memory
 * (an empty session gives an error before this). */
static row *make_rows(bool by_shape, int *nrows, int64_t *self_sum)
{
    int64_t n = 0;
    for (const prof_thread *t = tg__prof_session.threads; t; t = t->next)
        for (int32_t i = 0; i < t->nev; i++) n += t->ev[i].kind != PROF_MEMORY;
    item *items = calloc((size_t)(n ? n : 1), sizeof *items);
    row *rows = calloc((size_t)(n ? n : 1), sizeof *rows);
    if (!items || !rows) goto oom;
    int64_t k = 0;
    for (const prof_thread *t = tg__prof_session.threads; t; t = t->next)
        for (int32_t i = 0; i < t->nev; i++) {
            const prof_event *e = &t->ev[i];
            if (e->kind == PROF_MEMORY) continue;
            char buf[512] = "";
            if (by_shape) tg__prof_shapes_str(t, e, buf, sizeof buf);
            items[k].name = e->name;
            items[k].e = e;
            if (!(items[k++].shapes = strdup(buf))) goto oom;
        }
    qsort(items, (size_t)n, sizeof *items, item_cmp);
    int nr = 0;
    *self_sum = 0;
    for (int64_t i = 0; i < n; i++) {
        if (i == 0 || item_cmp(&items[i - 1], &items[i]) != 0) {
            rows[nr].name = items[i].name;
            rows[nr].shapes = items[i].shapes; /* moved below, once the group is done */
            nr++;
        }
        row *r = &rows[nr - 1];
        const prof_event *e = items[i].e;
        r->calls++;
        r->total_ns += e->dur_ns;
        r->self_ns += e->dur_ns - e->child_ns;
        r->self_mem += e->mem_self;
        r->mem += e->mem_total;
        if (e->gpu_dur_us >= 0) {
            r->cuda_us += e->gpu_dur_us;
            r->has_cuda = true;
        }
        *self_sum += e->dur_ns - e->child_ns;
    }
    for (int64_t i = 0, r = 0; i < n; i++) /* the first item of each group gave its row's */
        if (r < nr && items[i].shapes == rows[r].shapes) r++;
        else free(items[i].shapes);
    free(items);
    *nrows = nr;
    return rows;
oom:
    for (int64_t i = 0; items && i < n; i++) free(items[i].shapes);
    free(items);
    free(rows);
    return tg__error("profiler_table", "out of memory");
}

char *tg_profiler_table_fn(tg_profiler_table_opts opts)
{
    const char *op = "profiler_table";
    if (tg__prof_check_results(op)) return NULL;
    if (opts.row_limit < 0) return tg__error(op, "row_limit must be >= 0, got %d", opts.row_limit);
    if (opts.sort_by < TG_PROF_SORT_SELF_CPU || opts.sort_by > TG_PROF_SORT_NAME)
        return tg__error(op, "unknown sort column %d", (int)opts.sort_by);
    int nrows = 0;
    int64_t self_sum = 0;
    row *rows = make_rows(opts.group_by_input_shape, &nrows, &self_sum);
    if (!rows) return NULL;
    if (nrows == 0) {
        free(rows);
        return tg__error(op, "nothing was recorded (no operator ran while the profiler was on)");
    }
    qsort_r(rows, (size_t)nrows, sizeof *rows, row_cmp, &opts.sort_by);
    int shown = opts.row_limit && opts.row_limit < nrows ? opts.row_limit : nrows;

    bool any_cuda = false, mem = tg__prof_session.opts.profile_memory;
    int namew = 4, shapew = 0;
    double cuda_sum = 0;
    for (int i = 0; i < nrows; i++) {
        any_cuda |= rows[i].has_cuda;
        cuda_sum += rows[i].cuda_us;
    }
    for (int i = 0; i < shown; i++) {
        int l = (int)strlen(rows[i].name), s = (int)strlen(rows[i].shapes);
        namew = l > namew ? l : namew;
        shapew = s > shapew ? s : shapew;
    }
    if (namew > 55) namew = 55;
    if (opts.group_by_input_shape && shapew < 12) shapew = 12;
    int ncols = 6 + (any_cuda ? 2 : 0) + (mem ? 2 : 0);

    tg__text_buf b = { 0 };
    rule(&b, namew, ncols, shapew);
    tg__text_printf(&b, "%*s  %12s  %12s  %12s  %12s  %12s", namew, "Name", "Self CPU %",
                    "Self CPU", "CPU total %", "CPU total", "CPU time avg");
    if (any_cuda) tg__text_printf(&b, "  %12s  %12s", "CUDA total", "CUDA time avg");
    if (mem) tg__text_printf(&b, "  %12s  %12s", "Self Mem", "Mem");
    tg__text_printf(&b, "  %12s", "# of Calls");
    if (shapew) tg__text_printf(&b, "  %-*s", shapew, "Input Shapes");
    tg__text_printf(&b, "\n");
    rule(&b, namew, ncols, shapew);
    double all = self_sum > 0 ? (double)self_sum : 1;
    for (int i = 0; i < shown; i++) {
        const row *r = &rows[i];
        char name[64], t1[32], t2[32], t3[32], t4[32], t5[32];
        int l = (int)strlen(r->name);
        if (l > namew) snprintf(name, sizeof name, "%.*s...", namew - 3, r->name);
        else snprintf(name, sizeof name, "%s", r->name);
        tg__text_printf(
            &b, "%*s  %11.2f%%  %12s  %11.2f%%  %12s  %12s", namew, name,
            100.0 * (double)r->self_ns / all, fmt_time(t1, sizeof t1, (double)r->self_ns / 1e3),
            100.0 * (double)r->total_ns / all, fmt_time(t2, sizeof t2, (double)r->total_ns / 1e3),
            fmt_time(t3, sizeof t3, (double)r->total_ns / 1e3 / (double)r->calls));
        if (any_cuda)
            tg__text_printf(&b, "  %12s  %12s", fmt_time(t4, sizeof t4, r->cuda_us),
                            fmt_time(t5, sizeof t5, r->cuda_us / (double)r->calls));
        if (mem)
            tg__text_printf(&b, "  %12s  %12s", fmt_mem(t4, sizeof t4, r->self_mem),
                            fmt_mem(t5, sizeof t5, r->mem));
        tg__text_printf(&b, "  %12lld", (long long)r->calls);
        if (shapew) tg__text_printf(&b, "  %-*s", shapew, r->shapes);
        tg__text_printf(&b, "\n");
    }
    rule(&b, namew, ncols, shapew);
    char t[32];
    tg__text_printf(&b, "Self CPU time total: %s\n", fmt_time(t, sizeof t, (double)self_sum / 1e3));
    if (any_cuda)
        tg__text_printf(&b, "Self CUDA time total: %s\n", fmt_time(t, sizeof t, cuda_sum));
    int64_t dropped = tg_profiler_dropped_events();
    if (dropped)
        tg__text_printf(&b, "(%lld events were dropped: max_events = %lld)\n", (long long)dropped,
                        (long long)tg__prof_session.opts.max_events);
    for (int i = 0; i < nrows; i++) free(rows[i].shapes);
    free(rows);
    if (b.oom) {
        free(b.p);
        return tg__error(op, "out of memory");
    }
    return b.p;
}

int tg_profiler_print_table_fn(tg_profiler_table_opts opts)
{
    char *s = tg_profiler_table_fn(opts);
    if (!s) return -1;
    fputs(s, stdout);
    free(s);
    return 0;
}

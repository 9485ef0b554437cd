/* tg_print: PyTorch's repr of a tensor.
 *
 *   tensor([[1., 2.],
 *           [3., 4.]], dtype=torch.float64)
 *
 * The rules followed (torch/_tensor_str.py, default print options): precision 4; floats whose
 * finite values are all integral print as "1." ; scientific notation when the largest and
 * smallest nonzero magnitudes differ by more than 1000x or leave [1e-4, 1e8]; every element is
 * right-aligned to the widest; rows wrap at 80 columns; tensors of more than 1000 elements are
 * summarised with the first and last 3 entries of each long dim around "..."; dtype is shown
 * unless it is the default float, int64 or bool (and always for empty tensors of a non-default
 * dtype). */
#include "core/rt_private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINEWIDTH 80
#define EDGE 3
#define THRESHOLD 1000

static void puts_(tg__text_buf *b, const char *s) { tg__text_put(b, s, strlen(s)); }
static void spaces(tg__text_buf *b, int n)
{
    for (int i = 0; i < n; i++) tg__text_put(b, " ", 1);
}

typedef struct fmt {
    tg_dtype dtype;
    bool int_mode, sci;
    int width;
} fmt;

typedef struct view {
    const char *base; /* element 0 (host memory) */
    const int64_t *sizes, *strides;
    int64_t ndim;
    size_t es;
    tg_dtype dtype;
    bool summarize;
} view;

static int format_value(const fmt *f, double v, char *out, size_t cap)
{
    if (f->dtype == TG_BOOL) return snprintf(out, cap, "%s", v != 0 ? "True" : "False");
    if (!tg__is_float(f->dtype)) return snprintf(out, cap, "%lld", (long long)v);
    if (isnan(v)) return snprintf(out, cap, "nan");
    if (isinf(v)) return snprintf(out, cap, v > 0 ? "inf" : "-inf");
    if (f->sci) return snprintf(out, cap, "%.4e", v);
    if (f->int_mode) return snprintf(out, cap, "%.0f.", v);
    return snprintf(out, cap, "%.4f", v);
}

static double load(const view *v, int64_t off)
{
    return tg__load_double(v->base + off * (int64_t)v->es, v->dtype);
}

/* Visits the elements that will be printed (all of them, or the summarised ones). */
static void visit(const view *v, int64_t d, int64_t off, void (*fn)(double, void *), void *ctx)
{
    if (d == v->ndim) {
        fn(load(v, off), ctx);
        return;
    }
    int64_t n = v->sizes[d];
    for (int64_t i = 0; i < n; i++) {
        if (v->summarize && n > 2 * EDGE && i == EDGE) i = n - EDGE;
        visit(v, d + 1, off + i * v->strides[d], fn, ctx);
    }
}

typedef struct stats {
    bool all_int;
    double nz_max, nz_min;
    bool any_nz;
    fmt *f;
} stats;

static void gather(double x, void *ctx)
{
    stats *s = ctx;
    if (!isfinite(x) || x == 0) return;
    double a = fabs(x);
    if (x != ceil(x)) s->all_int = false;
    if (!s->any_nz || a > s->nz_max) s->nz_max = a;
    if (!s->any_nz || a < s->nz_min) s->nz_min = a;
    s->any_nz = true;
}

static void measure(double x, void *ctx)
{
    fmt *f = ctx;
    char buf[64];
    int n = format_value(f, x, buf, sizeof buf);
    if (n > f->width) f->width = n;
}

static void make_fmt(const view *v, fmt *f)
{
    f->dtype = v->dtype;
    f->int_mode = f->sci = false;
    f->width = 1;
    if (tg__is_float(v->dtype)) {
        stats s = { true, 0, 0, false, f };
        visit(v, 0, 0, gather, &s);
        f->int_mode = s.all_int;
        if (s.any_nz) {
            if (s.all_int) f->sci = s.nz_max > 1e8;
            else f->sci = s.nz_max / s.nz_min > 1000.0 || s.nz_max > 1e8 || s.nz_min < 1e-4;
        }
    }
    visit(v, 0, 0, measure, f);
}

static void element(tg__text_buf *b, const fmt *f, double x)
{
    char buf[64];
    int n = format_value(f, x, buf, sizeof buf);
    spaces(b, f->width - n);
    tg__text_put(b, buf, (size_t)n);
}

/* One dim of the nested list; `indent` is the column of this dim's '['. Items are the
 * printed entries of this dim: all of them, or the first and last EDGE around a "...". */
static void print_dim(tg__text_buf *b, const view *v, const fmt *f, int64_t d, int64_t off,
                      int indent)
{
    int64_t n = v->sizes[d];
    bool cut = v->summarize && n > 2 * EDGE;
    int64_t count = cut ? 2 * EDGE + 1 : n;
    bool last = d == v->ndim - 1;
    int per_line = (LINEWIDTH - indent) / (f->width + 2);
    if (per_line < 1) per_line = 1;
    int64_t nl = v->ndim - d - 1; /* blank lines between blocks grow with depth */
    tg__text_put(b, "[", 1);
    for (int64_t k = 0; k < count; k++) {
        if (k > 0) {
            tg__text_put(b, ",", 1);
            if (last && k % per_line != 0) {
                tg__text_put(b, " ", 1);
            } else {
                for (int64_t j = 0; j < (last ? 1 : nl); j++) tg__text_put(b, "\n", 1);
                spaces(b, indent + 1);
            }
        }
        int64_t i = !cut || k < EDGE ? k : n - EDGE + (k - EDGE - 1);
        if (cut && k == EDGE) puts_(b, last ? " ..." : "...");
        else if (last) element(b, f, load(v, off + i * v->strides[d]));
        else print_dim(b, v, f, d + 1, off + i * v->strides[d], indent + 1);
    }
    tg__text_put(b, "]", 1);
}

static void add_suffix(tg__text_buf *b, const char *suffix, int indent, size_t *line_len)
{
    size_t len = strlen(suffix);
    if (*line_len + len + 2 > LINEWIDTH) {
        tg__text_put(b, ",\n", 2);
        spaces(b, indent);
        *line_len = (size_t)indent + len;
    } else {
        tg__text_put(b, ", ", 2);
        *line_len += len + 2;
    }
    puts_(b, suffix);
}

char *tg_tensor_to_string(const tg_tensor *t)
{
    if (!t) return NULL;
    tg__text_buf b = { 0 };
    const int indent = 7; /* strlen("tensor(") */
    int64_t numel = tg__numel(t);
    void *host = NULL;
    const char *base = tg_tensor_data(t);
    if (t->device.type != TG_CPU && numel > 0) {
        /* Copy the reachable bytes of a device tensor: via a contiguous host tensor. */
        tg_tensor *h = tg__empty("print", t->sizes, t->ndim, t->dtype, TG_DEVICE_CPU);
        double *vals = malloc((size_t)numel * sizeof *vals);
        if (!h || !vals || tg_tensor_to_doubles(t, vals, numel)) {
            tg_release(h);
            free(vals);
            return NULL;
        }
        for (int64_t i = 0; i < numel; i++)
            tg__store_double((char *)tg_tensor_data(h) + i * (int64_t)tg__dtype_sizes[t->dtype],
                             t->dtype, vals[i]);
        free(vals);
        host = h;
        base = tg_tensor_data(h);
    }
    view v = { base,     t->sizes,         t->strides, t->ndim, tg__dtype_sizes[t->dtype],
               t->dtype, numel > THRESHOLD };
    if (host) v.strides = ((tg_tensor *)host)->strides;
    puts_(&b, "tensor(");
    tg_dtype def = tg_get_default_dtype();
    char suffixes[4][128];
    int ns = 0;
    if (t->device.type != TG_CPU)
        snprintf(suffixes[ns++], sizeof suffixes[0], "device='%s:%d'",
                 tg__device_type_name((tg_device_type)t->device.type), t->device.index);
    if (numel == 0) {
        puts_(&b, "[]");
        if (t->ndim != 1) {
            char *s = suffixes[ns++];
            size_t n = (size_t)snprintf(s, 128, "size=(");
            for (int64_t i = 0; i < t->ndim && n < 100; i++)
                n +=
                    (size_t)snprintf(s + n, 128 - n, i ? ", %lld" : "%lld", (long long)t->sizes[i]);
            snprintf(s + n, 128 - n, t->ndim == 1 ? ",)" : ")");
        }
        if (t->dtype != def)
            snprintf(suffixes[ns++], sizeof suffixes[0], "dtype=torch.%s", tg_dtype_name(t->dtype));
    } else {
        fmt f;
        make_fmt(&v, &f);
        if (t->ndim == 0) {
            char buf[64];
            format_value(&f, load(&v, 0), buf, sizeof buf);
            puts_(&b, buf);
        } else {
            print_dim(&b, &v, &f, 0, 0, indent);
        }
        if (t->dtype != def && t->dtype != TG_INT64 && t->dtype != TG_BOOL)
            snprintf(suffixes[ns++], sizeof suffixes[0], "dtype=torch.%s", tg_dtype_name(t->dtype));
    }
    /* Like PyTorch: a result of recorded operations names its node, a leaf says it requires grad. */
    const tg_node *grad_fn = tg_tensor_grad_fn(t);
    if (grad_fn)
        snprintf(suffixes[ns++], sizeof suffixes[0], "grad_fn=<%s>", tg_node_name(grad_fn));
    else if (t->requires_grad) snprintf(suffixes[ns++], sizeof suffixes[0], "requires_grad=True");
    tg_release(host);
    size_t line_len = 0;
    if (b.p) {
        char *nl = strrchr(b.p, '\n');
        line_len = nl ? strlen(nl + 1) : b.n;
    }
    for (int i = 0; i < ns; i++) add_suffix(&b, suffixes[i], indent, &line_len);
    puts_(&b, ")");
    if (b.oom) {
        free(b.p);
        return tg__error("print", "out of memory");
    }
    return b.p;
}

void tg_print(const tg_tensor *t)
{
    char *s = tg_tensor_to_string(t);
    if (!s) return;
    puts(s);
    free(s);
}

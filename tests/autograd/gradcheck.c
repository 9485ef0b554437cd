/* gradcheck: see gradcheck.h. Jacobians are stored row-major as [output element][input
 * element], one matrix per (floating output, differentiated input) pair. */
#include "gradcheck.h"
#include "gc_internal.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ small helpers */

bool gc__fail(char *msg, size_t size, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, size, fmt, ap);
    va_end(ap);
    return false;
}

static uint64_t lcg_next(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 11;
}

/* Uniform in [0, 1). */
double gc__uniform(uint64_t *s) { return (double)lcg_next(s) * (1.0 / 9007199254740992.0); }

/* Pointer to the element with row-major logical index j of a float64 tensor of any strides. */
double *gc__elem_ptr(const tg_tensor *t, int64_t j)
{
    int64_t nd = tg_tensor_dim(t), off = 0;
    const int64_t *sz = tg_tensor_sizes(t), *st = tg_tensor_strides(t);
    for (int64_t d = nd - 1; d >= 0; d--) {
        off += (j % sz[d]) * st[d];
        j /= sz[d];
    }
    return (double *)tg_tensor_data(t) + off;
}

bool gc__same_shape(const tg_tensor *a, const tg_tensor *b)
{
    if (tg_tensor_dim(a) != tg_tensor_dim(b)) return false;
    for (int64_t d = 0; d < tg_tensor_dim(a); d++)
        if (tg_tensor_size(a, d) != tg_tensor_size(b, d)) return false;
    return true;
}

void gc__shape_str(const tg_tensor *t, char *buf, size_t size)
{
    size_t n = (size_t)snprintf(buf, size, "[");
    for (int64_t d = 0; d < tg_tensor_dim(t) && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, "%s%lld", d ? ", " : "",
                              (long long)tg_tensor_size(t, d));
    if (n < size) snprintf(buf + n, size - n, "]");
}

bool gc__close_enough(double a, double n, const gc_opts *o)
{
    if (isnan(a) || isnan(n)) return false;
    return fabs(a - n) <= o->atol + o->rtol * fabs(n);
}

/* A tensor of t's shape and dtype holding vals (float64 values, converted). */
tg_tensor *gc__tensor_like(const tg_tensor *t, const double *vals)
{
    tg_tensor *v = tg_tensor_from_data(vals, tg_tensor_sizes(t), tg_tensor_dim(t), TG_FLOAT64);
    if (!v || tg_tensor_dtype(t) == TG_FLOAT64) return v;
    tg_tensor *c = tg__to_copy(v, .dtype = tg_tensor_dtype(t));
    tg_release(v);
    return c;
}

/* ------------------------------------------------------------------ inputs */

/* An uninitialised float64 tensor of spec's shape on `device`, laid out as spec->layout says
 * (a view of a larger or transposed base). */
static tg_tensor *layout_view(const gc_input *spec, tg_device device)
{
    int64_t nd = spec->ndim;
    int64_t base_shape[GC_MAX_DIMS];
    for (int64_t d = 0; d < nd; d++) base_shape[d] = spec->shape[d];
    gc_layout layout = spec->layout;
    if (layout == GC_TRANSPOSED && nd < 2) layout = GC_STRIDED;
    if (layout == GC_STRIDED && nd < 1) layout = GC_CONTIG;
    if (layout == GC_TRANSPOSED) {
        base_shape[nd - 1] = spec->shape[nd - 2];
        base_shape[nd - 2] = spec->shape[nd - 1];
    } else if (layout == GC_STRIDED) {
        base_shape[nd - 1] = 2 * spec->shape[nd - 1];
    }
    tg_tensor *base = tg_zeros(((tg_int_list){ .len = nd, .data = base_shape }),
                               .dtype = TG_FLOAT64, .device = device);
    if (!base) return NULL;
    tg_tensor *view = layout == GC_TRANSPOSED ? tg_transpose(base, -1, -2)
                      : layout == GC_STRIDED  ? tg_slice(base, .dim = nd - 1, .step = 2)
                                              : tg_retain(base);
    tg_release(base);
    return view;
}

tg_tensor *gc_make_input(const gc_input *spec, uint64_t *seed)
{
    int64_t nd = spec->ndim, numel = 1;
    for (int64_t d = 0; d < nd; d++) numel *= spec->shape[d];
    if (spec->domain == GC_INDEX || spec->domain == GC_MASK) {
        bool is_index = spec->domain == GC_INDEX;
        void *buf = malloc((size_t)(numel ? numel : 1) * 8);
        for (int64_t i = 0; i < numel; i++) {
            uint64_t r = lcg_next(seed);
            if (is_index) ((int64_t *)buf)[i] = (int64_t)(r % (uint64_t)spec->hi);
            else ((bool *)buf)[i] = (r >> 7) & 1;
        }
        tg_tensor *t = tg_tensor_from_data(buf, spec->shape, nd, is_index ? TG_INT64 : TG_BOOL);
        free(buf);
        return t;
    }

    /* The memory the input lives in, then the (possibly non-contiguous) view of it. */
    tg_tensor *view = layout_view(spec, TG_DEVICE_CPU);
    if (!view) return NULL;
    /* GC_DISTINCT: a shuffled sequence (k - numel/2) / 10, so no two values tie. */
    int64_t *perm = NULL;
    if (spec->domain == GC_DISTINCT) {
        perm = malloc(sizeof *perm * (size_t)(numel ? numel : 1));
        for (int64_t i = 0; i < numel; i++) perm[i] = i;
        for (int64_t i = numel - 1; i > 0; i--) {
            int64_t k = (int64_t)(lcg_next(seed) % (uint64_t)(i + 1)), tmp = perm[i];
            perm[i] = perm[k];
            perm[k] = tmp;
        }
    }
    for (int64_t i = 0; i < numel; i++) {
        double u = gc__uniform(seed), v;
        switch (spec->domain) {
        case GC_POS: v = 0.5 + 1.5 * u; break;
        case GC_AWAY0: v = (lcg_next(seed) & 1 ? 1 : -1) * (0.5 + u); break;
        case GC_UNIT: v = -0.9 + 1.8 * u; break;
        case GC_DISTINCT: v = (double)(perm[i] - numel / 2) / 10.0; break;
        default: v = -1 + 2 * u; break;
        }
        *gc__elem_ptr(view, i) = v;
    }
    free(perm);

    /* A leaf with the view's geometry: same memory, no history. */
    tg_tensor *leaf = tg_tensor_detach(view);
    tg_release(view);
    if (leaf && !spec->constant) tg_tensor_set_requires_grad(leaf, true);
    return leaf;
}

tg_tensor *gc_make_input_on(const gc_input *spec, uint64_t *seed, tg_device device)
{
    tg_tensor *cpu = gc_make_input(spec, seed);
    if (!cpu || device.type == TG_CPU) return cpu;
    bool floating = tg_dtype_is_floating(tg_tensor_dtype(cpu));
    tg_tensor *view = floating ? layout_view(spec, device)
                               : tg_empty(((tg_int_list){ .len = spec->ndim, .data = spec->shape }),
                                          .dtype = tg_tensor_dtype(cpu), .device = device);
    tg_tensor *done = view ? tg_copy_(view, cpu) : NULL;
    tg_release(done);
    tg_tensor *leaf = done ? tg_tensor_detach(view) : NULL;
    tg_release(view);
    if (leaf && tg_tensor_requires_grad(cpu)) tg_tensor_set_requires_grad(leaf, true);
    tg_release(cpu);
    return leaf;
}

/* ------------------------------------------------------------------ the check */

typedef struct gc_state {
    gc_func f;
    tg_tensor *const *in;
    int n_in;
    gc_opts o;
    int n_diff;                                /* differentiated inputs */
    int diff[GC_MAX_INPUTS];                   /* their positions in in[] */
    int64_t m[GC_MAX_INPUTS];                  /* their numels */
    int n_out;                                 /* outputs of f */
    int n_f;                                   /* floating outputs */
    int fout[GC_MAX_OUTPUTS];                  /* their positions among f's outputs */
    int64_t n[GC_MAX_OUTPUTS];                 /* their numels */
    double *jn[GC_MAX_OUTPUTS][GC_MAX_INPUTS]; /* numerical Jacobians, n[o] x m[i] */
    double *vals[GC_MAX_OUTPUTS];              /* scratch: one evaluation's output values */
    char *msg;
    size_t msg_size;
} gc_state;

bool gc__read_like(const tg_tensor *t, const tg_tensor *like, double *got, int64_t n,
                   const char *what, const char *kind, int which, char *msg, size_t msg_size)
{
    if (!t) {
        for (int64_t k = 0; k < n; k++) got[k] = 0;
        return true;
    }
    char ts[64], ls[64];
    gc__shape_str(t, ts, sizeof ts);
    gc__shape_str(like, ls, sizeof ls);
    if (!gc__same_shape(t, like))
        return gc__fail(msg, msg_size, "%s: the %s %d has shape %s, expected %s", what, kind, which,
                        ts, ls);
    if (tg_tensor_dtype(t) != tg_tensor_dtype(like))
        return gc__fail(msg, msg_size, "%s: the %s %d is %s, expected %s", what, kind, which,
                        tg_dtype_name(tg_tensor_dtype(t)), tg_dtype_name(tg_tensor_dtype(like)));
    if (tg_tensor_to_doubles(t, got, n) != 0)
        return gc__fail(msg, msg_size, "%s: reading the %s %d: %s", what, kind, which,
                        tg_last_error() ? tg_last_error() : "(no error recorded)");
    return true;
}

int gc__floating_outputs(tg_tensor **out, int n_out, int *fout, int64_t *n)
{
    int n_f = 0;
    for (int k = 0; k < n_out; k++) {
        if (!tg_dtype_is_floating(tg_tensor_dtype(out[k]))) continue;
        fout[n_f] = k;
        n[n_f++] = tg_tensor_numel(out[k]);
    }
    gc__release_all(out, n_out);
    return n_f;
}

void gc__release_all(tg_tensor **ts, int n)
{
    for (int i = 0; i < n; i++) {
        tg_release(ts[i]);
        ts[i] = NULL;
    }
}

/* Runs f once; on success out[] holds n_out new references. */
static bool call_f(gc_state *s, tg_tensor **out, int *n_out)
{
    for (int i = 0; i < GC_MAX_OUTPUTS; i++) out[i] = NULL;
    int n = s->f.call(s->f.ctx, s->in, out);
    if (n < 0) {
        gc__release_all(out, GC_MAX_OUTPUTS);
        return gc__fail(s->msg, s->msg_size, "the function failed: %s",
                        tg_last_error() ? tg_last_error() : "(no error recorded)");
    }
    for (int i = 0; i < n; i++)
        if (!out[i]) {
            gc__release_all(out, n);
            return gc__fail(s->msg, s->msg_size, "the function returned NULL as output %d: %s", i,
                            tg_last_error() ? tg_last_error() : "(no error recorded)");
        }
    *n_out = n;
    return true;
}

/* Runs f and copies every floating output's values into s->vals. */
static bool eval_values(gc_state *s)
{
    tg_tensor *out[GC_MAX_OUTPUTS];
    int n;
    if (!call_f(s, out, &n)) return false;
    bool ok = n == s->n_out;
    for (int o = 0; ok && o < s->n_f; o++) {
        tg_tensor *y = out[s->fout[o]];
        ok = tg_tensor_numel(y) == s->n[o] && tg_tensor_to_doubles(y, s->vals[o], s->n[o]) == 0;
    }
    gc__release_all(out, n);
    return ok || gc__fail(s->msg, s->msg_size, "the function's outputs changed between calls");
}

/* Central differences: jn[o][i][k][j] = (f_k(x + eps e_j) - f_k(x - eps e_j)) / (2 eps). */
static bool numerical_jacobian(gc_state *s)
{
    for (int i = 0; i < s->n_diff; i++) {
        tg_tensor *x = s->in[s->diff[i]];
        for (int64_t j = 0; j < s->m[i]; j++) {
            double *p = gc__elem_ptr(x, j), orig = *p;
            *p = orig + s->o.eps;
            bool ok = eval_values(s);
            for (int o = 0; ok && o < s->n_f; o++)
                for (int64_t k = 0; k < s->n[o]; k++) s->jn[o][i][k * s->m[i] + j] = s->vals[o][k];
            *p = orig - s->o.eps;
            ok = ok && eval_values(s);
            *p = orig;
            if (!ok) return false;
            for (int o = 0; o < s->n_f; o++)
                for (int64_t k = 0; k < s->n[o]; k++) {
                    double *e = &s->jn[o][i][k * s->m[i] + j];
                    *e = (*e - s->vals[o][k]) / (2 * s->o.eps);
                }
        }
    }
    return true;
}

/* u = v^T J for the numerical Jacobian of output o w.r.t. input i. */
static void numerical_vjp(const gc_state *s, int o, int i, const double *v, double *u)
{
    for (int64_t j = 0; j < s->m[i]; j++) u[j] = 0;
    for (int64_t k = 0; k < s->n[o]; k++)
        for (int64_t j = 0; j < s->m[i]; j++) u[j] += v[k] * s->jn[o][i][k * s->m[i] + j];
}

/* Checks one analytical gradient g (may be NULL: zero) of input i against want[m[i]]. */
static bool compare_grad(gc_state *s, const char *what, int o, int i, tg_tensor *g,
                         const double *want, double *got)
{
    if (!gc__read_like(g, s->in[s->diff[i]], got, s->m[i], what, "gradient of input", s->diff[i],
                       s->msg, s->msg_size))
        return false;
    for (int64_t j = 0; j < s->m[i]; j++)
        if (!gc__close_enough(got[j], want[j], &s->o))
            return gc__fail(
                s->msg, s->msg_size,
                "%s: output %d, input %d, input element %lld: analytical %.10g, numerical %.10g "
                "(atol %g, rtol %g)",
                what, s->fout[o], s->diff[i], (long long)j, got[j], want[j], s->o.atol, s->o.rtol);
    return true;
}

/* tg_grad of output y with grad_output v (values vv) w.r.t. every differentiated input,
 * compared with vv^T J_num. */
static bool check_vjp(gc_state *s, const char *what, int o, tg_tensor *y, const double *vv,
                      double *want, double *got)
{
    tg_tensor *v = gc__tensor_like(y, vv);
    tg_tensor *xs[GC_MAX_INPUTS], *grads[GC_MAX_INPUTS] = { NULL };
    for (int i = 0; i < s->n_diff; i++) xs[i] = s->in[s->diff[i]];
    int rc = v ? tg_grad(((tg_tensor_list){ &y, 1 }), ((tg_tensor_list){ xs, s->n_diff }), grads,
                         .grad_outputs = ((tg_tensor_list){ &v, 1 }), .retain_graph = true,
                         .allow_unused = true)
               : -1;
    tg_release(v);
    if (rc != 0) {
        gc__release_all(grads, s->n_diff);
        return gc__fail(s->msg, s->msg_size, "%s: tg_grad of output %d failed: %s", what,
                        s->fout[o], tg_last_error() ? tg_last_error() : "(no error recorded)");
    }
    bool ok = true;
    for (int i = 0; ok && i < s->n_diff; i++) {
        numerical_vjp(s, o, i, vv, want);
        ok = compare_grad(s, what, o, i, grads[i], want, got);
    }
    gc__release_all(grads, s->n_diff);
    return ok;
}

void gc__random_vector(double *v, int64_t n, uint64_t *seed)
{
    for (int64_t k = 0; k < n; k++) v[k] = -1 + 2 * gc__uniform(seed);
}

static int64_t max_numel(const int64_t *a, int n)
{
    int64_t m = 1;
    for (int i = 0; i < n; i++) m = a[i] > m ? a[i] : m;
    return m;
}

/* The analytical Jacobian of every floating output, row by row (one-hot grad_outputs) or by
 * random products, against the numerical one. */
static bool analytical_checks(gc_state *s, tg_tensor **out)
{
    int64_t nmax = max_numel(s->n, s->n_f), mmax = max_numel(s->m, s->n_diff);
    double *v = calloc((size_t)nmax, sizeof *v), *want = malloc(sizeof *want * (size_t)mmax),
           *got = malloc(sizeof *got * (size_t)mmax);
    uint64_t seed = s->o.seed ^ 0x9e3779b97f4a7c15ULL;
    bool ok = true;
    for (int o = 0; ok && o < s->n_f; o++) {
        tg_tensor *y = out[s->fout[o]];
        if (!tg_tensor_requires_grad(y)) {
            /* No graph: the function must not depend on the inputs. */
            for (int i = 0; ok && i < s->n_diff; i++)
                for (int64_t e = 0; ok && e < s->n[o] * s->m[i]; e++)
                    if (fabs(s->jn[o][i][e]) > s->o.atol)
                        ok = gc__fail(s->msg, s->msg_size,
                                      "output %d does not require grad, but its numerical "
                                      "derivative w.r.t. input %d is %.10g",
                                      s->fout[o], s->diff[i], s->jn[o][i][e]);
            continue;
        }
        if (s->n[o] <= s->o.full_max) {
            for (int64_t k = 0; ok && k < s->n[o]; k++) {
                char what[64];
                snprintf(what, sizeof what, "Jacobian row %lld", (long long)k);
                for (int64_t e = 0; e < s->n[o]; e++) v[e] = e == k;
                ok = check_vjp(s, what, o, y, v, want, got);
            }
        } else {
            for (int r = 0; ok && r < GC_VJPS; r++) {
                char what[64];
                snprintf(what, sizeof what, "random vector-Jacobian product %d", r);
                gc__random_vector(v, s->n[o], &seed);
                ok = check_vjp(s, what, o, y, v, want, got);
            }
        }
    }
    free(v);
    free(want);
    free(got);
    return ok;
}

/* tg_backward from the first output requiring grad with a random gradient: the inputs' .grad
 * must hold v^T J. Frees the graph (no retain_graph). */
static bool backward_check(gc_state *s, tg_tensor **out)
{
    int o = 0;
    while (o < s->n_f && !tg_tensor_requires_grad(out[s->fout[o]])) o++;
    if (o == s->n_f) return true;
    tg_tensor *y = out[s->fout[o]];
    int64_t mmax = max_numel(s->m, s->n_diff);
    double *v = malloc(sizeof *v * (size_t)s->n[o]), *want = malloc(sizeof *want * (size_t)mmax),
           *got = malloc(sizeof *got * (size_t)mmax);
    uint64_t seed = s->o.seed ^ 0x51afd7ed558ccd1dULL;
    gc__random_vector(v, s->n[o], &seed);
    tg_tensor *gv = gc__tensor_like(y, v);
    bool ok = gv && tg_backward(y, .grad = gv) == 0;
    tg_release(gv);
    if (!ok)
        ok = gc__fail(s->msg, s->msg_size, "tg_backward of output %d failed: %s", s->fout[o],
                      tg_last_error() ? tg_last_error() : "(no error recorded)");
    for (int i = 0; i < s->n_diff; i++) {
        tg_tensor *x = s->in[s->diff[i]];
        tg_tensor *g = tg_tensor_grad(x);
        if (ok) {
            numerical_vjp(s, o, i, v, want);
            ok = compare_grad(s, "tg_backward's .grad", o, i, g, want, got);
        }
        tg_release(g);
        tg_tensor_set_grad(x, NULL);
    }
    free(v);
    free(want);
    free(got);
    return ok;
}

/* Finds the differentiated inputs and the floating outputs, allocates the Jacobians. */
static bool setup(gc_state *s)
{
    for (int i = 0; i < s->n_in; i++) {
        tg_tensor *x = s->in[i];
        if (!x || !tg_tensor_requires_grad(x)) continue;
        if (tg_tensor_dtype(x) != TG_FLOAT64)
            return gc__fail(s->msg, s->msg_size,
                            "input %d requires grad but is %s (gradcheck needs float64)", i,
                            tg_dtype_name(tg_tensor_dtype(x)));
        s->diff[s->n_diff] = i;
        s->m[s->n_diff++] = tg_tensor_numel(x);
    }
    if (!s->n_diff) return gc__fail(s->msg, s->msg_size, "no input requires grad");
    tg_tensor *out[GC_MAX_OUTPUTS];
    if (!call_f(s, out, &s->n_out)) return false;
    s->n_f = gc__floating_outputs(out, s->n_out, s->fout, s->n);
    for (int o = 0; o < s->n_f; o++) {
        s->vals[o] = malloc(sizeof(double) * (size_t)(s->n[o] ? s->n[o] : 1));
        for (int i = 0; i < s->n_diff; i++) {
            int64_t cells = s->n[o] * s->m[i];
            s->jn[o][i] = calloc((size_t)(cells > 0 ? cells : 1), sizeof(double));
        }
    }
    return true;
}

static void teardown(gc_state *s)
{
    for (int o = 0; o < s->n_f; o++) {
        free(s->vals[o]);
        for (int i = 0; i < s->n_diff; i++) free(s->jn[o][i]);
    }
}

gc_opts gc__defaults(const gc_opts *opts)
{
    gc_opts o = opts ? *opts : (gc_opts){ 0 };
    if (o.eps <= 0) o.eps = 1e-6;
    if (o.atol <= 0) o.atol = 1e-5;
    if (o.rtol <= 0) o.rtol = 1e-3;
    if (o.full_max <= 0) o.full_max = 128;
    return o;
}

bool gc_gradcheck(gc_func f, tg_tensor *const *in, int n_in, const gc_opts *opts, char *msg,
                  size_t msg_size)
{
    gc_state s = {
        .f = f, .in = in, .n_in = n_in, .o = gc__defaults(opts), .msg = msg, .msg_size = msg_size
    };
    msg[0] = 0;
    bool ok = setup(&s) && numerical_jacobian(&s);
    tg_tensor *out[GC_MAX_OUTPUTS] = { NULL };
    int n_out = 0;
    if (ok) ok = call_f(&s, out, &n_out);
    if (ok) ok = analytical_checks(&s, out) && backward_check(&s, out);
    gc__release_all(out, n_out);
    teardown(&s);
    return ok;
}

/* ------------------------------------------------------------------ second order */

/* g(x..., v...) = the gradient of sum_o <v_o, f_o(x)> w.r.t. the x requiring grad, with
 * create_graph so that it is differentiable again. */
typedef struct gg_ctx {
    gc_func f;
    int n_in;                 /* x... */
    int n_v;                  /* v..., one per output in outs[] */
    int outs[GC_MAX_OUTPUTS]; /* which outputs of f are differentiated */
} gg_ctx;

static int gg_call(const void *ctx, tg_tensor *const *in, tg_tensor **out)
{
    const gg_ctx *g = ctx;
    tg_tensor *y[GC_MAX_OUTPUTS] = { NULL }, *ys[GC_MAX_OUTPUTS], *xs[GC_MAX_INPUTS];
    int ny = g->f.call(g->f.ctx, in, y);
    if (ny < 0) return -1;
    int nx = 0;
    for (int i = 0; i < g->n_in; i++)
        if (in[i] && tg_tensor_requires_grad(in[i])) xs[nx++] = in[i];
    for (int k = 0; k < g->n_v; k++) ys[k] = y[g->outs[k]];
    tg_tensor *grads[GC_MAX_INPUTS] = { NULL };
    int rc = tg_grad(((tg_tensor_list){ ys, g->n_v }), ((tg_tensor_list){ xs, nx }), grads,
                     .grad_outputs = ((tg_tensor_list){ in + g->n_in, g->n_v }),
                     .create_graph = true, .allow_unused = true);
    gc__release_all(y, ny);
    if (rc != 0) {
        gc__release_all(grads, nx);
        return -1;
    }
    for (int i = 0; i < nx; i++) out[i] = grads[i] ? grads[i] : tg_zeros_like(xs[i]);
    return nx;
}

bool gc_gradgradcheck(gc_func f, tg_tensor *const *in, int n_in, const gc_opts *opts, char *msg,
                      size_t msg_size)
{
    gc_opts o = gc__defaults(opts);
    gg_ctx g = { .f = f, .n_in = n_in };
    tg_tensor *all[GC_MAX_INPUTS + GC_MAX_OUTPUTS] = { NULL }, *y[GC_MAX_OUTPUTS] = { NULL };
    msg[0] = 0;
    int ny = f.call(f.ctx, in, y);
    if (ny < 0)
        return gc__fail(msg, msg_size, "the function failed: %s",
                        tg_last_error() ? tg_last_error() : "?");
    for (int i = 0; i < n_in; i++) all[i] = in[i];
    uint64_t seed = o.seed ^ 0x2545f4914f6cdd1dULL;
    bool ok = true;
    for (int k = 0; ok && k < ny; k++) {
        if (!y[k] || !tg_tensor_requires_grad(y[k])) continue;
        if (n_in + g.n_v >= GC_MAX_INPUTS + GC_MAX_OUTPUTS) {
            ok = gc__fail(msg, msg_size, "too many inputs and outputs for gradgradcheck");
            break;
        }
        gc_input spec = { .used = true, .ndim = (int8_t)tg_tensor_dim(y[k]), .domain = GC_REAL };
        for (int64_t d = 0; d < spec.ndim; d++) spec.shape[d] = tg_tensor_size(y[k], d);
        all[n_in + g.n_v] = gc_make_input(&spec, &seed);
        g.outs[g.n_v++] = k;
    }
    gc__release_all(y, ny);
    if (!g.n_v) ok = gc__fail(msg, msg_size, "no output requires grad");
    if (ok && n_in + g.n_v > GC_MAX_INPUTS)
        ok = gc__fail(msg, msg_size,
                      "gradgradcheck: %d inputs and grad_outputs exceed GC_MAX_INPUTS",
                      n_in + g.n_v);
    if (ok) ok = gc_gradcheck((gc_func){ gg_call, &g }, all, n_in + g.n_v, &o, msg, msg_size);
    for (int k = 0; k < g.n_v; k++) tg_release(all[n_in + k]);
    return ok;
}

/* ------------------------------------------------------------------ registered cases */

/* GNU ld defines these for a section whose name is a C identifier. */
extern const gc_case_table __start_gc_case_tables[];
extern const gc_case_table __stop_gc_case_tables[];

int gc_num_cases(void)
{
    int64_t n = 0;
    for (const gc_case_table *t = __start_gc_case_tables; t < __stop_gc_case_tables; t++)
        if (t->cases) n += t->n;
    return (int)n;
}

static int call_case(const void *ctx, tg_tensor *const *in, tg_tensor **out)
{
    return ((const gc_case *)ctx)->fn(in, out);
}

gc_func gc_case_func(const gc_case *c) { return (gc_func){ call_case, c }; }

const gc_case *gc_case_at(int i)
{
    for (const gc_case_table *t = __start_gc_case_tables; t < __stop_gc_case_tables; t++) {
        if (!t->cases) continue;
        if (i < t->n) return &t->cases[i];
        i -= (int)t->n;
    }
    return NULL;
}

int gc_case_inputs(const gc_case *c, int index, tg_tensor **in, char *msg, size_t msg_size)
{
    uint64_t seed = 0x5eed0000u + (uint64_t)index;
    int n = 0;
    for (; n < GC_MAX_INPUTS && c->in[n].used; n++) {
        const gc_input *s = &c->in[n];
        in[n] = gc_make_input(s, &seed);
        bool bad = in[n] && s->layout != GC_CONTIG && s->ndim >= 2 && s->shape[s->ndim - 1] > 1 &&
                   s->shape[s->ndim - 2] > 1 && tg_tensor_is_contiguous(in[n]);
        if (!in[n] || bad) {
            if (!in[n])
                gc__fail(msg, msg_size, "%s [%s]: input %d: %s", c->op, c->label, n,
                         tg_last_error() ? tg_last_error() : "(no error recorded)");
            else
                gc__fail(msg, msg_size, "%s [%s]: input %d should be non-contiguous", c->op,
                         c->label, n);
            gc__release_all(in, n + 1);
            return -1;
        }
    }
    return n;
}

void gc_count_warning(const char *msg, void *user)
{
    (void)msg;
    ++*(int *)user;
}

/* Reductions: sum, mean, prod, amax, amin, max.dim, min.dim, argmax, argmin, var, std.
 *
 * Every reduction views `self` as [outer, inner]: the kept dims (outer, one per output
 * element, in the output's row-major order) and the reduced dims (inner). The reference path
 * walks the inner elements of one output as "lines" (runs along the innermost reduced dim with
 * one stride) and folds them into a partial result; the fast paths sit next to it:
 *
 *  - contiguous float32/float64 lines are summed (cap/reduce_loops.c, built per CPU
 *    capability) into several independent float64 accumulators (float32 sums therefore accumulate in double: relative error ~1e-16 * n
 *    before the final rounding to float, far below float32's own 6e-8);
 *  - a reduction whose kept innermost dim has stride 1 (sum over dim 0 of a row-major matrix)
 *    is computed "vertically": a block of outputs accumulates whole rows at once, so memory is
 *    read in order instead of with a large stride;
 *  - when there are few outputs (a full reduction), each output's inner range is cut into
 *    fixed 64K-element chunks reduced in parallel into partials that are merged in chunk order,
 *    so the result does not depend on the number of threads.
 *
 * Accumulation: float dtypes (incl. float16/bfloat16) in double; integral dtypes in int64 with
 * wrap-around (sum/prod of ints and bools produce int64 by default, as in PyTorch). var/std use
 * two passes per chunk in double (mean, then the corrected sum of squared deviations) and
 * Chan's formula to merge chunks. max/min/argmax/argmin return the first occurrence of the
 * extreme; NaN propagates and wins (the first NaN's index is returned). */
#include "tg_kutil.h"
#include "pointwise_convert.h"
#include "reduce_checks.h"
#include "reduce_view.h"
#include "reduce_loops.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/amax.h"
#include "kernels/amin.h"
#include "kernels/argmax.h"
#include "kernels/argmin.h"
#include "kernels/max.h"
#include "kernels/mean.h"
#include "kernels/min.h"
#include "kernels/prod.h"
#include "kernels/std.h"
#include "kernels/sum.h"
#include "kernels/var.h"

#define CHUNK 65536 /* inner elements per parallel chunk of a full reduction */
#define VBLOCK 4096 /* outputs per block of the vertical path (32 KiB of sums) */

/* One partial result: whichever fields the kind uses. */
typedef struct partial {
    double d;    /* sum, product, extreme value (float) or mean (var) */
    double m2;   /* var: sum of squared deviations */
    double dev;  /* var: sum of deviations (the correction term of the two-pass formula) */
    int64_t i;   /* integer sum/product/extreme */
    int64_t idx; /* arg reductions: index of the extreme */
    int64_t pos; /* arg reductions: index of the next element */
    int64_t n;   /* var: element count */
    bool nan, any;
} partial;

typedef struct rctx {
    rkind kind;
    bool integer; /* accumulate in int64 (integral output / input) */
    rview v;
    const char *base; /* self's data */
    tg_dtype dt;      /* self's dtype */
    size_t esz;
    int64_t correction;
    tg_tensor *out, *out2; /* values (or the only output), indices */
    char *ob, *ob2;
    bool ocontig, ocontig2;
} rctx;

/* ------------------------------------------------------------------ the view */

/* ------------------------------------------------------------------ line folds */

/* Sum of one float line in double; float64 lines longer than 4096 are summed block by block
 * so that rounding error grows with the number of blocks, not elements. */
static double sum_line_double(const char *p, int64_t n, int64_t stride, tg_dtype dt)
{
    double s = 0;
    const tg_reduce_loops *loops = TG_CAP_PICK(tg__reduce_loops);
    if (dt == TG_FLOAT32 && stride == 1) return loops->sum_f32((const float *)p, n);
    if (dt == TG_FLOAT64 && stride == 1) {
        for (int64_t b = 0; b < n; b += 4096)
            s += loops->sum_f64((const double *)p + b, n - b < 4096 ? n - b : 4096);
        return s;
    }
    if (dt == TG_FLOAT32) {
        const float *x = (const float *)p;
        for (int64_t i = 0; i < n; i++) s += x[i * stride];
        return s;
    }
    size_t esz = tg_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) s += tg__pw_load_f64(p + i * stride * (int64_t)esz, dt);
    return s;
}

/* Folds one line (n elements, `stride` elements apart) into the partial. */
static void fold_line(const rctx *c, partial *r, const char *p, int64_t n, int64_t stride)
{
    int64_t step = stride * (int64_t)c->esz;
    switch (c->kind) {
    case R_SUM:
    case R_MEAN:
        if (c->integer) {
            uint64_t s = (uint64_t)r->i;
            if (c->dt == TG_INT64) {
                const int64_t *x = (const int64_t *)p;
                for (int64_t k = 0; k < n; k++) s += (uint64_t)x[k * stride];
            } else {
                for (int64_t k = 0; k < n; k++) s += (uint64_t)tg__pw_load_i64(p + k * step, c->dt);
            }
            r->i = (int64_t)s;
        } else {
            r->d += sum_line_double(p, n, stride, c->dt);
        }
        break;
    case R_PROD:
        for (int64_t k = 0; k < n; k++) {
            if (c->integer)
                r->i = (int64_t)((uint64_t)r->i * (uint64_t)tg__pw_load_i64(p + k * step, c->dt));
            else r->d *= tg__pw_load_f64(p + k * step, c->dt);
        }
        break;
    case R_MAX:
    case R_MIN: {
        bool mx = c->kind == R_MAX;
        if (c->dt == TG_FLOAT32 && n > 0) { /* typed loops: no per-element dtype switch */
            const float *x = (const float *)p;
            float best;
            bool nan = false;
            if (stride == 1) {
                const tg_reduce_loops *loops = TG_CAP_PICK(tg__reduce_loops);
                best = (mx ? loops->max_f32 : loops->min_f32)(x, n, &nan);
            } else {
                best = x[0];
                for (int64_t k = 0; k < n; k++) {
                    float v = x[k * stride];
                    nan |= v != v;
                    best = mx ? (v > best ? v : best) : (v < best ? v : best);
                }
            }
            if (r->any && !(mx ? best > (float)r->d : best < (float)r->d)) best = (float)r->d;
            r->nan |= nan;
            r->d = best;
            r->any = true;
            break;
        }
        for (int64_t k = 0; k < n; k++) {
            if (c->integer) {
                int64_t x = tg__pw_load_i64(p + k * step, c->dt);
                if (!r->any || (mx ? x > r->i : x < r->i)) r->i = x;
            } else {
                double x = tg__pw_load_f64(p + k * step, c->dt);
                if (x != x) r->nan = true;
                else if (!r->any || (mx ? x > r->d : x < r->d)) r->d = x;
            }
            r->any = true;
        }
        break;
    }
    case R_ARGMAX:
    case R_ARGMIN: {
        bool mx = c->kind == R_ARGMAX;
        for (int64_t k = 0; k < n; k++, r->pos++) {
            if (r->nan) continue;
            if (c->integer) {
                int64_t x = tg__pw_load_i64(p + k * step, c->dt);
                if (!r->any || (mx ? x > r->i : x < r->i)) {
                    r->i = x;
                    r->idx = r->pos;
                }
            } else {
                double x = tg__pw_load_f64(p + k * step, c->dt);
                if (x != x) {
                    r->nan = true;
                    r->d = x;
                    r->idx = r->pos;
                } else if (!r->any || (mx ? x > r->d : x < r->d)) {
                    r->d = x;
                    r->idx = r->pos;
                }
            }
            r->any = true;
        }
        break;
    }
    case R_VAR:
    case R_STD: /* handled by var_sum_cb / var_dev_cb */ break;
    }
}

typedef void (*line_cb)(const rctx *c, partial *r, const char *p, int64_t n, int64_t stride);

/* Calls cb for every line of the inner elements [b, e) (row-major over the inner dims) of the
 * output whose first element is at `base`. */
static void inner_range(const rctx *c, const char *base, int64_t b, int64_t e, line_cb cb,
                        partial *r)
{
    const rview *v = &c->v;
    if (b >= e) return;
    int last = v->in - 1;
    int64_t idx[TG_MAX_DIMS], off = 0, rem = b;
    for (int d = last; d >= 0; d--) {
        idx[d] = rem % v->isz[d];
        rem /= v->isz[d];
        off += idx[d] * v->ist[d];
    }
    int64_t L = v->isz[last], S = v->ist[last];
    for (int64_t pos = b; pos < e;) {
        int64_t n = L - idx[last];
        if (n > e - pos) n = e - pos;
        cb(c, r, base + off * (int64_t)c->esz, n, S);
        pos += n;
        idx[last] += n;
        off += n * S;
        if (idx[last] < L) continue;
        off -= L * S;
        idx[last] = 0;
        for (int d = last - 1; d >= 0; d--) {
            off += v->ist[d];
            if (++idx[d] < v->isz[d]) break;
            off -= v->isz[d] * v->ist[d];
            idx[d] = 0;
        }
    }
}

/* var/std first pass: plain sum into r->d. */
static void var_sum_cb(const rctx *c, partial *r, const char *p, int64_t n, int64_t stride)
{
    r->d += sum_line_double(p, n, stride, c->dt);
}

/* var/std second pass: squared deviations from the mean r->d into r->m2, and the plain
 * deviations into r->dev (for the corrected two-pass formula). */
static void var_dev_cb(const rctx *c, partial *r, const char *p, int64_t n, int64_t stride)
{
    int64_t step = stride * (int64_t)c->esz;
    double mean = r->d, m2 = 0, dev = 0;
    if (c->dt == TG_FLOAT32) {
        const float *x = (const float *)p;
        for (int64_t k = 0; k < n; k++) {
            double dx = x[k * stride] - mean;
            m2 += dx * dx;
            dev += dx;
        }
    } else if (c->dt == TG_FLOAT64) {
        const double *x = (const double *)p;
        for (int64_t k = 0; k < n; k++) {
            double dx = x[k * stride] - mean;
            m2 += dx * dx;
            dev += dx;
        }
    } else {
        for (int64_t k = 0; k < n; k++) {
            double dx = tg__pw_load_f64(p + k * step, c->dt) - mean;
            m2 += dx * dx;
            dev += dx;
        }
    }
    r->m2 += m2;
    r->dev += dev;
}

static void fold_cb(const rctx *c, partial *r, const char *p, int64_t n, int64_t stride)
{
    fold_line(c, r, p, n, stride);
}

static void partial_init(const rctx *c, partial *r, int64_t begin)
{
    memset(r, 0, sizeof *r);
    r->pos = begin;
    if (c->kind == R_PROD) {
        r->d = 1;
        r->i = 1;
    }
}

/* Reduces inner elements [b, e) of output o into r. */
static void compute_partial(const rctx *c, int64_t o, int64_t b, int64_t e, partial *r)
{
    const char *base = c->base + tg__rv_outer_offset(&c->v, o) * (int64_t)c->esz;
    partial_init(c, r, b);
    if (c->kind == R_VAR || c->kind == R_STD) {
        inner_range(c, base, b, e, var_sum_cb, r);
        r->n = e - b;
        r->d = r->n ? r->d / (double)r->n : 0;
        inner_range(c, base, b, e, var_dev_cb, r);
        if (r->n) r->m2 -= r->dev * r->dev / (double)r->n; /* corrected two-pass */
        return;
    }
    inner_range(c, base, b, e, fold_cb, r);
}

/* Merges b (the later chunk) into a (the earlier one). */
static void merge_partial(const rctx *c, partial *a, const partial *b)
{
    switch (c->kind) {
    case R_SUM:
    case R_MEAN:
        a->d += b->d;
        a->i = (int64_t)((uint64_t)a->i + (uint64_t)b->i);
        break;
    case R_PROD:
        a->d *= b->d;
        a->i = (int64_t)((uint64_t)a->i * (uint64_t)b->i);
        break;
    case R_MAX:
    case R_MIN: {
        bool mx = c->kind == R_MAX;
        if (!b->any) break;
        a->nan |= b->nan;
        if (!a->any ||
            (c->integer ? (mx ? b->i > a->i : b->i < a->i) : (mx ? b->d > a->d : b->d < a->d))) {
            a->d = b->d;
            a->i = b->i;
        }
        a->any = true;
        break;
    }
    case R_ARGMAX:
    case R_ARGMIN: {
        bool mx = c->kind == R_ARGMAX;
        if (a->nan || !b->any) break;
        if (b->nan || !a->any ||
            (c->integer ? (mx ? b->i > a->i : b->i < a->i) : (mx ? b->d > a->d : b->d < a->d)))
            *a = *b;
        break;
    }
    case R_VAR:
    case R_STD: { /* Chan et al. */
        if (b->n == 0) break;
        if (a->n == 0) {
            *a = *b;
            break;
        }
        double na = (double)a->n, nb = (double)b->n, delta = b->d - a->d;
        a->m2 += b->m2 + delta * delta * na * nb / (na + nb);
        a->d += delta * nb / (na + nb);
        a->n += b->n;
        break;
    }
    }
}

static char *out_at(const tg_tensor *t, char *base, bool contig, int64_t o)
{
    return base + (contig ? o : tg__k_offset(t, o)) * (int64_t)tg_dtype_size(t->dtype);
}

static void store_result(const rctx *c, int64_t o, const partial *r)
{
    char *p = out_at(c->out, c->ob, c->ocontig, o);
    tg_dtype odt = c->out->dtype;
    switch (c->kind) {
    case R_SUM:
    case R_PROD:
        if (c->integer) tg__pw_store_i64(p, odt, r->i);
        else tg__pw_store_f64(p, odt, r->d);
        break;
    case R_MEAN: tg__pw_store_f64(p, odt, r->d / (double)c->v.inner_numel); break;
    case R_MAX:
    case R_MIN:
        if (c->integer) tg__pw_store_i64(p, odt, r->i);
        else tg__pw_store_f64(p, odt, r->nan ? NAN : r->d);
        break;
    case R_ARGMAX:
    case R_ARGMIN:
        if (c->out2) { /* max.dim / min.dim: values, then indices */
            if (c->integer) tg__pw_store_i64(p, odt, r->i);
            else tg__pw_store_f64(p, odt, r->d);
            p = out_at(c->out2, c->ob2, c->ocontig2, o);
        }
        *(int64_t *)p = r->idx;
        break;
    case R_VAR:
    case R_STD: {
        double den = (double)r->n - (double)c->correction;
        double var = (r->n ? r->m2 : NAN) / (den > 0 ? den : 0);
        tg__pw_store_f64(p, odt, c->kind == R_STD ? sqrt(var) : var);
        break;
    }
    }
}

/* ------------------------------------------------------------------ drivers */

static void outputs_task(int64_t b, int64_t e, void *ctx)
{
    const rctx *c = ctx;
    partial r;
    for (int64_t o = b; o < e; o++) {
        compute_partial(c, o, 0, c->v.inner_numel, &r);
        store_result(c, o, &r);
    }
}

typedef struct chunk_job {
    const rctx *c;
    int64_t o;
    partial *parts;
} chunk_job;

static void chunks_task(int64_t b, int64_t e, void *ctx)
{
    chunk_job *j = ctx;
    int64_t n = j->c->v.inner_numel;
    for (int64_t k = b; k < e; k++) {
        int64_t hi = (k + 1) * CHUNK < n ? (k + 1) * CHUNK : n;
        compute_partial(j->c, j->o, k * CHUNK, hi, &j->parts[k]);
    }
}

/* Vertical sums: outputs o..o+nb-1 are consecutive in memory (the kept innermost dim has
 * stride 1), so each inner element position contributes a contiguous row of nb values. */
static void add_row(double *acc, const char *p, int64_t n, tg_dtype dt)
{
    const tg_reduce_loops *loops = TG_CAP_PICK(tg__reduce_loops);
    if (dt == TG_FLOAT32) loops->add_row_f32(acc, (const float *)p, n);
    else loops->add_row_f64(acc, (const double *)p, n);
}

/* The vertical path's work: blocks of up to VBLOCK consecutive outputs, each block's inner
 * positions cut into `groups` fixed ranges of rows (one task per block and range). */
typedef struct vertical_job {
    const rctx *c;
    int64_t blocks_per_run, groups;
    double *parts; /* groups > 1: [task][VBLOCK] sums, merged in group order after the tasks */
} vertical_job;

/* Block blk's first output (*o0) and output count (*nb): blocks tile each run of consecutive
 * outputs (the kept innermost dim, `run` long) VBLOCK at a time. */
static void vertical_block(const vertical_job *j, int64_t run, int64_t blk, int64_t *o0,
                           int64_t *nb)
{
    int64_t first = (blk % j->blocks_per_run) * VBLOCK;
    *o0 = (blk / j->blocks_per_run) * run + first;
    *nb = run - first < VBLOCK ? run - first : VBLOCK;
}

static void vertical_task(int64_t b, int64_t e, void *ctx)
{
    const vertical_job *j = ctx;
    const rctx *c = j->c;
    const rview *v = &c->v;
    int64_t run = v->osz[v->on - 1];
    double local[VBLOCK];
    for (int64_t t = b; t < e; t++) {
        int64_t blk = t / j->groups, g = t % j->groups;
        int64_t o0, nb;
        vertical_block(j, run, blk, &o0, &nb);
        const char *base = c->base + tg__rv_outer_offset(v, o0) * (int64_t)c->esz;
        double *acc = j->groups > 1 ? j->parts + t * VBLOCK : local;
        memset(acc, 0, sizeof(double) * (size_t)nb);
        /* inner positions [r0, r1): the index and offset of r0 over the inner dims first */
        int64_t r0 = v->inner_numel * g / j->groups, r1 = v->inner_numel * (g + 1) / j->groups;
        int64_t idx[TG_MAX_DIMS] = { 0 }, off = 0, rem = r0;
        for (int d = v->in - 1; d >= 0; d--) {
            idx[d] = rem % v->isz[d];
            rem /= v->isz[d];
            off += idx[d] * v->ist[d];
        }
        for (int64_t r = r0; r < r1; r++) {
            add_row(acc, base + off * (int64_t)c->esz, nb, c->dt);
            for (int d = v->in - 1; d >= 0; d--) {
                off += v->ist[d];
                if (++idx[d] < v->isz[d]) break;
                off -= v->isz[d] * v->ist[d];
                idx[d] = 0;
            }
        }
        if (j->groups > 1) continue;
        for (int64_t k = 0; k < nb; k++) {
            partial res = { .d = acc[k] };
            store_result(c, o0 + k, &res);
        }
    }
}

/* The vertical path (use_vertical). With fewer than 8 blocks of outputs, the rows are cut
 * into 8 groups summed in parallel and merged in order: the threads then read memory in
 * long runs, and the grouping depends on the shape alone, so results do not depend on the
 * number of threads. */
static int run_vertical(const rctx *c)
{
    const rview *v = &c->v;
    int64_t run = v->osz[v->on - 1];
    vertical_job j = { .c = c, .blocks_per_run = (run + VBLOCK - 1) / VBLOCK, .groups = 1 };
    int64_t nblocks = (v->outer_numel / run) * j.blocks_per_run;
    if (nblocks < 8 && v->inner_numel >= 64) j.groups = 8;
    int64_t ntasks = nblocks * j.groups;
    if (j.groups > 1) {
        j.parts = malloc(sizeof(double) * VBLOCK * (size_t)ntasks);
        if (!j.parts) return tg__fail("reduce", "out of memory");
    }
    int64_t per = (int64_t)VBLOCK * v->inner_numel / j.groups;
    tg__parallel_for(ntasks, per >= tg__grain_size() ? 1 : tg__grain_size() / per, vertical_task,
                     &j);
    for (int64_t blk = 0; j.groups > 1 && blk < nblocks; blk++) {
        int64_t o0, nb;
        vertical_block(&j, run, blk, &o0, &nb);
        const double *acc = j.parts + blk * j.groups * VBLOCK;
        for (int64_t k = 0; k < nb; k++) {
            partial res = { .d = acc[k] };
            for (int64_t g = 1; g < j.groups; g++) res.d += acc[g * VBLOCK + k];
            store_result(c, o0 + k, &res);
        }
    }
    free(j.parts);
    return 0;
}

static bool use_vertical(const rctx *c)
{
    const rview *v = &c->v;
    return (c->kind == R_SUM || c->kind == R_MEAN) && !c->integer &&
           (c->dt == TG_FLOAT32 || c->dt == TG_FLOAT64) && v->ost[v->on - 1] == 1 &&
           v->osz[v->on - 1] >= 16 && v->inner_numel >= 2 && v->ist[v->in - 1] != 1;
}

static int run_reduce(rctx *c)
{
    const rview *v = &c->v;
    if (v->outer_numel == 0) return 0;
    if (use_vertical(c)) return run_vertical(c);
    if (v->outer_numel >= 8 || v->inner_numel < 2 * CHUNK) {
        int64_t inner = v->inner_numel > 0 ? v->inner_numel : 1;
        int64_t grain = inner >= tg__grain_size() ? 1 : tg__grain_size() / inner;
        tg__parallel_for(v->outer_numel, grain, outputs_task, c);
        return 0;
    }
    int64_t nch = (v->inner_numel + CHUNK - 1) / CHUNK;
    partial *parts = malloc(sizeof(partial) * (size_t)nch);
    if (!parts) return tg__fail("reduce", "out of memory");
    for (int64_t o = 0; o < v->outer_numel; o++) {
        chunk_job j = { c, o, parts };
        tg__parallel_for(nch, 1, chunks_task, &j);
        for (int64_t k = 1; k < nch; k++) merge_partial(c, &parts[0], &parts[k]);
        store_result(c, o, &parts[0]);
    }
    free(parts);
    return 0;
}

/* The CPU's body of every reduction (reduce_checks.h's tg_reduce_fn): prepares the output(s)
 * and runs. */
static tg_tensor *reduce_common(const tg_reduce_req *rq, tg_tensor **res2)
{
    rctx c;
    memset(&c, 0, sizeof c);
    c.kind = rq->kind;
    c.dt = rq->self->dtype;
    c.esz = tg_dtype_size(rq->self->dtype);
    c.base = tg__k_data(rq->self);
    c.correction = rq->correction;
    c.v = rq->v;
    c.integer = rq->integer;

    const tg_reduce_plan *plan = &rq->plan;
    tg_tensor *res = tg__k_prepare_out(rq->op, rq->out, plan->out_sizes, plan->out_ndim, rq->odt);
    if (!res) return NULL;
    if (res2) {
        *res2 = tg__k_prepare_out(rq->op, rq->out2, plan->out_sizes, plan->out_ndim, TG_INT64);
        if (!*res2) {
            tg_release(res);
            return NULL;
        }
        c.out2 = *res2;
        c.ob2 = tg__k_data(*res2);
        c.ocontig2 = tg__is_contiguous(*res2);
    }
    c.out = res;
    c.ob = tg__k_data(res);
    c.ocontig = tg__is_contiguous(res);
    return tg__reduce_done(run_reduce(&c), res, res2, rq->out, rq->out2);
}

/* ------------------------------------------------------------------ kernels
 * The argument handling is reduce_checks.h's (shared with CUDA), around reduce_common. */

/* sum over dim (None/empty = all) of self (any shape); out has the reduced shape. */
tg_tensor *tg__cpu_sum_out(tg_tensor *self, tg_int_list dim, bool keepdim, tg_dtype dtype,
                           tg_tensor *out)
{
    return tg__reduce_sum(reduce_common, self, dim, keepdim, dtype, out);
}

tg_tensor *tg__cpu_mean_out(tg_tensor *self, tg_int_list dim, bool keepdim, tg_dtype dtype,
                            tg_tensor *out)
{
    return tg__reduce_mean(reduce_common, self, dim, keepdim, dtype, out);
}

/* prod over one dim; the full product is the composite `prod` (flatten, then this). */
tg_tensor *tg__cpu_prod_out(tg_tensor *self, int64_t dim, bool keepdim, tg_dtype dtype,
                            tg_tensor *out)
{
    return tg__reduce_prod(reduce_common, self, dim, keepdim, dtype, out);
}

tg_tensor *tg__cpu_amax_out(tg_tensor *self, tg_int_list dim, bool keepdim, tg_tensor *out)
{
    return tg__reduce_amax_amin(reduce_common, "amax", "amax()", R_MAX, self, dim, keepdim, out);
}

tg_tensor *tg__cpu_amin_out(tg_tensor *self, tg_int_list dim, bool keepdim, tg_tensor *out)
{
    return tg__reduce_amax_amin(reduce_common, "amin", "amin()", R_MIN, self, dim, keepdim, out);
}

/* values and int64 indices of the extreme along dim; self is any shape. */
tg_values_indices tg__cpu_max_dim_out(tg_tensor *self, int64_t dim, bool keepdim, tg_tensor *max,
                                      tg_tensor *max_values)
{
    return tg__reduce_max_min_dim(reduce_common, "max", "max()", R_ARGMAX, self, dim, keepdim, max,
                                  max_values);
}

tg_values_indices tg__cpu_min_dim_out(tg_tensor *self, int64_t dim, bool keepdim, tg_tensor *min,
                                      tg_tensor *min_indices)
{
    return tg__reduce_max_min_dim(reduce_common, "min", "min()", R_ARGMIN, self, dim, keepdim, min,
                                  min_indices);
}

/* index (int64) of the extreme along dim, or in the flattened tensor when dim is None. */
tg_tensor *tg__cpu_argmax_out(tg_tensor *self, tg_opt_int dim, bool keepdim, tg_tensor *out)
{
    return tg__reduce_arg(reduce_common, "argmax", "argmax()", R_ARGMAX, self, dim, keepdim, out);
}

tg_tensor *tg__cpu_argmin_out(tg_tensor *self, tg_opt_int dim, bool keepdim, tg_tensor *out)
{
    return tg__reduce_arg(reduce_common, "argmin", "argmin()", R_ARGMIN, self, dim, keepdim, out);
}

tg_tensor *tg__cpu_var_out(tg_tensor *self, tg_int_list dim, tg_opt_int correction, bool keepdim,
                           tg_tensor *out)
{
    return tg__reduce_var_std(reduce_common, "var", R_VAR, self, dim, correction, keepdim, out);
}

tg_tensor *tg__cpu_std_out(tg_tensor *self, tg_int_list dim, tg_opt_int correction, bool keepdim,
                           tg_tensor *out)
{
    return tg__reduce_var_std(reduce_common, "std", R_STD, self, dim, correction, keepdim, out);
}

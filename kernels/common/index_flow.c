/* The shared flow of the index kernels (index_checks.h), compiled once for both backends:
 * the written operand, the index made contiguous int64 and bounds-checked before anything is
 * written, operands converted to the compute dtype, then the device's engine
 * (tg_index_backend); and nonzero on the host. */
#include "index_checks.h"

/* The written operand of a structured scatter-style kernel: out NULL, a new tensor (self's
 * shape and dtype, on `dev`) the caller fills with self; out == self, self (in place); else
 * out checked (self's dtype, resized when empty). Sets *copy when self must be copied in. */
static tg_tensor *prepare_out(const char *op, tg_tensor *self, tg_tensor *out, bool *copy)
{
    *copy = out != self;
    if (out == self) return tg_retain(self);
    if (out && (out->device.type != self->device.type || out->device.index != self->device.index))
        return (tg_tensor *)tg__error(op, "Expected out tensor to be on the same device as self");
    if (!out) return tg__empty(op, self->sizes, self->ndim, self->dtype, self->device);
    return tg__k_prepare_out(op, out, self->sizes, self->ndim, self->dtype);
}

/* The dtype the reductions compute in: float for float16 / bfloat16, uint8 for bool. */
static tg_dtype compute_dtype(tg_dtype t, tg_index_reduce red)
{
    if (red == TG_IDX_NONE) return t;
    if (t == TG_FLOAT16 || t == TG_BFLOAT16) return TG_FLOAT32;
    if (t == TG_BOOL) return TG_UINT8;
    return t;
}

/* A contiguous copy of t in dtype dt (a new reference to t when it already is one). */
static tg_tensor *convert(const char *op, tg_tensor *t, tg_dtype dt)
{
    return tg__k_contiguous_as(op, t, dt, tg__copy_into);
}

/* The index as contiguous int64, bounds-checked. NULL + error. */
static tg_tensor *prepare_index(const char *op, const tg_index_backend *be, tg_tensor *index,
                                int64_t bound, int64_t dim, bool select)
{
    tg_tensor *idx = convert(op, index, TG_INT64);
    if (idx && be->bounds(op, idx, bound, dim, select) != 0) {
        tg_release(idx);
        idx = NULL;
    }
    return idx;
}

/* The identity of a reduction in dtype t: what a slot holds before the first write when the
 * reduction does not include self. */
static double reduce_identity(tg_index_reduce red, tg_dtype t)
{
    const bool fl = tg_dtype_is_floating(t);
    if (red == TG_IDX_PROD) return 1.0;
    if (red == TG_IDX_AMAX && fl) return -INFINITY;
    if (red == TG_IDX_AMIN && fl) return INFINITY;
    if (red == TG_IDX_AMAX)
        return t == TG_INT64   ? -9.2233720368547758e18
               : t == TG_INT32 ? -2147483648.0
               : t == TG_INT16 ? -32768.0
               : t == TG_INT8  ? -128.0
                               : 0.0;
    if (red == TG_IDX_AMIN)
        return t == TG_INT64   ? 9.2233720368547748e18
               : t == TG_INT32 ? 2147483647.0
               : t == TG_INT16 ? 32767.0
               : t == TG_INT8  ? 127.0
                               : 255.0;
    return 0.0;
}

/* A run of x's plan writing the one element of scalar into every slot x writes: a copy of the
 * plan with the other operand's strides zeroed. */
static int run_broadcast(const char *op, const tg_index_backend *be, const tg_index_exec *x,
                         char *self, const tg_tensor *scalar, tg_index_reduce red, tg_device dev)
{
    tg_index_plan q = *x->p;
    for (int64_t d = 0; d < q.ndim; d++) q.os[d] = 0;
    tg_index_exec y = *x;
    y.p = &q;
    y.self = self;
    y.other = tg__k_data(scalar);
    y.red = red;
    y.alpha = 1.0;
    return be->run(op, &y, dev);
}

/* scatter_reduce without self: every slot written is first set to the reduction's identity. */
static int run_identity(const char *op, const tg_index_backend *be, const tg_index_exec *x,
                        tg_index_reduce red, tg_device dev)
{
    tg_tensor *iv = tg__scalar_tensor(reduce_identity(red, x->dtype), x->dtype, dev);
    int e = iv ? run_broadcast(op, be, x, x->self, iv, TG_IDX_NONE, dev) : -1;
    tg_release(iv);
    return e;
}

/* scatter_reduce's mean: the sums in w are divided by the count of writes of each slot (+ 1
 * for self when it is included). */
static int run_mean(const char *op, const tg_index_backend *be, const tg_index_exec *x,
                    tg_tensor *w, bool include_self, tg_device dev)
{
    tg_tensor *cnt = tg__empty(op, w->sizes, w->ndim, x->dtype, w->device);
    tg_tensor *one = cnt ? tg__scalar_tensor(1.0, x->dtype, dev) : NULL;
    tg_tensor *z = one ? tg__scalar_tensor(include_self ? 1.0 : 0.0, x->dtype, dev) : NULL;
    int e = z ? tg__copy_into(op, cnt, z) : -1;
    if (e == 0) e = run_broadcast(op, be, x, tg__k_data(cnt), one, TG_IDX_SUM, dev);
    if (e == 0) e = be->divide(op, w, cnt);
    tg_tensor *tmp[3] = { cnt, one, z };
    tg__k_release_all(tmp, 3);
    return e;
}

/* gather (one_d false) or index_select (one_d true) into out (NULL: allocated). */
tg_tensor *tg__index_gather_flow(const char *op, const tg_index_backend *be, tg_tensor *self,
                                 int64_t wd, tg_tensor *index, bool one_d, tg_tensor *out)
{
    int64_t sizes[TG_MAX_DIMS], nd;
    if (one_d) nd = tg__index_select_shape(self, wd, index, sizes);
    else {
        nd = index->ndim;
        for (int64_t d = 0; d < nd; d++) sizes[d] = index->sizes[d];
    }
    if (out && (out->device.type != self->device.type || out->device.index != self->device.index))
        return (tg_tensor *)tg__error(op, "Expected out tensor to be on the same device as self");
    tg_tensor *r = out ? tg__k_prepare_out(op, out, sizes, nd, self->dtype)
                       : tg__empty(op, sizes, nd, self->dtype, self->device);
    if (!r || tg__numel(r) == 0) return r;
    tg_tensor *idx = prepare_index(op, be, index, tg__index_size(self, wd), wd, one_d);
    tg_tensor *w =
        idx ? (tg__is_contiguous(r) ? tg_retain(r) : tg__empty(op, sizes, nd, r->dtype, r->device))
            : NULL;
    int rc = -1;
    if (w) {
        tg_index_plan p;
        if (one_d) tg__index_plan_1d(&p, wd, self, idx, w);
        else tg__index_plan_sg(&p, wd, self, idx, w);
        tg_index_exec x = { &p,
                            (const int64_t *)tg__k_data(idx),
                            tg__k_data(self),
                            tg__k_data(w),
                            self->dtype,
                            TG_IDX_MODE_GATHER,
                            TG_IDX_NONE,
                            1.0 };
        rc = be->run(op, &x, self->device);
        if (rc == 0 && w != r) rc = tg__copy_into(op, r, w);
    }
    tg_release(w);
    tg_release(idx);
    return tg__k_result(rc == 0, r);
}

/* The scatter family and index_add (one_d): self copied into the written operand (out; NULL
 * allocates, out == self in place), then src (NULL: `value`) combined at index by red, self's
 * own values left out of the reduction where !include_self. */
tg_tensor *tg__index_scatter_flow(const char *op, const tg_index_backend *be, tg_tensor *self,
                                  int64_t wd, tg_tensor *index, tg_tensor *src, double value,
                                  tg_index_reduce red, bool include_self, double alpha, bool one_d,
                                  tg_tensor *out)
{
    bool copy;
    tg_tensor *r = prepare_out(op, self, out, &copy);
    if (!r) return NULL;
    tg_dtype cdt = compute_dtype(self->dtype, red);
    bool direct = r->dtype == cdt && tg__is_contiguous(r);
    tg_tensor *w = NULL, *idx = NULL, *srcw = NULL, *val = NULL;
    int rc = -1;
    if (tg__numel(index) == 0 || tg__numel(self) == 0) {
        rc = copy ? tg__copy_into(op, r, self) : 0;
        goto done;
    }
    idx = prepare_index(op, be, index, tg__index_size(self, wd), wd, one_d);
    if (!idx) goto done;
    w = direct ? tg_retain(r) : tg__empty(op, self->sizes, self->ndim, cdt, self->device);
    if (!w || ((w != self) && tg__copy_into(op, w, self) != 0)) goto done;
    if (src) srcw = src->dtype == cdt ? tg_retain(src) : convert(op, src, cdt);
    else srcw = val = tg__scalar_tensor(value, cdt, self->device);
    if (!srcw) goto done;
    {
        tg_index_plan p;
        if (one_d) tg__index_plan_1d(&p, wd, w, idx, src ? srcw : w);
        else tg__index_plan_sg(&p, wd, w, idx, src ? srcw : NULL);
        if (!src)
            for (int64_t d = 0; d < p.ndim; d++) p.os[d] = 0;
        tg_index_exec x = { &p,
                            (const int64_t *)tg__k_data(idx),
                            tg__k_data(w),
                            tg__k_data(srcw),
                            cdt,
                            TG_IDX_MODE_SCATTER,
                            TG_IDX_NONE,
                            1.0 };
        if (!include_self && red != TG_IDX_NONE && run_identity(op, be, &x, red, self->device) != 0)
            goto done;
        x.red = red == TG_IDX_MEAN ? TG_IDX_SUM : red;
        x.alpha = alpha;
        if (be->run(op, &x, self->device) != 0) goto done;
        if (red == TG_IDX_MEAN && run_mean(op, be, &x, w, include_self, self->device) != 0)
            goto done;
    }
    rc = w != r ? tg__copy_into(op, r, w) : 0;
    if (rc == 0 && w == r) tg__bump_version(r);
done:
    tg_release(w);
    tg_release(idx);
    if (srcw != val) tg_release(srcw);
    tg_release(val);
    return tg__k_result(rc == 0, r);
}

/* ------------------------------------------------------------------ nonzero (host) */

/* nonzero of a contiguous host tensor: chunks of the flat elements are counted in parallel,
 * an exclusive prefix sum over the chunks gives each chunk's first output row, and the chunks
 * then write their coordinates in parallel (row-major order overall). */
typedef struct nonzero_job {
    const char *data;
    tg_dtype dtype;
    int64_t n, chunk, ndim;
    const int64_t *sizes;
    int64_t *counts; /* per chunk; then the first output row of each */
    int64_t *out;    /* (count, ndim) */
} nonzero_job;

static bool nonzero_at(const nonzero_job *j, int64_t i)
{
    switch (j->dtype) {
    case TG_BOOL:
    case TG_UINT8:
    case TG_INT8: return ((const uint8_t *)j->data)[i] != 0;
    case TG_FLOAT32: return ((const float *)j->data)[i] != 0;
    case TG_FLOAT64: return ((const double *)j->data)[i] != 0;
    case TG_INT64: return ((const int64_t *)j->data)[i] != 0;
    case TG_INT32: return ((const int32_t *)j->data)[i] != 0;
    default: return tg__pw_load_f64(j->data + i * (int64_t)tg_dtype_size(j->dtype), j->dtype) != 0;
    }
}

static void nonzero_count(int64_t b, int64_t e, void *ctx)
{
    nonzero_job *j = (nonzero_job *)ctx;
    for (int64_t c = b; c < e; c++) {
        int64_t lo = c * j->chunk, hi = lo + j->chunk < j->n ? lo + j->chunk : j->n, k = 0;
        for (int64_t i = lo; i < hi; i++) k += nonzero_at(j, i);
        j->counts[c] = k;
    }
}

static void nonzero_fill(int64_t b, int64_t e, void *ctx)
{
    nonzero_job *j = (nonzero_job *)ctx;
    for (int64_t c = b; c < e; c++) {
        int64_t lo = c * j->chunk, hi = lo + j->chunk < j->n ? lo + j->chunk : j->n;
        int64_t *row = j->out + j->counts[c] * j->ndim;
        for (int64_t i = lo; i < hi; i++) {
            if (!nonzero_at(j, i)) continue;
            for (int64_t d = j->ndim - 1, r = i; d >= 0; d--) {
                row[d] = r % j->sizes[d];
                r /= j->sizes[d];
            }
            row += j->ndim;
        }
    }
}

/* The (count, ndim) int64 result on the CPU for a contiguous CPU x. NULL + error. */
tg_tensor *tg__nonzero_host(const char *op, const tg_tensor *x)
{
    nonzero_job j;
    j.data = tg__k_data(x);
    j.dtype = x->dtype;
    j.n = tg__numel(x);
    j.ndim = x->ndim;
    j.sizes = x->sizes;
    j.chunk = 32768;
    int64_t chunks = j.n ? (j.n + j.chunk - 1) / j.chunk : 0;
    j.counts = (int64_t *)malloc(sizeof(int64_t) * (size_t)(chunks ? chunks : 1));
    if (!j.counts) return (tg_tensor *)tg__error(op, "out of memory");
    tg__parallel_for(chunks, 1, nonzero_count, &j);
    int64_t total = 0;
    for (int64_t c = 0; c < chunks; c++) {
        int64_t k = j.counts[c];
        j.counts[c] = total;
        total += k;
    }
    int64_t sizes[2] = { total, x->ndim };
    tg_tensor *r = tg__empty(op, sizes, 2, TG_INT64, TG_DEVICE_CPU);
    if (r && total > 0 && x->ndim > 0) {
        j.out = (int64_t *)tg__k_data(r);
        tg__parallel_for(chunks, 1, nonzero_fill, &j);
    }
    free(j.counts);
    return r;
}

/* The runner of the generated CPU pointwise kernels (ufunc.h): builds a call's iteration with
 * its meta function and picks, for each run of elements, one of three loops:
 *
 *   - the array map of the capability (`CPUVector:`), when the scalar function has one for
 *     the compute type: every element goes through it, contiguous float32 / float64 operands
 *     directly and the others a chunk at a time through buffers (loaded and converted, mapped,
 *     converted and stored);
 *   - the capability's typed loop (ufunc_loops.h), when every operand holds the computation
 *     dtype (a comparison's output bool);
 *   - else, or with tg__pw_force_reference set (tests compare the two), the reference loop
 *     below: any dtype and strides, one element at a time through the scalar function.
 *
 * float16 and bfloat16 compute in float, integers and bool in int64_t. */
#include "ufunc.h"

int tg__pw_force_reference = 0;

/* ------------------------------------------------------------------ the reference loop */

/* One element's inputs in the compute type. */
typedef union ufunc_vals {
    float f32[TG_UFUNC_MAX_IN];
    double f64[TG_UFUNC_MAX_IN];
    int64_t i64[TG_UFUNC_MAX_IN];
} ufunc_vals;

static void load_vals(tg_pw_kind k, ufunc_vals *v, const tg_ufunc_ctx *c, char **x)
{
    for (int j = 0; j < c->fns->nin; j++) {
        const tg_dtype t = c->dtypes[1 + j];
        if (k == TG_PW_F32) v->f32[j] = tg__pw_load_f32(x[j], t);
        else if (k == TG_PW_F64) v->f64[j] = tg__pw_load_f64(x[j], t);
        else v->i64[j] = tg__pw_load_i64(x[j], t);
    }
}

/* The scalar function of v, stored at o in the output's dtype. */
static void apply_store(tg_pw_kind k, const tg_ufunc_ctx *c, const ufunc_vals *v, char *o)
{
    const tg_ufunc_fns *f = c->fns;
    const tg_dtype t = c->dtypes[0];
    const float *a = v->f32;
    const double *d = v->f64;
    const int64_t *i = v->i64;
    switch (k) {
    case TG_PW_F32:
        if (f->b32) tg__pw_store_i64(o, t, f->b32(a[0], a[1], a[2], c->p.f32));
        else tg__pw_store_f32(o, t, f->f32(a[0], a[1], a[2], c->p.f32));
        break;
    case TG_PW_F64:
        if (f->b64) tg__pw_store_i64(o, t, f->b64(d[0], d[1], d[2], c->p.f64));
        else tg__pw_store_f64(o, t, f->f64(d[0], d[1], d[2], c->p.f64));
        break;
    case TG_PW_I64:
        if (f->bi64) tg__pw_store_i64(o, t, f->bi64(i[0], i[1], i[2], c->p.i64));
        else tg__pw_store_i64(o, t, f->i64(i[0], i[1], i[2], c->p.i64));
        break;
    }
}

/* Any dtypes, any strides: data[0] is the output, data[1 + j] input j. */
static void ref_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    tg_ufunc_ctx *c = vctx;
    const tg_pw_kind k = tg__pw_kind(c->dtype);
    const int nin = c->fns->nin;
    for (int64_t i = 0; i < n; i++) {
        char *x[TG_UFUNC_MAX_IN];
        for (int j = 0; j < nin; j++) x[j] = data[1 + j] + i * strides[1 + j];
        ufunc_vals v = { { 0 } };
        load_vals(k, &v, c, x);
        if (c->int_div && k == TG_PW_I64 && v.i64[1] == 0) {
            /* Reported after the run, on the calling thread (errors are thread-local). */
            __atomic_store_n(&c->zero_div, 1, __ATOMIC_RELAXED);
            return;
        }
        apply_store(k, c, &v, data[0] + i * strides[0]);
    }
}

/* ------------------------------------------------------------------ the array maps */

enum { MAP_CHUNK = 256 };

static void map_call(tg_pw_kind k, const tg_ufunc_ctx *c, void *out, void *const *in, int64_t n)
{
    if (k == TG_PW_F32) c->loops->map_f32(out, (const float *const *)in, n, c->p.f32);
    else c->loops->map_f64(out, (const double *const *)in, n, c->p.f64);
}

/* Element i of a buffer of the compute type from / to an element of dtype t at p. */
static void buf_load(tg_pw_kind k, void *buf, int64_t i, const char *p, tg_dtype t)
{
    if (k == TG_PW_F32) ((float *)buf)[i] = tg__pw_load_f32(p, t);
    else ((double *)buf)[i] = tg__pw_load_f64(p, t);
}

static void buf_store(tg_pw_kind k, const void *buf, int64_t i, char *p, tg_dtype t)
{
    if (k == TG_PW_F32) tg__pw_store_f32(p, t, ((const float *)buf)[i]);
    else tg__pw_store_f64(p, t, ((const double *)buf)[i]);
}

/* Every element through the map: directly when every operand is contiguous and of the
 * compute type's own dtype, else MAP_CHUNK elements at a time through buffers (the output
 * goes to input 0's buffer). */
static void map_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const tg_ufunc_ctx *c = vctx;
    const tg_pw_kind k = tg__pw_kind(c->dtype);
    const tg_dtype native = k == TG_PW_F32 ? TG_FLOAT32 : TG_FLOAT64;
    const int64_t es = k == TG_PW_F32 ? 4 : 8;
    const int nin = c->fns->nin;
    bool direct = true;
    for (int j = 0; j <= nin; j++) direct = direct && c->dtypes[j] == native && strides[j] == es;
    if (direct) {
        map_call(k, c, data[0], (void *const *)(data + 1), n);
        return;
    }
    double store[TG_UFUNC_MAX_IN][MAP_CHUNK]; /* room for MAP_CHUNK doubles or floats */
    void *bufs[TG_UFUNC_MAX_IN] = { store[0], store[1], store[2] };
    for (int64_t i0 = 0; i0 < n; i0 += MAP_CHUNK) {
        const int64_t m = n - i0 < MAP_CHUNK ? n - i0 : MAP_CHUNK;
        for (int j = 0; j < nin; j++)
            for (int64_t i = 0; i < m; i++)
                buf_load(k, bufs[j], i, data[1 + j] + (i0 + i) * strides[1 + j], c->dtypes[1 + j]);
        map_call(k, c, bufs[0], bufs, m);
        for (int64_t i = 0; i < m; i++)
            buf_store(k, bufs[0], i, data[0] + (i0 + i) * strides[0], c->dtypes[0]);
    }
}

/* ------------------------------------------------------------------ the runner */

static tg_iter_loop1d pick_loop(const tg_iter *it, const tg_ufunc_ctx *c)
{
    const tg_pw_kind k = tg__pw_kind(it->dtype);
    if ((k == TG_PW_F32 && c->loops->map_f32) || (k == TG_PW_F64 && c->loops->map_f64))
        return map_loop;
    if (tg__pw_force_reference || c->int_div) return ref_loop;
    const bool bool_out = c->fns->b32 || c->fns->b64 || c->fns->bi64;
    if (it->dtypes[0] != (bool_out ? TG_BOOL : it->dtype)) return ref_loop;
    for (int j = 1; j < it->nops; j++)
        if (it->dtypes[j] != it->dtype) return ref_loop;
    tg_iter_loop1d fast = NULL;
    switch (it->dtype) {
    case TG_FLOAT32: fast = c->loops->f32; break;
    case TG_FLOAT64: fast = c->loops->f64; break;
    case TG_INT64: fast = c->loops->i64; break;
    default: break;
    }
    return fast ? fast : ref_loop;
}

tg_tensor *tg__ufunc_cpu_run(tg_ufunc_call *call, const tg_ufunc_fns *fns,
                             const tg_ufunc_loops *loops)
{
    tg_iter it;
    call->backend = "cpu";
    if (call->meta(&it, call, 0) != 0) return NULL;
    /* Field by field: the parameters are filled for the compute dtype only and the loops read
     * the dtypes of the iteration's operands only; zeroing the rest would be most of a
     * 1-element call's cost here. */
    tg_ufunc_ctx ctx;
    ctx.fns = fns;
    ctx.loops = loops;
    ctx.dtype = it.dtype;
    ctx.int_div = call->int_div;
    ctx.zero_div = 0;
    for (int j = 0; j < it.nops && j <= TG_UFUNC_MAX_IN; j++) ctx.dtypes[j] = it.dtypes[j];
    tg__ufunc_params(call, it.dtype, &ctx.p);
    tg__iter_for_each(&it, pick_loop(&it, &ctx), &ctx);
    if (ctx.zero_div) {
        tg__iter_abort(&it);
        return tg__error(call->op, "ZeroDivisionError");
    }
    return tg__iter_finish(&it, 0);
}

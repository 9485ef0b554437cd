/* Factory kernels: fill_, arange (start_out), linspace.out, eye.m_out (the random fills are
 * random.c).
 *
 * Every kernel writes into an existing tensor (`self` or `out`) of any dtype and strides and
 * returns a new reference to it. Values are computed per element in PyTorch's accumulation
 * type and stored with the pointwise conversions (pointwise_convert.h). */
#include "core/core.h"
#include "pointwise_convert.h"
#include "tg_kutil.h"
#include "factory_checks.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/arange.h"
#include "kernels/eye.h"
#include "kernels/fill.h"
#include "kernels/linspace.h"

/* Element i (in row-major order) of t, for writes through any strides. */
static inline char *elem_ptr(const tg_tensor *t, int64_t i)
{
    return tg__k_data(t) + tg__k_offset(t, i) * (int64_t)tg_dtype_size(t->dtype);
}

/* ------------------------------------------------------------------ fill_ */

/* data[0] = destination; one element's bytes repeated. */
static void fill_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const tg_k_elem *c = vctx;
    char *d = data[0];
    const int64_t s = strides[0];
    switch (c->size) {
    case 1: {
        uint8_t v = c->bytes[0];
        for (int64_t i = 0; i < n; i++) *(uint8_t *)(d + i * s) = v;
        break;
    }
    case 2: {
        uint16_t v;
        memcpy(&v, c->bytes, 2);
        for (int64_t i = 0; i < n; i++) *(uint16_t *)(d + i * s) = v;
        break;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, c->bytes, 4);
        for (int64_t i = 0; i < n; i++) *(uint32_t *)(d + i * s) = v;
        break;
    }
    default: {
        uint64_t v;
        memcpy(&v, c->bytes, 8);
        for (int64_t i = 0; i < n; i++) *(uint64_t *)(d + i * s) = v;
        break;
    }
    }
}

/* fill_.Scalar: every element of self = value (converted with PyTorch's overflow check). */
tg_tensor *tg__cpu_fill_(tg_tensor *self, double value)
{
    if (tg__pw_check_scalar("fill_", value, self->dtype) != 0) return NULL;
    tg_k_elem ctx = { .size = tg_dtype_size(self->dtype) };
    tg__pw_store_f64((char *)ctx.bytes, self->dtype, value);
    tg_iter it;
    tg_tensor *outs[1] = { self };
    if (tg__iter_build(&it, "fill_", TG_ITER_KEEP_OUTPUT_DTYPE, outs, 1, NULL, 0) != 0) return NULL;
    tg__iter_for_each(&it, fill_loop, &ctx);
    return tg__iter_finish(&it, 0);
}

/* ------------------------------------------------------------------ arange */

/* Writes n values f(i) = start + i * step in the accumulation type of out's dtype: int64 for
 * integer dtypes, float for float16/bfloat16, double for float32/float64. */
static void arange_fill(tg_tensor *out, int64_t n, double start, double step, int64_t istart,
                        int64_t istep)
{
    const tg_dtype t = out->dtype;
    for (int64_t i = 0; i < n; i++) {
        char *p = elem_ptr(out, i);
        switch (t) {
        case TG_FLOAT16:
        case TG_BFLOAT16: tg__pw_store_f32(p, t, (float)start + (float)step * (float)i); break;
        case TG_FLOAT32:
        case TG_FLOAT64: tg__pw_store_f64(p, t, start + step * (double)i); break;
        default:
            tg__pw_store_i64(p, t, (int64_t)((uint64_t)istart + (uint64_t)istep * (uint64_t)i));
            break;
        }
    }
}

/* arange.start_out: out = [start, start + step, ...) up to end (exclusive), sized
 * ceil((end - start) / step). For integer dtypes start, end and step are truncated first
 * (so a step of 0.5 is "step must be nonzero"), as in PyTorch. */
tg_tensor *tg__cpu_arange_out(double start, double end, double step, tg_tensor *out)
{
    tg_arange_plan p;
    if (tg__arange_plan_make(&p, start, end, step, out->dtype) != 0) return NULL;
    if (tg__arange_resize_out(out, p.size) != 0) return NULL;
    arange_fill(out, p.size, p.start, p.step, p.istart, p.istep);
    tg__bump_version(out);
    return tg_retain(out);
}

/* ------------------------------------------------------------------ linspace */

/* linspace.out: `steps` values from start to end inclusive. As PyTorch: the first half counts
 * up from start, the second half down from end (so both ends are exact); integer dtypes use a
 * double step and truncate; float16/bfloat16 round the step to their own precision. */
tg_tensor *tg__cpu_linspace_out(double start, double end, int64_t steps, tg_tensor *out)
{
    if (tg__linspace_check(steps, out) != 0) return NULL;
    if (steps == 1) return tg__cpu_fill_(out, start); /* PyTorch: start, not end */
    const tg_dtype t = out->dtype;
    const int64_t halfway = steps / 2;
    switch (tg__pw_kind(t)) {
    case TG_PW_I64: {
        const int64_t s = tg__pw_float_to_int(start, t), e = tg__pw_float_to_int(end, t);
        /* start/end as the dtype holds them (e.g. int8 wraps) */
        char sb[8], eb[8];
        tg__pw_store_i64(sb, t, s);
        tg__pw_store_i64(eb, t, e);
        const double ds = (double)tg__pw_load_i64(sb, t), de = (double)tg__pw_load_i64(eb, t);
        const double step = steps > 1 ? (de - ds) / (double)(steps - 1) : 0;
        for (int64_t i = 0; i < steps; i++) {
            double v = i < halfway ? ds + step * (double)i : de - step * (double)(steps - i - 1);
            tg__pw_store_i64(elem_ptr(out, i), t, tg__pw_float_to_int(v, t));
        }
        break;
    }
    case TG_PW_F32: {
        /* start and end as the dtype holds them, then float arithmetic */
        char sb[4], eb[4];
        tg__pw_store_f64(sb, t, start);
        tg__pw_store_f64(eb, t, end);
        const float fs = tg__pw_load_f32(sb, t), fe = tg__pw_load_f32(eb, t);
        float step = steps > 1 ? (fe - fs) / (float)(steps - 1) : 0;
        if (t != TG_FLOAT32) { /* the step is a scalar_t too */
            char stb[4];
            tg__pw_store_f32(stb, t, step);
            step = tg__pw_load_f32(stb, t);
        }
        for (int64_t i = 0; i < steps; i++) {
            float v = i < halfway ? fs + step * (float)i : fe - step * (float)(steps - i - 1);
            tg__pw_store_f32(elem_ptr(out, i), t, v);
        }
        break;
    }
    case TG_PW_F64: {
        const double step = steps > 1 ? (end - start) / (double)(steps - 1) : 0;
        for (int64_t i = 0; i < steps; i++) {
            double v =
                i < halfway ? start + step * (double)i : end - step * (double)(steps - i - 1);
            tg__pw_store_f64(elem_ptr(out, i), t, v);
        }
        break;
    }
    }
    tg__bump_version(out);
    return tg_retain(out);
}

/* ------------------------------------------------------------------ eye */

/* eye.m_out: out (n, m) = 1 on the diagonal, 0 elsewhere. */
tg_tensor *tg__cpu_eye_out(int64_t n, int64_t m, tg_tensor *out)
{
    if (tg__eye_check(n, m, out) != 0) return NULL;
    tg_tensor *r = tg__cpu_fill_(out, 0);
    if (!r) return NULL;
    tg_release(r);
    const int64_t es = (int64_t)tg_dtype_size(out->dtype);
    char *base = tg__k_data(out);
    for (int64_t i = 0; i < n && i < m; i++)
        tg__pw_store_i64(base + i * (out->strides[0] + out->strides[1]) * es, out->dtype, 1);
    return tg_retain(out);
}

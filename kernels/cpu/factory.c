/* Factory and random-fill kernels: fill_, arange (start_out), linspace.out, eye.m_out,
 * uniform_, normal_, random_.
 *
 * Every kernel writes into an existing tensor (`self` or `out`) of any dtype and strides and
 * returns a new reference to it. Values are computed per element in PyTorch's accumulation
 * type and stored with the pointwise conversions (pointwise_convert.h). The random kernels fill
 * a contiguous buffer from the generator (one lock per batch of 256 draws) and copy it into a
 * non-contiguous self; their sequences are this library's own (not PyTorch's Philox/mt19937
 * streams), their distributions and range checks are PyTorch's. */
#include "core/core.h"
#include "pointwise_convert.h"
#include "tg_kutil.h"
#include "factory_checks.h"
/* The generated prototypes of the operators defined here (the compiler checks them). */
#include "kernels/arange.h"
#include "kernels/eye.h"
#include "kernels/fill.h"
#include "kernels/linspace.h"
#include "kernels/normal.h"
#include "kernels/random.h"
#include "kernels/uniform.h"

/* Element i (in row-major order) of t, for writes through any strides. */
static inline char *elem_ptr(const tg_tensor *t, int64_t i)
{
    return tg__k_data(t) + tg__k_offset(t, i) * (int64_t)tg_dtype_size(t->dtype);
}

/* ------------------------------------------------------------------ fill_ */

typedef struct fill_ctx {
    unsigned char bytes[8];
    int64_t size;
} fill_ctx;

/* data[0] = destination; one element's bytes repeated. */
static void fill_loop(char **data, const int64_t *strides, int64_t n, void *vctx)
{
    const fill_ctx *c = vctx;
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
    fill_ctx ctx = { .size = (int64_t)tg_dtype_size(self->dtype) };
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

/* ------------------------------------------------------------------ random fills */

/* Calls fn for batches of up to 256 contiguous elements of a tensor shaped like self, then
 * copies into self when it is not contiguous. fn(dst, dtype, n, r, state) writes n elements
 * from the 64-bit draws r[]: n of them, or n rounded up to even when `pairs` (Box-Muller). */
typedef void (*gen_batch_fn)(char *dst, tg_dtype t, int64_t n, const uint64_t *r,
                             const void *state);

static tg_tensor *random_fill(const char *op, tg_tensor *self, tg_generator *gen, bool pairs,
                              gen_batch_fn fn, const void *state)
{
    const bool direct = tg__is_contiguous(self);
    tg_tensor *buf = direct ? tg_retain(self) : tg__empty_like(op, self, self->dtype);
    if (!buf) return NULL;
    const int64_t n = tg__numel(buf), es = (int64_t)tg_dtype_size(buf->dtype);
    char *d = tg__k_data(buf);
    uint64_t r[256];
    for (int64_t i = 0; i < n; i += 256) {
        int64_t k = n - i < 256 ? n - i : 256;
        tg__random_u64_n(gen, r, pairs ? (k + 1) / 2 * 2 : k);
        fn(d + i * es, buf->dtype, k, r, state);
    }
    int rc = 0;
    if (direct) tg__bump_version(self);
    else rc = tg__copy_into(op, self, buf);
    tg_release(buf);
    return rc == 0 ? tg_retain(self) : NULL;
}

typedef struct uniform_state {
    double from, to;
} uniform_state;

static void uniform_batch(char *dst, tg_dtype t, int64_t n, const uint64_t *r, const void *vstate)
{
    const uniform_state *s = vstate;
    const int digits = tg__random_float_digits(t);
    const double scale = ldexp(1.0, -digits);
    const int64_t es = (int64_t)tg_dtype_size(t);
    for (int64_t i = 0; i < n; i++) {
        double u = (double)(r[i] >> (64 - digits)) * scale; /* [0, 1) on the dtype's grid */
        tg__pw_store_f64(dst + i * es, t, u * (s->to - s->from) + s->from);
    }
}

/* uniform_: self ~ U[from, to), floating dtypes only. */
tg_tensor *tg__cpu_uniform_(tg_tensor *self, double from, double to, tg_generator *generator)
{
    if (tg__uniform_check(self->dtype, from, to) != 0) return NULL;
    uniform_state s = { from, to };
    return random_fill("uniform_", self, generator, false, uniform_batch, &s);
}

typedef struct normal_state {
    double mean, std;
} normal_state;

/* Box-Muller on pairs of uniform draws; the odd element of a batch uses its own pair. */
static void normal_batch(char *dst, tg_dtype t, int64_t n, const uint64_t *r, const void *vstate)
{
    const normal_state *s = vstate;
    const int64_t npairs = (n + 1) / 2;
    const int64_t es = (int64_t)tg_dtype_size(t);
    for (int64_t p = 0; p < npairs; p++) {
        double u1 = 1.0 - (double)(r[2 * p] >> 11) * 0x1.0p-53; /* (0, 1]: log finite */
        double u2 = (double)(r[2 * p + 1] >> 11) * 0x1.0p-53;
        double rad = sqrt(-2.0 * log(u1)), th = 2.0 * M_PI * u2;
        tg__pw_store_f64(dst + 2 * p * es, t, s->mean + s->std * rad * cos(th));
        if (2 * p + 1 < n)
            tg__pw_store_f64(dst + (2 * p + 1) * es, t, s->mean + s->std * rad * sin(th));
    }
}

/* normal_: self ~ N(mean, std^2), floating dtypes only. */
tg_tensor *tg__cpu_normal_(tg_tensor *self, double mean, double std, tg_generator *generator)
{
    if (tg__normal_check(self->dtype, std, "cpu") != 0) return NULL;
    normal_state s = { mean, std };
    return random_fill("normal_", self, generator, true, normal_batch, &s);
}

typedef struct int_state {
    int64_t from;
    uint64_t range;
} int_state;

/* from + r mod range (range 0 stands for 2^64: every 64-bit value). */
static void int_batch(char *dst, tg_dtype t, int64_t n, const uint64_t *r, const void *vstate)
{
    const int_state *s = vstate;
    const int64_t es = (int64_t)tg_dtype_size(t);
    for (int64_t i = 0; i < n; i++) {
        uint64_t off = s->range ? r[i] % s->range : r[i];
        int64_t v = (int64_t)((uint64_t)s->from + off);
        if (tg_dtype_is_floating(t)) tg__pw_store_f64(dst + i * es, t, (double)v);
        else tg__pw_store_i64(dst + i * es, t, v);
    }
}

/* random_.from: self ~ uniform integers in [from, to), or [from, max of the dtype] when to is
 * None (2^mantissa digits for floating dtypes); from = INT64_MIN with to None means every
 * 64-bit value (int64 and floating dtypes only). */
tg_tensor *tg__cpu_random_(tg_tensor *self, int64_t from, tg_opt_int to, tg_generator *generator)
{
    int_state s = { from, 0 };
    if (tg__random_range(self->dtype, tg__k_meta_name(self->dtype), from, to, "cpu", &s.range) != 0)
        return NULL;
    return random_fill("random_", self, generator, false, int_batch, &s);
}

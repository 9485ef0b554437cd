/* softmax and log_softmax (_softmax.out / _log_softmax.out).
 *
 * self is viewed as [outer, n, inner] around `dim`. Numerically stable: each slice subtracts
 * its maximum before exponentiating, so exp never overflows and the largest term is 1.
 *
 * Reference path (any float dtype and strides): softmax_ref, computing in double.
 * Fast path: float32 with the reduced dim contiguous (stride 1, e.g. the last dim of a
 * contiguous tensor): three fused passes over each row, parallel over rows:
 *   softmax:     m = max(x);  out = exp(x - m) and s = sum(out);  out *= 1 / s
 *   log_softmax: m = max(x);  s = sum(exp(x - m));               out = x - m - log(s)
 * The rows are short enough (a few KB) that passes 2 and 3 hit L1/L2, so the row is read from
 * memory once and written once. exp is exp256_nonpos, the AVX2 form of the pointwise
 * engineer's tg__pw_exp_f32 (same algorithm and constants) specialised to x <= 0; rows whose
 * max is not finite, and vector tails, use tg__pw_exp_f32 itself. */
#include "tg_kutil.h"
#include "pointwise_convert.h"
#include "pointwise_scalar.h"
#include "softmax_checks.h"

#include <immintrin.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tg_kernels.h"

typedef struct sm_job {
    bool log;
    tg_dtype dt;
    const char *x;
    char *y;
    int64_t n, inner;                   /* slice length, inner extent */
    int64_t xs_outer, xs_dim, xs_inner; /* self strides (elements) */
    int64_t ys_outer, ys_dim, ys_inner; /* out strides (elements) */
} sm_job;

/* ------------------------------------------------------------------ reference path */

/* One slice: n elements at x (stride xs) into y (stride ys), in double. */
static void softmax_ref_slice(const sm_job *j, const char *x, char *y)
{
    size_t e = tg_dtype_size(j->dt);
    int64_t xs = j->xs_dim * (int64_t)e, ys = j->ys_dim * (int64_t)e;
    double m = -INFINITY, s = 0;
    for (int64_t k = 0; k < j->n; k++) {
        double v = tg__pw_load_f64(x + k * xs, j->dt);
        if (v > m || v != v) m = v;
        if (m != m) break;
    }
    for (int64_t k = 0; k < j->n; k++) s += exp(tg__pw_load_f64(x + k * xs, j->dt) - m);
    double ls = log(s);
    for (int64_t k = 0; k < j->n; k++) {
        double v = tg__pw_load_f64(x + k * xs, j->dt) - m;
        tg__pw_store_f64(y + k * ys, j->dt, j->log ? v - ls : exp(v) / s);
    }
}

/* ------------------------------------------------------------------ float32 rows */

/* e^x for x <= 0 (softmax feeds it x - max, never NaN: rows with a non-finite max take the
 * scalar path). The algorithm and constants of tg__pw_exp_f32: n = round(x / ln 2),
 * r = x - n ln 2 (Cody-Waite), e^r by Cephes' polynomial, times 2^n. Restricting the domain
 * drops the overflow, NaN and split-scale (subnormal) cases: n is in [-126, 0] so 2^n is one
 * normal exponent, and x below -87.34 (where e^x < FLT_MIN) gives 0. Half the instructions of
 * the general version; results agree with it wherever e^x >= FLT_MIN. */
__attribute__((target("avx2,fma"))) static inline __m256 exp256_nonpos(__m256 x)
{
    const __m256 lo = _mm256_set1_ps(-87.33654475f); /* ln(FLT_MIN) */
    const __m256 magic = _mm256_set1_ps(12582912.0f);
    __m256 xc = _mm256_max_ps(x, lo);
    __m256 t = _mm256_fmadd_ps(xc, _mm256_set1_ps(1.44269504088896341f), magic);
    __m256i n = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(magic));
    __m256 nf = _mm256_sub_ps(t, magic);
    __m256 r = _mm256_fnmadd_ps(nf, _mm256_set1_ps(0.693359375f), xc);
    r = _mm256_fnmadd_ps(nf, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(_mm256_mul_ps(p, r), r, _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    __m256 scale =
        _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n, _mm256_set1_epi32(127)), 23));
    return _mm256_and_ps(_mm256_mul_ps(p, scale), _mm256_cmp_ps(x, lo, _CMP_GE_OQ));
}

__attribute__((target("avx2,fma"))) static inline float hsum256(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

/* Row max; NaN anywhere gives NaN. */
__attribute__((target("avx2,fma"))) static float row_max_avx2(const float *x, int64_t n)
{
    __m256 m0 = _mm256_set1_ps(-INFINITY), m1 = m0, bad = _mm256_setzero_ps();
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
        __m256 a = _mm256_loadu_ps(x + k), b = _mm256_loadu_ps(x + k + 8);
        m0 = _mm256_max_ps(m0, a);
        m1 = _mm256_max_ps(m1, b);
        bad = _mm256_or_ps(bad, _mm256_cmp_ps(a, b, _CMP_UNORD_Q));
    }
    m0 = _mm256_max_ps(m0, m1);
    float t[8], m = -INFINITY;
    _mm256_storeu_ps(t, m0);
    for (int i = 0; i < 8; i++) m = t[i] > m ? t[i] : m;
    if (_mm256_movemask_ps(bad)) return NAN;
    for (; k < n; k++) {
        if (x[k] != x[k]) return NAN;
        m = x[k] > m ? x[k] : m;
    }
    return m;
}

/* Portable float32 row, the same three passes. */
static void softmax_row_f32(const float *x, float *y, int64_t n, bool lg)
{
    float m = -INFINITY, s = 0;
    for (int64_t k = 0; k < n; k++) {
        if (x[k] != x[k]) {
            m = NAN;
            break;
        }
        m = x[k] > m ? x[k] : m;
    }
    for (int64_t k = 0; k < n; k++) {
        float e = tg__pw_exp_f32(x[k] - m);
        if (!lg) y[k] = e;
        s += e;
    }
    float c = m + logf(s), r = 1.0f / s;
    for (int64_t k = 0; k < n; k++) y[k] = lg ? x[k] - c : y[k] * r;
}

/* One float32 row. `tmp` (n floats, L1-resident) holds exp(x - m) between passes 2 and 3 so
 * that y is written exactly once, with non-temporal stores when y is 32-byte aligned: the row
 * never has to be read into the cache before being overwritten (no write-allocate traffic). */
__attribute__((target("avx2,fma"))) static void softmax_row_avx2(const float *x, float *y,
                                                                 float *tmp, int64_t n, bool lg)
{
    float m = row_max_avx2(x, n);
    if (!isfinite(m)) { /* NaN, or an infinite max: the general exp handles those rows */
        softmax_row_f32(x, y, n, lg);
        return;
    }
    __m256 vm = _mm256_set1_ps(m), s0 = _mm256_setzero_ps(), s1 = s0;
    float *e = lg ? NULL : tmp;
    int64_t k = 0;
    for (; k + 16 <= n; k += 16) {
        __m256 a = exp256_nonpos(_mm256_sub_ps(_mm256_loadu_ps(x + k), vm));
        __m256 b = exp256_nonpos(_mm256_sub_ps(_mm256_loadu_ps(x + k + 8), vm));
        if (e) {
            _mm256_storeu_ps(e + k, a);
            _mm256_storeu_ps(e + k + 8, b);
        }
        s0 = _mm256_add_ps(s0, a);
        s1 = _mm256_add_ps(s1, b);
    }
    float s = hsum256(_mm256_add_ps(s0, s1));
    for (; k < n; k++) {
        float v = tg__pw_exp_f32(x[k] - m);
        if (e) e[k] = v;
        s += v;
    }
    bool nt = ((uintptr_t)y & 31) == 0;
    if (lg) {
        float c = m + logf(s);
        __m256 vc = _mm256_set1_ps(c);
        for (k = 0; k + 8 <= n; k += 8) {
            __m256 v = _mm256_sub_ps(_mm256_loadu_ps(x + k), vc);
            if (nt) _mm256_stream_ps(y + k, v);
            else _mm256_storeu_ps(y + k, v);
        }
        for (; k < n; k++) y[k] = x[k] - c;
    } else {
        float r = 1.0f / s;
        __m256 vr = _mm256_set1_ps(r);
        for (k = 0; k + 8 <= n; k += 8) {
            __m256 v = _mm256_mul_ps(_mm256_loadu_ps(e + k), vr);
            if (nt) _mm256_stream_ps(y + k, v);
            else _mm256_storeu_ps(y + k, v);
        }
        for (; k < n; k++) y[k] = e[k] * r;
    }
}

static bool have_avx2_fma(void)
{
    static int cached = -1;
    if (cached < 0) cached = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return cached;
}

/* ------------------------------------------------------------------ drivers */

static bool fast_rows(const sm_job *j)
{
    return j->dt == TG_FLOAT32 && j->xs_dim == 1 && j->ys_dim == 1;
}

static void slices_task(int64_t b, int64_t e, void *ctx)
{
    const sm_job *j = ctx;
    size_t es = tg_dtype_size(j->dt);
    bool avx = have_avx2_fma() && fast_rows(j);
    float stack_tmp[4096];
    float *tmp = stack_tmp;
    if (avx && j->n > 4096 && !(tmp = malloc(sizeof(float) * (size_t)j->n))) avx = false;
    for (int64_t s = b; s < e; s++) {
        int64_t o = s / j->inner, i = s % j->inner;
        const char *x = j->x + (o * j->xs_outer + i * j->xs_inner) * (int64_t)es;
        char *y = j->y + (o * j->ys_outer + i * j->ys_inner) * (int64_t)es;
        if (!fast_rows(j)) softmax_ref_slice(j, x, y);
        else if (avx) softmax_row_avx2((const float *)x, (float *)y, tmp, j->n, j->log);
        else softmax_row_f32((const float *)x, (float *)y, j->n, j->log);
    }
    if (avx) _mm_sfence(); /* order the non-temporal stores before the caller reads y */
    if (tmp != stack_tmp) free(tmp);
}

/* Strides of t viewed as [outer, n, inner] around d (outer/inner collapsed when possible;
 * returns false when they do not collapse, in which case the caller works on a copy). */
static bool view3(const tg_tensor *t, int64_t d, int64_t *so, int64_t *sd, int64_t *si)
{
    *sd = t->ndim ? t->strides[d] : 1;
    *si = 1;
    *so = 1;
    /* inner dims (after d) must collapse to one stride; likewise outer dims (before d) */
    int64_t expect = -1;
    for (int64_t k = t->ndim - 1; k > d; k--) {
        if (t->sizes[k] == 1) continue;
        if (expect < 0) *si = t->strides[k];
        else if (t->strides[k] != expect) return false;
        expect = t->strides[k] * t->sizes[k];
    }
    expect = -1;
    for (int64_t k = d - 1; k >= 0; k--) {
        if (t->sizes[k] == 1) continue;
        if (expect < 0) *so = t->strides[k];
        else if (t->strides[k] != expect) return false;
        expect = t->strides[k] * t->sizes[k];
    }
    return true;
}

static tg_tensor *softmax_common(const char *op, bool lg, tg_tensor *self, int64_t dim,
                                 bool half_to_float, tg_tensor *out)
{
    int64_t d = tg__wrap_dim(op, dim, self->ndim);
    if (d < 0) return NULL;
    if (tg__softmax_check_dtype(op, lg, self, d) != 0) return NULL;
    if (half_to_float)
        return tg__error(op, "%s with half to float conversion is not supported on CPU",
                         lg ? "log_softmax" : "softmax");
    tg_tensor *res = tg__k_prepare_out(op, out, self->sizes, self->ndim, self->dtype);
    if (!res) return NULL;
    int64_t n = self->ndim ? self->sizes[d] : 1;
    int64_t numel = tg__numel(self);
    if (numel == 0) return res;
    sm_job j = { lg, self->dtype, tg__k_data(self), tg__k_data(res), n, 1, 0, 0, 0, 0, 0, 0 };
    for (int64_t k = d + 1; k < self->ndim; k++) j.inner *= self->sizes[k];
    bool ok = view3(self, d, &j.xs_outer, &j.xs_dim, &j.xs_inner) &&
              view3(res, d, &j.ys_outer, &j.ys_dim, &j.ys_inner);
    if (!ok) {
        /* strides that do not collapse to [outer, n, inner]: walk slices by linear index */
        size_t es = tg_dtype_size(self->dtype);
        int64_t nslices = numel / n;
        for (int64_t s = 0; s < nslices; s++) {
            int64_t o = s / j.inner, i = s % j.inner, lin = (o * n) * j.inner + i;
            sm_job one = j;
            one.xs_dim = self->strides[d];
            one.ys_dim = res->strides[d];
            softmax_ref_slice(&one, j.x + tg__k_offset(self, lin) * (int64_t)es,
                              j.y + tg__k_offset(res, lin) * (int64_t)es);
        }
    } else {
        int64_t slices = numel / n;
        int64_t grain = n >= tg__grain_size() ? 1 : tg__grain_size() / n;
        tg__parallel_for(slices, grain, slices_task, &j);
    }
    if (out) tg__bump_version(res);
    return res;
}

/* self is any shape; out has self's shape; softmax along dim. */
tg_tensor *tg__cpu_softmax_out(tg_tensor *self, int64_t dim, bool half_to_float, tg_tensor *out)
{
    return softmax_common("_softmax", false, self, dim, half_to_float, out);
}

tg_tensor *tg__cpu_log_softmax_out(tg_tensor *self, int64_t dim, bool half_to_float, tg_tensor *out)
{
    return softmax_common("_log_softmax", true, self, dim, half_to_float, out);
}

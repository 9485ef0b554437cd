/* The test harness every area shares (the kt_ vocabulary): building tensors from arrays,
 * reading them back, comparing with a stated metric, errors by substring, and the leak check.
 * kt_cuda.h adds the device side, kt_case.h the value table (tests/values/). All static inline:
 * each test file compiles on its own. */
#ifndef KT_UTIL_H
#define KT_UTIL_H

#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg_ops.h"

/* A tensor of `dtype` holding the given float64 values (converted), contiguous. */
/* A fresh directory for one test's files (malloc'd path), and its removal with what is in it. */
static inline char *kt_tmpdir(void)
{
    char *d = strdup("/tmp/tg_test_XXXXXX");
    cr_assert(d && mkdtemp(d));
    return d;
}
static inline void kt_rmdir(char *d)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", d);
    cr_expect_eq(system(cmd), 0);
    free(d);
}

/* `call` fails with exactly the error `msg`; the error is cleared before and after. */
#define KT_EXPECT_ERROR(call, msg)                                                  \
    do {                                                                            \
        tg_clear_error();                                                           \
        cr_expect(!(call));                                                         \
        cr_expect(tg_last_error() && strcmp(tg_last_error(), msg) == 0, "got '%s'", \
                  tg_last_error() ? tg_last_error() : "(none)");                    \
        tg_clear_error();                                                           \
    } while (0)

static inline tg_tensor *kt_tensor(const double *v, const int64_t *shape, int64_t ndim,
                                   tg_dtype dtype)
{
    int64_t n = 1;
    for (int64_t i = 0; i < ndim; i++) n *= shape[i];
    if (dtype == TG_FLOAT64 || !v) return tg_tensor_from_data(v, shape, ndim, dtype);
    char *p = malloc(tg_dtype_size(dtype) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) {
        switch (dtype) {
        case TG_FLOAT32: ((float *)p)[i] = (float)v[i]; break;
        case TG_INT64: ((int64_t *)p)[i] = (int64_t)v[i]; break;
        case TG_INT32: ((int32_t *)p)[i] = (int32_t)v[i]; break;
        case TG_UINT8: ((uint8_t *)p)[i] = (uint8_t)v[i]; break;
        case TG_INT8: ((int8_t *)p)[i] = (int8_t)v[i]; break;
        case TG_INT16: ((int16_t *)p)[i] = (int16_t)v[i]; break;
        case TG_BOOL: ((bool *)p)[i] = v[i] != 0; break;
        case TG_BFLOAT16: { /* round to nearest even */
            float f = (float)v[i];
            uint32_t u;
            memcpy(&u, &f, 4);
            u += 0x7fff + ((u >> 16) & 1);
            ((uint16_t *)p)[i] = (uint16_t)(u >> 16);
            break;
        }
        default: { /* float16 */ _Float16 x = (_Float16)v[i]; memcpy(p + 2 * i, &x, 2);
        }
        }
    }
    tg_tensor *r = tg_tensor_from_data(p, shape, ndim, dtype);
    free(p);
    return r;
}

static inline tg_tensor *kt_tensor_i64(const int64_t *v, const int64_t *shape, int64_t ndim)
{
    return tg_tensor_from_data(v, shape, ndim, TG_INT64);
}

/* Releases the n tensors of ts in order (NULL entries too: tg_release(NULL) is a no-op). */
static inline void kt_release_n(tg_tensor *const *ts, size_t n)
{
    for (size_t i = 0; i < n; i++) tg_release(ts[i]);
}

/* kt_release_all(a, b, c): tg_release of each tensor named, in order. */
#define kt_release_all(...)                           \
    kt_release_n((tg_tensor *const[]){ __VA_ARGS__ }, \
                 sizeof((tg_tensor *const[]){ __VA_ARGS__ }) / sizeof(tg_tensor *))

/* A kernel's three results released. */
static inline void kt_release_tensors3(tg_tensors3 r) { kt_release_all(r.r0, r.r1, r.r2); }

/* The number of elements of a static array. */
#define KT_NUMEL(a) ((int64_t)(sizeof(a) / sizeof((a)[0])))

/* The number of elements of a shape (1 for none). */
static inline int64_t kt_shape_numel(const int64_t *shape, int64_t ndim)
{
    int64_t r = 1;
    for (int64_t i = 0; i < ndim; i++) r *= shape[i];
    return r;
}

/* Uniform random doubles in [lo, hi) from a fixed LCG (reproducible, no library RNG). */
static inline void kt_fill_random(double *v, int64_t n, uint64_t seed, double lo, double hi)
{
    uint64_t s = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        v[i] = lo + (hi - lo) * (double)(s >> 11) * (1.0 / 9007199254740992.0);
    }
}

/* Reads a tensor's elements (any strides) as doubles; caller frees. */
static inline double *kt_values(const tg_tensor *t)
{
    int64_t n = tg_tensor_numel(t);
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    cr_assert(tg_tensor_to_doubles(t, v, n) == 0, "to_doubles: %s", tg_last_error());
    return v;
}

static inline void kt_assert_shape(const tg_tensor *t, const int64_t *shape, int64_t ndim)
{
    cr_assert_eq(tg_tensor_dim(t), ndim, "ndim %lld, expected %lld", (long long)tg_tensor_dim(t),
                 (long long)ndim);
    for (int64_t i = 0; i < ndim; i++)
        cr_assert_eq(tg_tensor_size(t, i), shape[i], "size(%lld) = %lld, expected %lld",
                     (long long)i, (long long)tg_tensor_size(t, i), (long long)shape[i]);
}

/* Metric: every element satisfies |got - want| <= atol + rtol * |want|; NaN must match NaN and
 * infinities must match exactly. */
static inline void kt_assert_close(const tg_tensor *t, const double *want, int64_t n, double rtol,
                                   double atol, const char *what)
{
    cr_assert_eq(tg_tensor_numel(t), n, "%s: numel %lld, expected %lld", what,
                 (long long)tg_tensor_numel(t), (long long)n);
    double *got = kt_values(t);
    for (int64_t i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        if (isnan(w)) {
            cr_assert(isnan(g), "%s[%lld]: got %.17g, expected nan", what, (long long)i, g);
            continue;
        }
        if (isinf(w)) {
            cr_assert(g == w, "%s[%lld]: got %.17g, expected %g", what, (long long)i, g, w);
            continue;
        }
        cr_assert(fabs(g - w) <= atol + rtol * fabs(w),
                  "%s[%lld]: got %.17g, expected %.17g (rtol %g, atol %g)", what, (long long)i, g,
                  w, rtol, atol);
    }
    free(got);
}

/* The .grad of leaf against want, as kt_assert_close (inside a scope, which owns it). */
static inline void kt_assert_grad(const tg_tensor *leaf, const double *want, int64_t n, double rtol,
                                  double atol, const char *what)
{
    tg_tensor *g = tg_tensor_grad(leaf);
    cr_assert(g, "%s: no gradient", what);
    kt_assert_close(g, want, n, rtol, atol, what); /* g belongs to the open scope */
}

/* d<v, f(x)>/dx against want, as kt_assert_close: x a float64 leaf of the given shape holding
 * xv, v of that shape too (f keeps it) holding vv. Everything made is released by a scope of its own. */
static inline void kt_assert_vjp(tg_tensor *(*f)(tg_tensor *x), const double *xv, const double *vv,
                                 const int64_t *shape, int64_t ndim, const double *want,
                                 double rtol, double atol, const char *what)
{
    tg_scope_begin();
    tg_tensor *x = tg_tensor_set_requires_grad(kt_tensor(xv, shape, ndim, TG_FLOAT64), true);
    tg_tensor *v = kt_tensor(vv, shape, ndim, TG_FLOAT64);
    tg_tensor *y = f(x), *gx = NULL;
    cr_assert(y, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_grad(TG_TENSORS(y), TG_TENSORS(x), &gx, .grad_outputs = TG_TENSORS(v)), 0,
                 "%s: %s", what, tg_last_error());
    kt_assert_close(gx, want, kt_shape_numel(shape, ndim), rtol, atol, what);
    tg_scope_end(); /* releases everything made inside */
}

/* d<w, f(g, x)>/dg and /dx (a backward operator's own derivatives: double backward) against
 * want_g (NULL: not checked) and want_x, as kt_assert_close: g, x and w 1-d float64 of n values
 * (w NULL: ones), g and x leaves. Everything made is released by a scope of its own. */
static inline void kt_assert_second(tg_tensor *(*f)(tg_tensor *g, tg_tensor *x), const double *gv,
                                    const double *xv, int64_t n, const double *wv,
                                    const double *want_g, const double *want_x, double rtol,
                                    double atol, const char *what)
{
    tg_scope_begin();
    tg_tensor *g = tg_tensor_set_requires_grad(kt_tensor(gv, &n, 1, TG_FLOAT64), true);
    tg_tensor *x = tg_tensor_set_requires_grad(kt_tensor(xv, &n, 1, TG_FLOAT64), true);
    tg_tensor *w = wv ? kt_tensor(wv, &n, 1, TG_FLOAT64) : tg_ones(TG_INTS(n), .dtype = TG_FLOAT64);
    tg_tensor *y = f(g, x), *grads[2] = { NULL, NULL };
    cr_assert(y, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_grad(TG_TENSORS(y), TG_TENSORS(g, x), grads, .grad_outputs = TG_TENSORS(w)), 0,
                 "%s: %s", what, tg_last_error());
    char w2[128];
    if (want_g) {
        snprintf(w2, sizeof w2, "%s: d/d grad_output", what);
        kt_assert_close(grads[0], want_g, n, rtol, atol, w2);
    }
    snprintf(w2, sizeof w2, "%s: d/d self", what);
    kt_assert_close(grads[1], want_x, n, rtol, atol, w2);
    tg_scope_end();
}

/* r, an operator's result, is its input x itself (a new reference to it), then released. */
static inline void kt_assert_input_itself(tg_tensor *r, const tg_tensor *x, const char *what)
{
    cr_assert_eq(r, x, "%s: input itself", what);
    tg_release(r);
}

/* The last error contains `needle`; then cleared. */
static inline void kt_assert_error(const char *needle)
{
    const char *e = tg_last_error();
    cr_assert(e, "expected an error containing \"%s\", got none", needle);
    cr_assert(strstr(e, needle), "error \"%s\" does not contain \"%s\"", e, needle);
    tg_clear_error();
}

/* A refused call: its result r is NULL and the error contains `needle` (then cleared). */
static inline void kt_expect_error(const void *r, const char *needle)
{
    cr_assert_null(r, "accepted: expected the error \"%s\"", needle);
    kt_assert_error(needle);
}

/* The last error is exactly `want` (a non-fatal check), then cleared. */
static inline void kt_expect_last_error(const char *want)
{
    const char *e = tg_last_error();
    cr_expect(e != NULL, "expected the error \"%s\", got none", want);
    if (e) cr_expect_str_eq(e, want);
    tg_clear_error();
}

/* A refused call (non-fatal checks): its result r is NULL and the last error is exactly `want`
 * (then cleared). */
static inline void kt_expect_refusal(const void *r, const char *want)
{
    cr_expect_null(r, "accepted: expected the error \"%s\"", want);
    kt_expect_last_error(want);
}

/* got and want (any devices, any strides) have the same dtype and shape, and every element
 * satisfies |got - want| <= atol + rtol * |want|, NaN only against NaN, infinities equal. */
static inline void kt_assert_same_values(const tg_tensor *got, const tg_tensor *want, double rtol,
                                         double atol, const char *what)
{
    cr_assert(got, "%s: %s", what, tg_last_error());
    cr_assert(want, "%s (reference): %s", what, tg_last_error());
    cr_assert_eq(tg_tensor_dtype(got), tg_tensor_dtype(want), "%s: dtype %s, reference %s", what,
                 tg_dtype_name(tg_tensor_dtype(got)), tg_dtype_name(tg_tensor_dtype(want)));
    kt_assert_shape(got, tg_tensor_sizes(want), tg_tensor_dim(want));
    int64_t n = tg_tensor_numel(want);
    double *g = kt_values(got), *w = kt_values(want);
    for (int64_t i = 0; i < n; i++) {
        if (isnan(w[i]) || isnan(g[i])) {
            cr_assert(isnan(w[i]) && isnan(g[i]), "%s: element %lld is %g, reference %g", what,
                      (long long)i, g[i], w[i]);
            continue;
        }
        if (isinf(w[i]) || isinf(g[i])) {
            cr_assert_eq(g[i], w[i], "%s: element %lld is %g, reference %g", what, (long long)i,
                         g[i], w[i]);
            continue;
        }
        cr_assert(fabs(g[i] - w[i]) <= atol + rtol * fabs(w[i]),
                  "%s: element %lld is %.17g, reference %.17g (rtol %g, atol %g)", what,
                  (long long)i, g[i], w[i], rtol, atol);
    }
    free(g);
    free(w);
}

/* a and b have the same dtype, shape and elements bit for bit (the sign of zero too, NaN to
 * NaN): two computations that must not differ at all (a fast path and the reference loop). */
static inline void kt_assert_identical(const tg_tensor *a, const tg_tensor *b, const char *what)
{
    cr_assert(a && b, "%s: %s", what, tg_last_error());
    cr_assert_eq(tg_tensor_dtype(a), tg_tensor_dtype(b), "%s: dtypes differ", what);
    kt_assert_shape(a, tg_tensor_sizes(b), tg_tensor_dim(b));
    int64_t n = tg_tensor_numel(b);
    double *x = kt_values(a), *y = kt_values(b);
    for (int64_t i = 0; i < n; i++)
        cr_assert((isnan(x[i]) && isnan(y[i])) || (x[i] == y[i] && signbit(x[i]) == signbit(y[i])),
                  "%s[%lld]: %.17g vs %.17g", what, (long long)i, x[i], y[i]);
    free(x);
    free(y);
}

/* Leak check: every test records the live counts first and compares at the end. */
typedef struct kt_live {
    int64_t tensors, storages;
} kt_live;
static inline kt_live kt_live_now(void)
{
    return (kt_live){ tg_live_tensors(), tg_live_storages() };
}
/* The same check without ending the test, naming what leaked (a case's label). */
static inline void kt_expect_no_leak(kt_live base, const char *what)
{
    cr_expect_eq(tg_live_tensors(), base.tensors, "%s: leaked %lld tensors", what,
                 (long long)(tg_live_tensors() - base.tensors));
    cr_expect_eq(tg_live_storages(), base.storages, "%s: leaked %lld storages", what,
                 (long long)(tg_live_storages() - base.storages));
}
static inline void kt_assert_no_leak(kt_live base)
{
    cr_assert_eq(tg_live_tensors(), base.tensors, "leaked %lld tensors",
                 (long long)(tg_live_tensors() - base.tensors));
    cr_assert_eq(tg_live_storages(), base.storages, "leaked %lld storages",
                 (long long)(tg_live_storages() - base.storages));
}

/* The indices 0 .. n - 1 as a ParameterizedTest's parameters: a table's case indices (an index
 * survives the copy into the test's process, a pointer into the table would not). */
#define KT_MAX_PARAMS 4096
static inline struct criterion_test_params kt_index_params(int n)
{
    static int indices[KT_MAX_PARAMS];
    cr_assert_leq(n, KT_MAX_PARAMS, "raise KT_MAX_PARAMS");
    for (int i = 0; i < n; i++) indices[i] = i;
    return cr_make_param_array(int, indices, (size_t)n);
}

#endif

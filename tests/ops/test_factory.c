/* Factories and random fills: fill_/zero_, zeros/ones/full (+ out=, _like), empty/empty_like
 * geometry, arange, linspace, eye, rand/randn/randint (+ generator, _like), uniform_, normal_,
 * random_. Expected values are PyTorch 1.13's (checked by hand with /usr/bin/python3 and torch;
 * each is small enough to read in the test). Random tensors are checked for range, dtype,
 * reproducibility under a seed and, for large ones, mean and spread (bounds of 5 standard
 * errors). Every test checks tg_live_tensors() returns to its starting value. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kt_util.h"
#include "tg_cover.h"

TG_COVERS("empty.memory_format", "empty_like", "fill_.Scalar", "zero_", "zeros", "zeros.out",
          "zeros_like", "ones", "ones.out", "ones_like", "full", "full.out", "full_like", "arange",
          "arange.start", "arange.start_step", "arange.out", "arange.start_out", "linspace",
          "linspace.out", "eye", "eye.m", "eye.out", "eye.m_out", "uniform_", "normal_",
          "random_.from", "rand", "rand.generator", "rand_like", "randn", "randn.generator",
          "randn_like", "randint", "randint.low", "randint_like", "randint_like.low_dtype");

/* t has dtype `dt`, shape (n,) or given, and the values `want`, exactly. */
static void expect_values(tg_tensor *t, tg_dtype dt, const double *want, int64_t n)
{
    cr_assert(t, "NULL: %s", tg_last_error());
    cr_assert_eq(tg_tensor_dtype(t), dt, "dtype %s, expected %s", tg_dtype_name(tg_tensor_dtype(t)),
                 tg_dtype_name(dt));
    cr_assert_eq(tg_tensor_numel(t), n, "numel %lld, expected %lld", (long long)tg_tensor_numel(t),
                 (long long)n);
    double *v = kt_values(t);
    for (int64_t i = 0; i < n; i++)
        cr_assert(v[i] == want[i] || (isnan(v[i]) && isnan(want[i])),
                  "element %lld: %.17g, expected %.17g", (long long)i, v[i], want[i]);
    free(v);
}

/* Like expect_values with a relative bound (float results computed in another order). */
static void expect_close(tg_tensor *t, tg_dtype dt, const double *want, int64_t n, double rtol)
{
    cr_assert(t, "NULL: %s", tg_last_error());
    cr_assert_eq(tg_tensor_dtype(t), dt);
    cr_assert_eq(tg_tensor_numel(t), n);
    double *v = kt_values(t);
    for (int64_t i = 0; i < n; i++)
        cr_assert(fabs(v[i] - want[i]) <= rtol * fabs(want[i]) + 1e-12,
                  "element %lld: %.17g, expected %.17g", (long long)i, v[i], want[i]);
    free(v);
}

#define LEAK_CHECK_BEGIN int64_t live_ = tg_live_tensors()
#define LEAK_CHECK_END                                            \
    cr_assert_eq(tg_live_tensors(), live_, "leaked %lld tensors", \
                 (long long)(tg_live_tensors() - live_))

Test(factory, fill_every_dtype_and_overflow)
{
    LEAK_CHECK_BEGIN;
    for (tg_dtype dt = TG_BOOL; dt < TG_NUM_DTYPES; dt++) {
        tg_tensor *t = tg_empty(TG_INTS(2, 3), .dtype = dt);
        tg_release(tg_fill_(t, 5));
        double want[6] = { 5, 5, 5, 5, 5, 5 };
        if (dt == TG_BOOL)
            for (int i = 0; i < 6; i++) want[i] = 1;
        expect_values(t, dt, want, 6);
        tg_release(tg_zero_(t));
        double zero[6] = { 0 };
        expect_values(t, dt, zero, 6);
        tg_release(t);
    }
    tg_tensor *u8 = tg_zeros(TG_INTS(2), .dtype = TG_UINT8),
              *i32 = tg_zeros(TG_INTS(2), .dtype = TG_INT32);
    tg_tensor *h = tg_zeros(TG_INTS(2), .dtype = TG_FLOAT16), *f = tg_zeros(TG_INTS(2));
    kt_expect_error(tg_fill_(u8, 300),
                    "value cannot be converted to type uint8_t without overflow");
    kt_expect_error(tg_fill_(u8, -256),
                    "value cannot be converted to type uint8_t without overflow");
    kt_expect_error(tg_fill_(u8, 255.5),
                    "value cannot be converted to type uint8_t without overflow");
    kt_expect_error(tg_fill_(i32, INFINITY),
                    "value cannot be converted to type int without overflow");
    kt_expect_error(tg_fill_(h, 70000),
                    "value cannot be converted to type at::Half without overflow");
    kt_expect_error(tg_fill_(f, 1e300), "value cannot be converted to type float without overflow");
    tg_release(tg_fill_(u8, -1));
    expect_values(u8, TG_UINT8, (double[]){ 255, 255 }, 2);
    tg_release(tg_fill_(i32, 2.7));
    expect_values(i32, TG_INT32, (double[]){ 2, 2 }, 2);
    tg_release(tg_fill_(h, INFINITY));
    expect_values(h, TG_FLOAT16, (double[]){ INFINITY, INFINITY }, 2);
    /* a strided view: only its elements change */
    tg_tensor *m = tg_zeros(TG_INTS(3, 4));
    tg_tensor *col = tg_select(m, 1, 2);
    tg_release(tg_fill_(col, 7));
    double *mv = kt_values(m);
    for (int i = 0; i < 12; i++) cr_assert_eq(mv[i], i % 4 == 2 ? 7 : 0);
    free(mv);
    kt_release_all(u8, i32, h, f, m, col);
    LEAK_CHECK_END;
}

Test(factory, zeros_ones_full_dtypes)
{
    LEAK_CHECK_BEGIN;
    tg_tensor *z = tg_zeros(TG_INTS(2, 3));
    expect_values(z, TG_FLOAT32, (double[]){ 0, 0, 0, 0, 0, 0 }, 6);
    tg_tensor *o = tg_ones(TG_INTS(3), .dtype = TG_INT8);
    expect_values(o, TG_INT8, (double[]){ 1, 1, 1 }, 3);
    tg_tensor *f1 = tg_full(TG_INTS(2), 7), *f2 = tg_full(TG_INTS(2), 1.5);
    tg_tensor *f3 = tg_full(TG_INTS(2), 1.5, .dtype = TG_INT64);
    expect_values(f1, TG_INT64, (double[]){ 7, 7 }, 2);
    expect_values(f2, TG_FLOAT32, (double[]){ 1.5, 1.5 }, 2);
    expect_values(f3, TG_INT64, (double[]){ 1, 1 }, 2);
    tg_tensor *s0 = tg_zeros(TG_INTS_EMPTY);
    cr_assert_eq(tg_tensor_dim(s0), 0);
    cr_assert_eq(tg_item(s0), 0);
    tg_tensor *e = tg_ones(TG_INTS(0, 4));
    cr_assert_eq(tg_tensor_numel(e), 0);
    /* out=: an empty out is resized and keeps its dtype */
    tg_tensor *out = tg_empty(TG_INTS(0), .dtype = TG_INT32);
    tg_tensor *r = tg_ones_out(TG_INTS(2, 3), out);
    cr_assert_eq(r, out);
    expect_values(out, TG_INT32, (double[]){ 1, 1, 1, 1, 1, 1 }, 6);
    tg_release(r);
    r = tg_full_out(TG_INTS(2, 3), 1.5, out);
    expect_values(out, TG_INT32, (double[]){ 1, 1, 1, 1, 1, 1 }, 6);
    tg_release(r);
    r = tg_zeros_out(TG_INTS(2, 3), out);
    expect_values(out, TG_INT32, (double[]){ 0, 0, 0, 0, 0, 0 }, 6);
    tg_release(r);
    /* _like: dtype, shape and (preserve) strides of self */
    tg_tensor *base = tg_zeros(TG_INTS(3, 4), .dtype = TG_INT16);
    tg_tensor *bt = tg_transpose(base, 0, 1);
    tg_tensor *zl = tg_full_like(bt, 3);
    cr_assert_eq(tg_tensor_dtype(zl), TG_INT16);
    cr_assert(tg_tensor_size(zl, 0) == 4 && tg_tensor_size(zl, 1) == 3);
    cr_assert(tg_tensor_stride(zl, 0) == 1 && tg_tensor_stride(zl, 1) == 4, "strides (%lld, %lld)",
              (long long)tg_tensor_stride(zl, 0), (long long)tg_tensor_stride(zl, 1));
    tg_tensor *el = tg_empty_like(bt, .dtype = TG_BOOL);
    cr_assert(tg_tensor_dtype(el) == TG_BOOL && tg_tensor_stride(el, 0) == 1 &&
              tg_tensor_stride(el, 1) == 4);
    tg_release(el);
    tg_tensor *ol = tg_ones_like(bt, .dtype = TG_FLOAT64, .memory_format = TG_CONTIGUOUS_FORMAT);
    cr_assert(tg_tensor_dtype(ol) == TG_FLOAT64 && tg_tensor_is_contiguous(ol));
    tg_tensor *sl = tg_slice(base, .dim = 1, .start = 0, .end = 4, .step = 2);
    tg_tensor *zs = tg_zeros_like(sl); /* not dense: contiguous */
    cr_assert(tg_tensor_is_contiguous(zs) && tg_tensor_size(zs, 1) == 2);
    tg_tensor *cl = tg_empty(TG_INTS(2, 3, 4, 5), .memory_format = TG_CHANNELS_LAST);
    int64_t want_st[4] = { 60, 1, 15, 3 };
    for (int d = 0; d < 4; d++) cr_assert_eq(tg_tensor_stride(cl, d), want_st[d]);
    kt_expect_error(tg_empty(TG_INTS(2, 3), .memory_format = TG_CHANNELS_LAST),
                    "required rank 4 tensor to use channels_last format");
    kt_expect_error(tg_empty(TG_INTS(-1)), "negative dimension");
    kt_release_all(z, o, f1, f2, f3, s0, e, out, base, bt, zl, ol, sl, zs, cl);
    LEAK_CHECK_END;
}

Test(factory, arange)
{
    LEAK_CHECK_BEGIN;
    tg_tensor *a = tg_arange(5);
    expect_values(a, TG_INT64, (double[]){ 0, 1, 2, 3, 4 }, 5);
    tg_tensor *b = tg_arange_start_step(0, 1, .step = 0.3);
    expect_close(b, TG_FLOAT32, (double[]){ 0, 0.3, 0.6, 0.9 }, 4, 1e-7);
    tg_tensor *c = tg_arange_start_step(0, 5, .step = 1.5);
    expect_values(c, TG_FLOAT32, (double[]){ 0, 1.5, 3, 4.5 }, 4);
    tg_tensor *d = tg_arange_start_step(0, -5, .step = -1.5);
    expect_values(d, TG_FLOAT32, (double[]){ 0, -1.5, -3, -4.5 }, 4);
    tg_tensor *e = tg_arange_start(-1.5, 3, .dtype = TG_UINT8);
    expect_values(e, TG_UINT8, (double[]){ 255, 0, 1, 2, 3 }, 5);
    tg_tensor *f = tg_arange_start_step(1, 2.5, .step = 0.5, .dtype = TG_FLOAT16);
    expect_values(f, TG_FLOAT16, (double[]){ 1, 1.5, 2 }, 3);
    tg_tensor *g = tg_arange_start_step(-3, 3, .step = 2.5, .dtype = TG_INT32);
    expect_values(g, TG_INT32, (double[]){ -3, -1, 1 }, 3);
    tg_tensor *h = tg_arange(0);
    cr_assert(h && tg_tensor_numel(h) == 0 && tg_tensor_dtype(h) == TG_INT64);
    kt_expect_error(tg_arange_start_step(0, 5, .step = 0), "step must be nonzero");
    kt_expect_error(tg_arange_start_step(0, 5, .step = 0.5, .dtype = TG_INT64),
                    "step must be nonzero");
    kt_expect_error(tg_arange_start_step(5, 0, .step = 1),
                    "upper bound and larger bound inconsistent with step sign");
    kt_expect_error(tg_arange_start_step(0, INFINITY, .step = 1), "unsupported range: 0 -> inf");
    tg_tensor *out = tg_empty(TG_INTS(0), .dtype = TG_INT32);
    tg_tensor *r = tg_arange_start_out(0, 10, out, .step = 3);
    cr_assert_eq(r, out);
    expect_values(out, TG_INT32, (double[]){ 0, 3, 6, 9 }, 4);
    tg_release(r);
    r = tg_arange_out(4, out); /* same number of elements: written in place */
    expect_values(out, TG_INT32, (double[]){ 0, 1, 2, 3 }, 4);
    kt_release_all(r, a, b, c, d, e, f, g, h, out);
    LEAK_CHECK_END;
}

Test(factory, linspace)
{
    LEAK_CHECK_BEGIN;
    tg_tensor *a = tg_linspace(0, 10, 5);
    expect_values(a, TG_FLOAT32, (double[]){ 0, 2.5, 5, 7.5, 10 }, 5);
    tg_tensor *b = tg_linspace(0, 10, 4, .dtype = TG_INT64);
    expect_values(b, TG_INT64, (double[]){ 0, 3, 6, 10 }, 4);
    tg_tensor *c = tg_linspace(10, 0, 4, .dtype = TG_UINT8);
    expect_values(c, TG_UINT8, (double[]){ 10, 6, 3, 0 }, 4);
    tg_tensor *d = tg_linspace(-1, 10, 4, .dtype = TG_INT8);
    expect_values(d, TG_INT8, (double[]){ -1, 2, 6, 10 }, 4);
    tg_tensor *e = tg_linspace(3, 7, 1);
    expect_values(e, TG_FLOAT32, (double[]){ 3 }, 1);
    tg_tensor *f = tg_linspace(0, 1, 3, .dtype = TG_BFLOAT16);
    expect_values(f, TG_BFLOAT16, (double[]){ 0, 0.5, 1 }, 3);
    tg_tensor *g = tg_linspace(0, 1, 0);
    cr_assert(g && tg_tensor_numel(g) == 0);
    tg_tensor *h = tg_linspace(0, 1, 7, .dtype = TG_FLOAT64);
    expect_close(h, TG_FLOAT64, (double[]){ 0, 1.0 / 6, 2.0 / 6, 0.5, 4.0 / 6, 5.0 / 6, 1 }, 7,
                 1e-15);
    kt_expect_error(tg_linspace(0, 1, -1), "number of steps must be non-negative");
    tg_tensor *out = tg_empty(TG_INTS(0), .dtype = TG_FLOAT64);
    tg_tensor *r = tg_linspace_out(1, 2, 3, out);
    cr_assert_eq(r, out);
    expect_values(out, TG_FLOAT64, (double[]){ 1, 1.5, 2 }, 3);
    kt_release_all(r, out, a, b, c, d, e, f, g, h);
    LEAK_CHECK_END;
}

Test(factory, eye)
{
    LEAK_CHECK_BEGIN;
    tg_tensor *a = tg_eye(3);
    expect_values(a, TG_FLOAT32, (double[]){ 1, 0, 0, 0, 1, 0, 0, 0, 1 }, 9);
    tg_tensor *b = tg_eye_m(2, 3, .dtype = TG_BOOL);
    expect_values(b, TG_BOOL, (double[]){ 1, 0, 0, 0, 1, 0 }, 6);
    tg_tensor *c = tg_eye_m(3, 2, .dtype = TG_INT64);
    expect_values(c, TG_INT64, (double[]){ 1, 0, 0, 1, 0, 0 }, 6);
    tg_tensor *z = tg_eye(0);
    cr_assert(z && tg_tensor_numel(z) == 0);
    kt_expect_error(tg_eye(-1), "n must be greater or equal to 0, got -1");
    kt_expect_error(tg_eye_m(2, -1), "m must be greater or equal to 0, got -1");
    tg_tensor *out = tg_empty(TG_INTS(0));
    tg_tensor *r = tg_eye_out(2, out);
    cr_assert_eq(r, out);
    expect_values(out, TG_FLOAT32, (double[]){ 1, 0, 0, 1 }, 4);
    tg_release(r);
    tg_tensor *out2 = tg_empty(TG_INTS(0), .dtype = TG_INT32);
    r = tg_eye_m_out(1, 3, out2);
    expect_values(out2, TG_INT32, (double[]){ 1, 0, 0 }, 3);
    kt_release_all(r, out2, a, b, c, z, out);
    LEAK_CHECK_END;
}

/* Mean and standard deviation of a tensor's values. */
static void moments(tg_tensor *t, double *mean, double *sd, double *lo, double *hi)
{
    int64_t n = tg_tensor_numel(t);
    double *v = kt_values(t), s = 0, s2 = 0;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        s += v[i];
        s2 += v[i] * v[i];
        if (v[i] < *lo) *lo = v[i];
        if (v[i] > *hi) *hi = v[i];
    }
    *mean = s / (double)n;
    *sd = sqrt(s2 / (double)n - *mean * *mean);
    free(v);
}

Test(factory, rand_randn_distributions)
{
    LEAK_CHECK_BEGIN;
    const int64_t n = 200000;
    double mean, sd, lo, hi;
    tg_manual_seed(7);
    tg_tensor *u = tg_rand(TG_INTS(n));
    cr_assert_eq(tg_tensor_dtype(u), TG_FLOAT32);
    moments(u, &mean, &sd, &lo, &hi);
    /* U[0,1): mean 1/2, sd 1/sqrt(12); standard error of the mean 0.00065 */
    cr_assert(lo >= 0 && hi < 1, "range [%g, %g]", lo, hi);
    cr_assert(fabs(mean - 0.5) < 0.0033 && fabs(sd - 0.288675) < 0.003, "mean %g sd %g", mean, sd);
    tg_tensor *g = tg_randn(TG_INTS(n), .dtype = TG_FLOAT64);
    moments(g, &mean, &sd, &lo, &hi);
    cr_assert(fabs(mean) < 0.0112 && fabs(sd - 1) < 0.008, "mean %g sd %g", mean, sd);
    /* uniform_(from, to) and normal_(mean, std) on a non-contiguous view */
    tg_tensor *m = tg_zeros(TG_INTS(400, 500));
    tg_tensor *mt = tg_transpose(m, 0, 1);
    tg_release(tg_uniform_(mt, .from = -2, .to = 3));
    moments(m, &mean, &sd, &lo, &hi);
    cr_assert(lo >= -2 && hi < 3 && fabs(mean - 0.5) < 0.017, "range [%g, %g] mean %g", lo, hi,
              mean);
    tg_release(tg_normal_(mt, .mean = 10, .std = 2));
    moments(m, &mean, &sd, &lo, &hi);
    cr_assert(fabs(mean - 10) < 0.023 && fabs(sd - 2) < 0.016, "mean %g sd %g", mean, sd);
    tg_tensor *h = tg_rand(TG_INTS(1000), .dtype = TG_BFLOAT16);
    moments(h, &mean, &sd, &lo, &hi);
    cr_assert(lo >= 0 && hi < 1);
    kt_release_all(u, g, m, mt, h);
    LEAK_CHECK_END;
}

Test(factory, seeds_and_generators_reproduce)
{
    LEAK_CHECK_BEGIN;
    tg_manual_seed(42);
    tg_tensor *a = tg_randn(TG_INTS(100));
    tg_manual_seed(42);
    tg_tensor *b = tg_randn(TG_INTS(100));
    tg_generator *g1 = tg_generator_new(5), *g2 = tg_generator_new(5);
    tg_tensor *c = tg_rand_generator(TG_INTS(100), g1), *d = tg_rand_generator(TG_INTS(100), g2);
    tg_tensor *e = tg_randn_generator(TG_INTS(100), g1), *f = tg_randn_generator(TG_INTS(100), g2);
    tg_tensor *gl = tg_randn_like(e, .dtype = TG_FLOAT64);
    cr_assert(gl && tg_tensor_dtype(gl) == TG_FLOAT64 && tg_tensor_numel(gl) == 100);
    double *ev = kt_values(e), *fv = kt_values(f);
    cr_assert(memcmp(ev, fv, 100 * sizeof(double)) == 0);
    free(ev);
    free(fv);
    kt_release_all(e, f, gl);
    double *av = kt_values(a), *bv = kt_values(b), *cv = kt_values(c), *dv = kt_values(d);
    cr_assert(memcmp(av, bv, 100 * sizeof(double)) == 0);
    cr_assert(memcmp(cv, dv, 100 * sizeof(double)) == 0);
    cr_assert(memcmp(av, cv, 100 * sizeof(double)) != 0);
    free(av);
    free(bv);
    free(cv);
    free(dv);
    tg_generator_free(g1);
    tg_generator_free(g2);
    kt_release_all(a, b, c, d);
    LEAK_CHECK_END;
}

Test(factory, randint_and_random_)
{
    LEAK_CHECK_BEGIN;
    double mean, sd, lo, hi;
    tg_tensor *a = tg_randint(10, TG_INTS(10000));
    cr_assert_eq(tg_tensor_dtype(a), TG_INT64);
    moments(a, &mean, &sd, &lo, &hi);
    cr_assert(lo == 0 && hi == 9 && fabs(mean - 4.5) < 0.15, "range [%g, %g] mean %g", lo, hi,
              mean);
    tg_tensor *b = tg_randint_low(-3, 3, TG_INTS(1000), .dtype = TG_INT8);
    moments(b, &mean, &sd, &lo, &hi);
    cr_assert(tg_tensor_dtype(b) == TG_INT8 && lo == -3 && hi == 2);
    tg_tensor *f = tg_zeros(TG_INTS(3));
    tg_tensor *c = tg_randint_like(f, 5);
    cr_assert_eq(tg_tensor_dtype(c), TG_FLOAT32);
    tg_tensor *i8 = tg_zeros(TG_INTS(500), .dtype = TG_INT8);
    tg_tensor *d = tg_randint_like_low(i8, 3, 5);
    moments(d, &mean, &sd, &lo, &hi);
    cr_assert(tg_tensor_dtype(d) == TG_INT8 && lo == 3 && hi == 4);
    tg_tensor *bo = tg_zeros(TG_INTS(200), .dtype = TG_BOOL);
    tg_release(tg_random_(bo, 0, 2));
    moments(bo, &mean, &sd, &lo, &hi);
    cr_assert(lo == 0 && hi == 1);
    tg_release(tg_random_(i8, 0, TG_NONE_INT)); /* [0, 127] */
    moments(i8, &mean, &sd, &lo, &hi);
    cr_assert(lo >= 0 && hi <= 127 && hi > 100);
    kt_expect_error(tg_randint_low(5, 3, TG_INTS(2)),
                    "random_ expects 'from' to be less than 'to', but got from=5 >= to=3");
    tg_tensor *u8 = tg_zeros(TG_INTS(2), .dtype = TG_UINT8);
    kt_expect_error(tg_random_(u8, -1, 3), "from is out of bounds for unsigned char");
    kt_expect_error(tg_random_(u8, 0, 300), "to - 1 is out of bounds for unsigned char");
    kt_expect_error(tg_random_(bo, 0, 3), "to - 1 is out of bounds for bool");
    kt_release_all(a, b, f, c, i8, d, bo, u8);
    LEAK_CHECK_END;
}

Test(factory, random_errors_in_pytorch_words)
{
    LEAK_CHECK_BEGIN;
    kt_expect_error(tg_rand(TG_INTS(3), .dtype = TG_INT64),
                    "\"check_uniform_bounds\" not implemented for 'Long'");
    kt_expect_error(tg_randn(TG_INTS(3), .dtype = TG_INT64),
                    "\"normal_kernel_cpu\" not implemented for 'Long'");
    tg_tensor *i8 = tg_zeros(TG_INTS(2), .dtype = TG_INT8), *f = tg_zeros(TG_INTS(3));
    kt_expect_error(tg_rand_like(i8), "\"check_uniform_bounds\" not implemented for 'Char'");
    tg_tensor *rl = tg_rand_like(f, .dtype = TG_FLOAT64);
    double mean, sd, lo, hi;
    moments(rl, &mean, &sd, &lo, &hi);
    cr_assert(tg_tensor_dtype(rl) == TG_FLOAT64 && lo >= 0 && hi < 1);
    tg_release(rl);
    kt_expect_error(tg_uniform_(f, .from = 1, .to = 0),
                    "uniform_ expects to return a [from, to) range, but found from=1 > to=0");
    kt_expect_error(tg_normal_(f, .mean = 0, .std = -1),
                    "normal expects std >= 0.0, but found std -1");
    kt_release_all(i8, f);
    LEAK_CHECK_END;
}

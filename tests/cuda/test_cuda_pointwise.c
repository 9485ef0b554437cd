/* CUDA pointwise kernels against the CPU kernels: binary (add, sub, mul, div, div with a
 * rounding mode, pow, maximum, minimum), unary (neg ... relu), comparisons, where, clamp
 * (Scalar and Tensor bounds), threshold_backward and copy_.
 *
 * Every case builds the same random inputs on the CPU and (copied) on CUDA device 0, runs the
 * operator on both, and compares: same dtype, same shape, result on the device, values within
 * the bound of the dtype. Layouts: equal shapes (contiguous fast path), broadcasting, a
 * non-contiguous (transposed) input, a CPU Scalar operand (host value), mixed dtypes, out=
 * into a tensor of another dtype, and in place.
 *
 * Metric: |cuda - cpu| <= atol + rtol * |cpu| per element, NaN only against NaN, infinities
 * equal. Bounds: integers and bool exact; float64 rtol 1e-12 (CUDA's libm and glibc are each
 * within 1-2 ulp); float32 rtol 1e-5, atol 1e-6 (CUDA's libm ulps, and the exp/sigmoid polynomial
 * which nvcc may fuse into multiply-adds; the atol covers sin/cos near their zeros); float16 and bfloat16
 * rtol 1e-2, atol 1e-2 (one unit in the last place after computing in float).
 *
 * Built in every build: without TG_WITH_CUDA one test skips ("built without CUDA"), without a
 * device every test skips naming itself. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_cmp.h"

/* Which CUDA kernels these cases compare (tests/cuda/test_cuda_coverage.c); declared in
 * every build. */
#ifdef TG_CUDA_COVERS
TG_CUDA_COVERS("add.out", "sub.out", "mul.out", "div.out", "div.out_mode", "pow.Tensor_Tensor_out",
               "maximum.out", "minimum.out", "neg.out", "abs.out", "exp.out", "log.out", "sqrt.out",
               "rsqrt.out", "sin.out", "cos.out", "tanh.out", "sigmoid.out", "relu.out",
               "eq.Tensor_out", "ne.Tensor_out", "lt.Tensor_out", "le.Tensor_out", "gt.Tensor_out",
               "ge.Tensor_out", "where.self_out", "clamp.out", "clamp.Tensor_out", "copy_",
               "threshold_backward");
#endif

#ifndef TG_WITH_CUDA

Test(cuda_pointwise, not_built) { CC_SKIP_NO_CUDA_BUILD(); }

#else

/* ------------------------------------------------------------------ helpers */

/* A contiguous copy of t on CUDA device 0 (through copy_, CPU -> CUDA). */
static tg_tensor *cp_cuda(tg_tensor *t)
{
    tg_int_list size = { tg_tensor_sizes(t), tg_tensor_dim(t) };
    tg_tensor *d = tg_empty(size, .dtype = tg_tensor_dtype(t), .device = TG_DEVICE_CUDA(0));
    cr_assert(d, "empty on CUDA: %s", tg_last_error());
    tg_tensor *r = tg_copy_(d, t);
    cr_assert(r, "copy_ to CUDA: %s", tg_last_error());
    tg_release(r);
    return d;
}

static double cp_rtol(tg_dtype t)
{
    switch (t) {
    case TG_FLOAT64: return 1e-12;
    case TG_FLOAT32: return 1e-5;
    case TG_FLOAT16:
    case TG_BFLOAT16: return 1e-2;
    default: return 0;
    }
}

static double cp_atol(tg_dtype t)
{
    switch (t) {
    case TG_FLOAT64: return 1e-12;
    case TG_FLOAT32: return 1e-6;
    case TG_FLOAT16:
    case TG_BFLOAT16: return 1e-2;
    default: return 0;
    }
}

/* got (CUDA) against want (CPU) with the bound of want's dtype; releases both. */
static void cp_check(tg_tensor *got, tg_tensor *want, const char *what)
{
    cr_assert(want, "%s on CPU: %s", what, tg_last_error());
    cr_assert(got, "%s on CUDA: %s", what, tg_last_error());
    cr_assert_eq(tg_tensor_device(got).type, TG_CUDA, "%s: the result is not on the CUDA device",
                 what);
    cr_assert_eq(tg_tensor_dtype(got), tg_tensor_dtype(want), "%s: dtype %s on CUDA, %s on CPU",
                 what, tg_dtype_name(tg_tensor_dtype(got)), tg_dtype_name(tg_tensor_dtype(want)));
    kt_assert_shape(got, tg_tensor_sizes(want), tg_tensor_dim(want));
    const tg_dtype t = tg_tensor_dtype(want);
    double *w = kt_values(want);
    kt_assert_close(got, w, tg_tensor_numel(want), cp_rtol(t), cp_atol(t), what);
    free(w);
    tg_release(got);
    tg_release(want);
}

/* Input layouts of a case. */
typedef enum cp_layout {
    CP_SAME,      /* a, b of shape (33, 65): the contiguous (vectorised) path with a tail */
    CP_BROADCAST, /* a (4, 1, 7), b (3, 7) */
    CP_STRIDED,   /* a is the transpose of a (65, 33) tensor */
    CP_SCALAR,    /* b is a zero-dim CPU tensor (a host value) */
    CP_NLAYOUTS
} cp_layout;

static const char *cp_layout_name[] = { "same", "broadcast", "strided", "cpu-scalar" };

/* Makes input k (0 or 1) of a layout on the CPU and its CUDA twin. */
static void cp_input(cp_layout l, int k, tg_dtype dt, uint64_t seed, double lo, double hi,
                     tg_tensor **cpu, tg_tensor **cuda)
{
    static const int64_t same[2] = { 33, 65 }, bc_a[3] = { 4, 1, 7 }, bc_b[2] = { 3, 7 },
                         tr[2] = { 65, 33 };
    tg_tensor *base;
    switch (l) {
    case CP_SAME: base = cc_rand(same, 2, dt, seed, lo, hi); break;
    case CP_BROADCAST:
        base = k == 0 ? cc_rand(bc_a, 3, dt, seed, lo, hi) : cc_rand(bc_b, 2, dt, seed, lo, hi);
        break;
    case CP_STRIDED:
        base = k == 0 ? cc_rand(tr, 2, dt, seed, lo, hi) : cc_rand(same, 2, dt, seed, lo, hi);
        break;
    default:
        base = k == 0 ? cc_rand(same, 2, dt, seed, lo, hi) : cc_rand(NULL, 0, dt, seed, lo, hi);
        break;
    }
    if (l == CP_SCALAR && k == 1) { /* stays on the CPU on both sides */
        *cpu = base;
        *cuda = tg_retain(base);
        return;
    }
    tg_tensor *dev = cp_cuda(base);
    if (l == CP_STRIDED && k == 0) {
        *cpu = tg_transpose(base, 0, 1);
        *cuda = tg_transpose(dev, 0, 1);
        cr_assert(*cuda && tg_tensor_device(*cuda).type == TG_CUDA,
                  "transpose of a CUDA tensor: %s", tg_last_error());
        cr_assert(!tg_tensor_is_contiguous(*cuda), "the strided input is contiguous");
        tg_release(base);
        tg_release(dev);
        return;
    }
    *cpu = base;
    *cuda = dev;
}

/* ------------------------------------------------------------------ binary */

typedef tg_tensor *(*cp_bin_fn)(tg_tensor *a, tg_tensor *b);

static tg_tensor *op_add(tg_tensor *a, tg_tensor *b) { return tg_add(a, b, .alpha = 2); }
static tg_tensor *op_sub(tg_tensor *a, tg_tensor *b) { return tg_sub(a, b, .alpha = 3); }
static tg_tensor *op_mul(tg_tensor *a, tg_tensor *b) { return tg_mul(a, b); }
static tg_tensor *op_div(tg_tensor *a, tg_tensor *b) { return tg_div(a, b); }
static tg_tensor *op_div_trunc(tg_tensor *a, tg_tensor *b) { return tg_div_mode(a, b, "trunc"); }
static tg_tensor *op_div_floor(tg_tensor *a, tg_tensor *b) { return tg_div_mode(a, b, "floor"); }
static tg_tensor *op_pow(tg_tensor *a, tg_tensor *b) { return tg_pow(a, b); }
static tg_tensor *op_maximum(tg_tensor *a, tg_tensor *b) { return tg_maximum(a, b); }
static tg_tensor *op_minimum(tg_tensor *a, tg_tensor *b) { return tg_minimum(a, b); }
static tg_tensor *op_eq(tg_tensor *a, tg_tensor *b) { return tg_eq(a, b); }
static tg_tensor *op_ne(tg_tensor *a, tg_tensor *b) { return tg_ne(a, b); }
static tg_tensor *op_lt(tg_tensor *a, tg_tensor *b) { return tg_lt(a, b); }
static tg_tensor *op_le(tg_tensor *a, tg_tensor *b) { return tg_le(a, b); }
static tg_tensor *op_gt(tg_tensor *a, tg_tensor *b) { return tg_gt(a, b); }
static tg_tensor *op_ge(tg_tensor *a, tg_tensor *b) { return tg_ge(a, b); }
static tg_tensor *op_threshold_backward(tg_tensor *a, tg_tensor *b)
{
    return tg_threshold_backward(a, b, 0.25);
}

/* An operator, its input ranges (b's range keeps divisors away from zero), and whether it
 * takes bool operands. */
typedef struct cp_bin_case {
    const char *name;
    cp_bin_fn fn;
    double lo_a, hi_a, lo_b, hi_b;
    bool bool_ok;
} cp_bin_case;

static const cp_bin_case cp_bin_cases[] = {
    { "add", op_add, -4, 4, -4, 4, true },
    { "sub", op_sub, -4, 4, -4, 4, false },
    { "mul", op_mul, -4, 4, -4, 4, true },
    { "div", op_div, -4, 4, 1, 5, true },
    { "div_trunc", op_div_trunc, -9, 9, 1, 5, false },
    { "div_floor", op_div_floor, -9, 9, 1, 5, false },
    { "pow", op_pow, 0.5, 3, 0, 4, false },
    { "maximum", op_maximum, -4, 4, -4, 4, true },
    { "minimum", op_minimum, -4, 4, -4, 4, true },
    { "eq", op_eq, -2, 2, -2, 2, true },
    { "ne", op_ne, -2, 2, -2, 2, true },
    { "lt", op_lt, -2, 2, -2, 2, true },
    { "le", op_le, -2, 2, -2, 2, true },
    { "gt", op_gt, -2, 2, -2, 2, true },
    { "ge", op_ge, -2, 2, -2, 2, true },
    { "threshold_backward", op_threshold_backward, -2, 2, -1, 1, false },
};

static const tg_dtype cp_dtypes[] = { TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16, TG_INT64,
                                      TG_INT32,   TG_INT16,   TG_INT8,    TG_UINT8,    TG_BOOL };
#define CP_NDTYPES (sizeof cp_dtypes / sizeof cp_dtypes[0])

static void cp_run_binary(const cp_bin_case *c, tg_dtype da, tg_dtype db, cp_layout l)
{
    char what[160];
    snprintf(what, sizeof what, "%s(%s, %s) %s", c->name, tg_dtype_name(da), tg_dtype_name(db),
             cp_layout_name[l]);
    bool boolean = da == TG_BOOL || db == TG_BOOL;
    double lo_a = boolean ? 0 : c->lo_a, hi_a = boolean ? 2 : c->hi_a;
    double lo_b = boolean ? 0 : c->lo_b, hi_b = boolean ? 2 : c->hi_b;
    if (da == TG_UINT8 && lo_a < 0) lo_a = 0;
    if (db == TG_UINT8 && lo_b < 0) lo_b = 0;
    tg_tensor *a, *ad, *b, *bd;
    cp_input(l, 0, da, 11 + (uint64_t)l, lo_a, hi_a, &a, &ad);
    cp_input(l, 1, db, 23 + (uint64_t)l, lo_b, hi_b, &b, &bd);
    tg_tensor *want = c->fn(a, b);
    if (!want) { /* refused on the CPU: the same refusal on CUDA */
        char cpu_err[512];
        snprintf(cpu_err, sizeof cpu_err, "%s", tg_last_error());
        tg_clear_error();
        tg_tensor *got = c->fn(ad, bd);
        cr_assert_null(got, "%s: CUDA accepted what the CPU refused (%s)", what, cpu_err);
        /* the kernel name differs ("_cpu" vs "_cuda"); compare the text before it */
        const char *e = tg_last_error();
        cr_assert(e && strncmp(e, cpu_err, 12) == 0, "%s: CUDA error \"%s\", CPU error \"%s\"",
                  what, e ? e : "", cpu_err);
        tg_clear_error();
    } else {
        cp_check(c->fn(ad, bd), want, what);
    }
    tg_release(a);
    tg_release(ad);
    tg_release(b);
    tg_release(bd);
}

Test(cuda_pointwise, binary_same_dtype_every_layout)
{
    CC_REQUIRE_DEVICE("cuda_pointwise::binary_same_dtype_every_layout");
    kt_live base = kt_live_now();
    for (size_t i = 0; i < sizeof cp_bin_cases / sizeof cp_bin_cases[0]; i++)
        for (size_t d = 0; d < CP_NDTYPES; d++) {
            if (cp_dtypes[d] == TG_BOOL && !cp_bin_cases[i].bool_ok) continue;
            for (int l = 0; l < CP_NLAYOUTS; l++)
                cp_run_binary(&cp_bin_cases[i], cp_dtypes[d], cp_dtypes[d], (cp_layout)l);
        }
    kt_assert_no_leak(base);
}

Test(cuda_pointwise, binary_mixed_dtypes)
{
    CC_REQUIRE_DEVICE("cuda_pointwise::binary_mixed_dtypes");
    kt_live base = kt_live_now();
    static const tg_dtype pairs[][2] = {
        { TG_FLOAT32, TG_INT64 },  { TG_INT32, TG_FLOAT64 }, { TG_FLOAT16, TG_FLOAT32 },
        { TG_BFLOAT16, TG_INT64 }, { TG_UINT8, TG_INT8 },    { TG_INT64, TG_FLOAT16 },
        { TG_BOOL, TG_FLOAT32 },   { TG_INT16, TG_INT32 },
    };
    for (size_t i = 0; i < sizeof cp_bin_cases / sizeof cp_bin_cases[0]; i++)
        for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++) {
            if ((pairs[p][0] == TG_BOOL || pairs[p][1] == TG_BOOL) && !cp_bin_cases[i].bool_ok)
                continue;
            cp_run_binary(&cp_bin_cases[i], pairs[p][0], pairs[p][1], CP_SAME);
            cp_run_binary(&cp_bin_cases[i], pairs[p][0], pairs[p][1], CP_SCALAR);
            cp_run_binary(&cp_bin_cases[i], pairs[p][0], pairs[p][1], CP_BROADCAST);
        }
    kt_assert_no_leak(base);
}

/* out= into another dtype (the result is converted on store) and in place. */
Test(cuda_pointwise, binary_out_and_in_place)
{
    CC_REQUIRE_DEVICE("cuda_pointwise::binary_out_and_in_place");
    kt_live base = kt_live_now();
    const int64_t shape[2] = { 17, 31 };
    tg_tensor *a = cc_rand(shape, 2, TG_INT32, 1, -50, 50),
              *b = cc_rand(shape, 2, TG_INT32, 2, -50, 50);
    tg_tensor *ad = cp_cuda(a), *bd = cp_cuda(b);
    tg_tensor *out = cc_rand(shape, 2, TG_FLOAT64, 3, 0, 1), *outd = cp_cuda(out);
    tg_tensor *r = tg_add_out(a, b, out, .alpha = 3), *rd = tg_add_out(ad, bd, outd, .alpha = 3);
    cr_assert_eq(rd, outd, "add.out returns its out tensor");
    cp_check(rd, r, "add.out int32 -> float64");

    tg_tensor *f = cc_rand(shape, 2, TG_FLOAT32, 4, -3, 3), *fd = cp_cuda(f);
    tg_tensor *cmp = tg_empty(TG_INTS(17, 31), .dtype = TG_FLOAT32),
              *cmpd = tg_empty(TG_INTS(17, 31), .dtype = TG_FLOAT32, .device = TG_DEVICE_CUDA(0));
    cp_check(tg_lt_out(fd, ad, cmpd), tg_lt_out(f, a, cmp), "lt.Tensor_out into float32");

    cp_check(tg_mul_(fd, bd), tg_mul_(f, b), "mul_ float32 *= int32");
    cp_check(tg_clamp_(fd, .min = TG_OPT_FLOAT(-20), .max = TG_OPT_FLOAT(30)),
             tg_clamp_(f, .min = TG_OPT_FLOAT(-20), .max = TG_OPT_FLOAT(30)), "clamp_ in place");
    cp_check(tg_ge_(fd, bd), tg_ge_(f, b), "ge_ in place (bool stored into float32)");
    tg_release(f);
    tg_release(fd);
    tg_release(a);
    tg_release(ad);
    tg_release(b);
    tg_release(bd);
    tg_release(out);
    tg_release(outd);
    tg_release(cmp);
    tg_release(cmpd);
    kt_assert_no_leak(base);
}

/* ------------------------------------------------------------------ unary */

typedef tg_tensor *(*cp_un_fn)(tg_tensor *a);

typedef struct cp_un_case {
    const char *name;
    cp_un_fn fn;
    double lo, hi;
    bool int_ok; /* keeps integer dtypes (else promoted to float) */
} cp_un_case;

static const cp_un_case cp_un_cases[] = {
    { "neg", tg_neg, -5, 5, true },          { "abs", tg_abs, -5, 5, true },
    { "relu", tg_relu, -5, 5, true },        { "exp", tg_exp, -8, 8, false },
    { "log", tg_log, 0.01, 9, false },       { "sqrt", tg_sqrt, 0, 9, false },
    { "rsqrt", tg_rsqrt, 0.01, 9, false },   { "sin", tg_sin, -6, 6, false },
    { "cos", tg_cos, -6, 6, false },         { "tanh", tg_tanh, -4, 4, false },
    { "sigmoid", tg_sigmoid, -9, 9, false },
};

Test(cuda_pointwise, unary_every_dtype_and_layout)
{
    CC_REQUIRE_DEVICE("cuda_pointwise::unary_every_dtype_and_layout");
    kt_live base = kt_live_now();
    for (size_t i = 0; i < sizeof cp_un_cases / sizeof cp_un_cases[0]; i++)
        for (size_t d = 0; d < CP_NDTYPES; d++)
            for (int l = 0; l <= CP_STRIDED; l++) {
                const cp_un_case *c = &cp_un_cases[i];
                tg_dtype dt = cp_dtypes[d];
                char what[128];
                snprintf(what, sizeof what, "%s(%s) %s", c->name, tg_dtype_name(dt),
                         cp_layout_name[l]);
                double lo = dt == TG_BOOL ? 0 : dt == TG_UINT8 && c->lo < 0 ? 0 : c->lo;
                double hi = dt == TG_BOOL ? 2 : c->hi;
                tg_tensor *a, *ad;
                cp_input((cp_layout)l, 0, dt, 31 + (uint64_t)i, lo, hi, &a, &ad);
                tg_tensor *want = c->fn(a);
                if (!want) {
                    tg_clear_error();
                    cr_assert_null(c->fn(ad), "%s: CUDA accepted what the CPU refused", what);
                    tg_clear_error();
                } else {
                    cp_check(c->fn(ad), want, what);
                }
                tg_release(a);
                tg_release(ad);
            }
    kt_assert_no_leak(base);
}

Test(cuda_pointwise, unary_out_and_in_place)
{
    CC_REQUIRE_DEVICE("cuda_pointwise::unary_out_and_in_place");
    kt_live base = kt_live_now();
    const int64_t shape[1] = { 1001 };
    tg_tensor *a = cc_rand(shape, 1, TG_FLOAT32, 5, -3, 3), *ad = cp_cuda(a);
    tg_tensor *o = tg_empty(TG_INTS(1001), .dtype = TG_FLOAT64),
              *od = tg_empty(TG_INTS(1001), .dtype = TG_FLOAT64, .device = TG_DEVICE_CUDA(0));
    cp_check(tg_tanh_out(ad, od), tg_tanh_out(a, o), "tanh.out float32 -> float64");
    cp_check(tg_exp_(ad), tg_exp_(a), "exp_ in place");
    tg_release(a);
    tg_release(ad);
    tg_release(o);
    tg_release(od);
    kt_assert_no_leak(base);
}

/* ------------------------------------------------------------------ where, clamp */

Test(cuda_pointwise, where_every_layout)
{
    CC_REQUIRE_DEVICE("cuda_pointwise::where_every_layout");
    kt_live base = kt_live_now();
    static const tg_dtype pairs[][2] = { { TG_FLOAT32, TG_FLOAT32 },
                                         { TG_FLOAT16, TG_FLOAT64 },
                                         { TG_INT64, TG_INT8 },
                                         { TG_BOOL, TG_BFLOAT16 } };
    for (size_t p = 0; p < sizeof pairs / sizeof pairs[0]; p++)
        for (int l = 0; l < CP_NLAYOUTS; l++) {
            char what[96];
            snprintf(what, sizeof what, "where(%s, %s) %s", tg_dtype_name(pairs[p][0]),
                     tg_dtype_name(pairs[p][1]), cp_layout_name[l]);
            tg_tensor *a, *ad, *b, *bd, *c, *cd;
            cp_input((cp_layout)l, 0, pairs[p][0], 41, 0, 2, &a, &ad);
            cp_input((cp_layout)l, 1, pairs[p][1], 43, -5, 5, &b, &bd);
            cp_input((cp_layout)l, 0, TG_BOOL, 47, 0, 2, &c, &cd); /* condition like a */
            cp_check(tg_where(cd, ad, bd), tg_where(c, a, b), what);
            tg_release(a);
            tg_release(ad);
            tg_release(b);
            tg_release(bd);
            tg_release(c);
            tg_release(cd);
        }
    kt_assert_no_leak(base);
}

Test(cuda_pointwise, clamp_scalar_and_tensor_bounds)
{
    CC_REQUIRE_DEVICE("cuda_pointwise::clamp_scalar_and_tensor_bounds");
    kt_live base = kt_live_now();
    static const tg_dtype dts[] = { TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16,
                                    TG_INT64,   TG_INT32,   TG_UINT8 };
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (int l = 0; l < CP_NLAYOUTS; l++) {
            char what[96];
            tg_tensor *x, *xd, *lo, *lod, *hi, *hid;
            cp_input((cp_layout)l, 0, dts[d], 51, 0, 9, &x, &xd);
            cp_input((cp_layout)l, 1, dts[d], 53, 0, 4, &lo, &lod);
            cp_input((cp_layout)l, 1, dts[d], 57, 5, 9, &hi, &hid);
            snprintf(what, sizeof what, "clamp(%s) scalar bounds %s", tg_dtype_name(dts[d]),
                     cp_layout_name[l]);
            cp_check(tg_clamp(xd, .min = TG_OPT_FLOAT(2), .max = TG_OPT_FLOAT(6.5)),
                     tg_clamp(x, .min = TG_OPT_FLOAT(2), .max = TG_OPT_FLOAT(6.5)), what);
            snprintf(what, sizeof what, "clamp(%s) min only %s", tg_dtype_name(dts[d]),
                     cp_layout_name[l]);
            cp_check(tg_clamp(xd, .min = TG_OPT_FLOAT(3)), tg_clamp(x, .min = TG_OPT_FLOAT(3)),
                     what);
            snprintf(what, sizeof what, "clamp(%s) tensor bounds %s", tg_dtype_name(dts[d]),
                     cp_layout_name[l]);
            cp_check(tg_clamp_tensor(xd, .min = lod, .max = hid),
                     tg_clamp_tensor(x, .min = lo, .max = hi), what);
            snprintf(what, sizeof what, "clamp(%s) tensor max only %s", tg_dtype_name(dts[d]),
                     cp_layout_name[l]);
            cp_check(tg_clamp_tensor(xd, .max = hid), tg_clamp_tensor(x, .max = hi), what);
            tg_release(x);
            tg_release(xd);
            tg_release(lo);
            tg_release(lod);
            tg_release(hi);
            tg_release(hid);
        }
    kt_assert_no_leak(base);
}

/* ------------------------------------------------------------------ copy_ */

Test(cuda_pointwise, copy_every_dtype_pair)
{
    CC_REQUIRE_DEVICE("cuda_pointwise::copy_every_dtype_pair");
    kt_live base = kt_live_now();
    const int64_t shape[2] = { 19, 23 };
    for (size_t s = 0; s < CP_NDTYPES; s++)
        for (size_t d = 0; d < CP_NDTYPES; d++) {
            tg_dtype st = cp_dtypes[s], dt = cp_dtypes[d];
            char what[96];
            snprintf(what, sizeof what, "copy_ %s -> %s", tg_dtype_name(st), tg_dtype_name(dt));
            /* negative values only for signed and floating sources (kt_tensor casts with C) */
            double lo = st == TG_BOOL || st == TG_UINT8 ? 0 : -100, hi = st == TG_BOOL ? 2 : 100;
            tg_tensor *src = cc_rand(shape, 2, st, 61, lo, hi);
            tg_tensor *srcd = cp_cuda(src);
            tg_tensor *dst = tg_empty(TG_INTS(19, 23), .dtype = dt);
            tg_tensor *dstd = tg_empty(TG_INTS(19, 23), .dtype = dt, .device = TG_DEVICE_CUDA(0));
            cp_check(tg_copy_(dstd, srcd), tg_copy_(dst, src), what);
            tg_release(src);
            tg_release(srcd);
            tg_release(dst);
            tg_release(dstd);
        }
    kt_assert_no_leak(base);
}

/* Broadcast src, a transposed src or destination, a CPU Scalar src, and copies across devices. */
Test(cuda_pointwise, copy_layouts_and_devices)
{
    CC_REQUIRE_DEVICE("cuda_pointwise::copy_layouts_and_devices");
    kt_live base = kt_live_now();
    const int64_t row[1] = { 23 }, shape[2] = { 19, 23 }, tshape[2] = { 23, 19 };
    tg_tensor *r = cc_rand(row, 1, TG_FLOAT64, 71, -1, 1), *rd = cp_cuda(r);
    tg_tensor *dst = tg_empty(TG_INTS(19, 23), .dtype = TG_FLOAT32);
    tg_tensor *dstd = tg_empty(TG_INTS(19, 23), .dtype = TG_FLOAT32, .device = TG_DEVICE_CUDA(0));
    cp_check(tg_copy_(dstd, rd), tg_copy_(dst, r), "copy_ broadcast row float64 -> float32");

    tg_tensor *t = cc_rand(tshape, 2, TG_INT32, 73, -9, 9), *td = cp_cuda(t);
    tg_tensor *tt = tg_transpose(t, 0, 1), *ttd = tg_transpose(td, 0, 1);
    cp_check(tg_copy_(dstd, ttd), tg_copy_(dst, tt), "copy_ transposed int32 -> float32");

    tg_tensor *s = cc_rand(NULL, 0, TG_FLOAT64, 75, -3, 3);
    cp_check(tg_copy_(dstd, s), tg_copy_(dst, s), "copy_ CPU scalar -> CUDA");

    /* CPU -> strided CUDA destination, and CUDA -> CPU. */
    tg_tensor *x = cc_rand(shape, 2, TG_FLOAT16, 77, -4, 4);
    tg_tensor *big = tg_empty(TG_INTS(23, 19), .dtype = TG_FLOAT32, .device = TG_DEVICE_CUDA(0));
    tg_tensor *bigt = tg_transpose(big, 0, 1);
    tg_tensor *back = tg_empty(TG_INTS(19, 23), .dtype = TG_FLOAT16);
    tg_release(tg_copy_(bigt, x));
    tg_tensor *b2 = tg_copy_(back, bigt);
    cr_assert(b2, "copy_ CUDA -> CPU: %s", tg_last_error());
    double *xv = kt_values(x);
    kt_assert_close(b2, xv, 19 * 23, 0, 0,
                    "CPU -> CUDA (strided float32) -> CPU float16 round trip");
    free(xv);
    tg_release(b2);
    tg_release(r);
    tg_release(rd);
    tg_release(dst);
    tg_release(dstd);
    tg_release(t);
    tg_release(td);
    tg_release(tt);
    tg_release(ttd);
    tg_release(s);
    tg_release(x);
    tg_release(big);
    tg_release(bigt);
    tg_release(back);
    kt_assert_no_leak(base);
}

/* ------------------------------------------------------------------ errors */

Test(cuda_pointwise, errors_match_the_cpu)
{
    CC_REQUIRE_DEVICE("cuda_pointwise::errors_match_the_cpu");
    kt_live base = kt_live_now();
    const int64_t shape[1] = { 8 };
    tg_tensor *a = cc_rand(shape, 1, TG_FLOAT32, 81, -1, 1), *ad = cp_cuda(a);
    tg_tensor *i = cc_rand(shape, 1, TG_INT64, 83, -3, 3), *id = cp_cuda(i);
    tg_tensor *z = tg_zeros(TG_INTS(8), .dtype = TG_INT64, .device = TG_DEVICE_CUDA(0));
    tg_tensor *bd = tg_zeros(TG_INTS(8), .dtype = TG_BOOL, .device = TG_DEVICE_CUDA(0));

    cr_assert_null(tg_add(ad, a)); /* a one-dim CPU tensor is not a Scalar */
    kt_assert_error(
        "Expected all tensors to be on the same device, but found at least two devices");
    cr_assert_null(tg_div_mode(id, z, "floor"));
    kt_assert_error("ZeroDivisionError");
    cr_assert_null(tg_div_mode(id, z, "trunc"));
    kt_assert_error("ZeroDivisionError");
    cr_assert_null(tg_div_mode(ad, ad, "round"));
    kt_assert_error(
        "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'");
    cr_assert_null(tg_sub(bd, bd));
    kt_assert_error("Subtraction, the `-` operator, with two bool tensors is not supported");
    cr_assert_null(tg_neg(bd));
    kt_assert_error("Negation, the `-` operator, on a bool tensor is not supported");
    cr_assert_null(tg_add(id, id, .alpha = 0.5));
    kt_assert_error(
        "For integral input tensors, argument alpha must not be a floating point number.");
    cr_assert_null(tg_clamp(id));
    kt_assert_error("torch.clamp: At least one of 'min' or 'max' must not be None");
    cr_assert_null(tg_where(ad, ad, ad));
    kt_assert_error(
        "where expected condition to be a boolean tensor, but got a tensor with dtype Float");
    tg_tensor *o = tg_empty(TG_INTS(8), .dtype = TG_INT64, .device = TG_DEVICE_CUDA(0));
    cr_assert_null(tg_exp_out(ad, o));
    kt_assert_error("result type Float can't be cast to the desired output type Long");
    tg_release(a);
    tg_release(ad);
    tg_release(i);
    tg_release(id);
    tg_release(z);
    tg_release(bd);
    tg_release(o);
    kt_assert_no_leak(base);
}

#endif

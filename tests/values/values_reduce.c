/* Value cases of the reductions (kt_case.h): sum, mean, prod, amax, amin, max.dim, min.dim,
 * argmax, argmin, var, std.
 *
 * A (24, 33, 17) input in every dtype each operator takes, contiguous and as two
 * non-contiguous views (permute(2, 0, 1), a slice with step 2 along dim 1); dims: all, each
 * single dim, {0, 2}, with and without keepdim. Large shapes exercise the full reduction split
 * over many blocks, the thread-per-output path and short rows; NaN wins max/min/argmax with
 * the first NaN's index, ties keep the first occurrence. Bounds: kt_tol_sum (var/std
 * kt_tol_var); max/min values and every index exact. */
#include "kt_case.h"

/* ------------------------------------------------------------------ the sweep */

enum {
    K_SUM,
    K_MEAN,
    K_PROD,
    K_AMAX,
    K_AMIN,
    K_MAXDIM,
    K_MINDIM,
    K_ARGMAX,
    K_ARGMIN,
    K_VAR,
    K_STD
};

/* kind over dims[0 .. nd) (NULL: all dims) */
static int reduce(int kind, tg_tensor *x, const int64_t *dims, int64_t nd, bool keepdim,
                  tg_tensor **y)
{
    tg_int_list dl = dims ? (tg_int_list){ .len = nd, .data = dims } : TG_NO_INTS;
    tg_int_list al = dims ? dl : TG_INTS_EMPTY;
    tg_opt_int d1 = dims ? dims[0] : TG_NONE_INT;
    int64_t d0 = dims ? dims[0] : 0;
    switch (kind) {
    case K_SUM: return kt_y1(y, tg_sum(x, .dim = dl, .keepdim = keepdim));
    case K_MEAN: return kt_y1(y, tg_mean(x, .dim = dl, .keepdim = keepdim));
    case K_PROD: return kt_y1(y, tg_prod_dim(x, d0, .keepdim = keepdim));
    case K_AMAX: return kt_y1(y, tg_amax(x, .dim = al, .keepdim = keepdim));
    case K_AMIN: return kt_y1(y, tg_amin(x, .dim = al, .keepdim = keepdim));
    case K_MAXDIM: {
        tg_values_indices r = tg_max_dim(x, d0, .keepdim = keepdim);
        return kt_y2(y, r.values, r.indices);
    }
    case K_MINDIM: {
        tg_values_indices r = tg_min_dim(x, d0, .keepdim = keepdim);
        return kt_y2(y, r.values, r.indices);
    }
    case K_ARGMAX: return kt_y1(y, tg_argmax(x, .dim = d1, .keepdim = keepdim));
    case K_ARGMIN: return kt_y1(y, tg_argmin(x, .dim = d1, .keepdim = keepdim));
    case K_VAR: return kt_y1(y, tg_var(x, .dim = dl, .correction = 1, .keepdim = keepdim));
    default: return kt_y1(y, tg_std(x, .dim = dl, .correction = 0, .keepdim = keepdim));
    }
}

/* parameter = (view * 2 + keepdim) * 6 + dims: view 0 contiguous, 1 permute(2, 0, 1), 2 a
 * slice with step 2 along dim 1; dims all, {0}, {1}, {2}, {-1}, {0, 2} */
#define SWEEP (3 * 2 * 6)
static const int64_t dimsets[6][2] = {
    { 0, 0 }, { 0, 0 }, { 1, 0 }, { 2, 0 }, { -1, 0 }, { 0, 2 }
};

static int sweep(int kind, tg_tensor *x, int p, tg_tensor **y)
{
    int view = p / 12, keep = p / 6 % 2, ds = p % 6;
    bool single = kind == K_PROD || kind == K_MAXDIM || kind == K_MINDIM;
    bool arg = kind == K_ARGMAX || kind == K_ARGMIN;
    if ((single && (ds == 0 || ds == 5)) || (arg && ds == 5)) return KT_NO_FORM;
    if (view == 1) x = tg_permute(x, TG_INTS(2, 0, 1));
    if (view == 2) x = tg_slice(x, .dim = 1, .step = 2);
    return reduce(kind, x, ds ? dimsets[ds] : NULL, ds == 5 ? 2 : 1, keep, y);
}
static const char *sweep_name(int p)
{
    static const char *views[] = { "contiguous", "permuted", "sliced" };
    static const char *dims[] = { "all", "{0}", "{1}", "{2}", "{-1}", "{0, 2}" };
    static char buf[64];
    snprintf(buf, sizeof buf, "%s, dims %s%s", views[p / 12], dims[p % 6],
             p / 6 % 2 ? ", keepdim" : "");
    return buf;
}

KT_FN(f_sum) { return sweep(K_SUM, x[0], a->param, y); }
KT_FN(f_mean) { return sweep(K_MEAN, x[0], a->param, y); }
KT_FN(f_prod) { return sweep(K_PROD, x[0], a->param, y); }
KT_FN(f_amax) { return sweep(K_AMAX, x[0], a->param, y); }
KT_FN(f_amin) { return sweep(K_AMIN, x[0], a->param, y); }
KT_FN(f_max_dim) { return sweep(K_MAXDIM, x[0], a->param, y); }
KT_FN(f_min_dim) { return sweep(K_MINDIM, x[0], a->param, y); }
KT_FN(f_argmax) { return sweep(K_ARGMAX, x[0], a->param, y); }
KT_FN(f_argmin) { return sweep(K_ARGMIN, x[0], a->param, y); }
KT_FN(f_var) { return sweep(K_VAR, x[0], a->param, y); }
KT_FN(f_std) { return sweep(K_STD, x[0], a->param, y); }

/* ------------------------------------------------------------------ large, NaN and ties */

static const int64_t D0[1] = { 0 }, D1[1] = { 1 };

/* sum all, dim 0, dim 1; argmax dim 0, all; var dim 1; amin all */
KT_FN(f_large)
{
    static const struct {
        int kind;
        const int64_t *dims;
    } ops[7] = { { K_SUM, NULL },    { K_SUM, D0 }, { K_SUM, D1 },   { K_ARGMAX, D0 },
                 { K_ARGMAX, NULL }, { K_VAR, D1 }, { K_AMIN, NULL } };
    return reduce(ops[a->param].kind, x[0], ops[a->param].dims, 1, false, y);
}

/* NaN at (3, 1500), (3, 1700) and (9, 7): amax ... argmin over dim 1, and dim 0 keepdim */
KT_FN(f_nan)
{
    tg_tensor *t = tg_clone(x[0]);
    tg_fill_(tg_select(tg_select(t, 0, 3), 0, 1500), NAN);
    tg_fill_(tg_select(tg_select(t, 0, 3), 0, 1700), NAN);
    tg_fill_(tg_select(tg_select(t, 0, 9), 0, 7), NAN);
    int kind = K_AMAX + a->param / 2;
    return reduce(kind, t, a->param % 2 ? D0 : D1, 1, a->param % 2, y);
}

/* integers with many ties: amax ... argmin over dim 1, argmax and argmin over everything */
KT_FN(f_ties)
{
    if (a->param < 6) return reduce(K_AMAX + a->param, x[0], D1, 1, false, y);
    return reduce(a->param == 6 ? K_ARGMAX : K_ARGMIN, x[0], NULL, 1, false, y);
}

/* ------------------------------------------------------------------ dtype, out=, empty */

KT_FN(f_sum_as_f32) { return kt_y1(y, tg_sum(x[0], .dim = TG_INTS(1), .dtype = TG_FLOAT32)); }
KT_FN(f_mean_as_f64) { return kt_y1(y, tg_mean(x[0], .dim = TG_INTS(0), .dtype = TG_FLOAT64)); }
KT_FN(f_sum_out_i64)
{
    tg_tensor *o = tg_zeros(TG_INTS(7), .dtype = TG_INT64, .device = a->device);
    return kt_y1(y, tg_sum_out(x[0], o, .dim = TG_INTS(1)));
}
KT_FN(f_mean_all) { return kt_y1(y, tg_mean(x[0])); }
KT_FN(f_var_all) { return kt_y1(y, tg_var(x[0])); }
KT_FN(f_empty)
{
    tg_tensor *e = tg_zeros(TG_INTS(0, 3), .device = a->device);
    if (a->param == 0) return kt_y1(y, tg_sum(e, .dim = TG_INTS(0)));
    if (a->param == 1) return kt_y1(y, tg_prod_dim(e, 0));
    return kt_y1(y, tg_mean(e, .dim = TG_INTS(0)));
}
KT_FN(f_amax_empty) { return kt_y1(y, tg_amax(tg_zeros(TG_INTS(0, 3), .device = a->device))); }

/* ------------------------------------------------------------------ the cases */

#define FLOATS_ONLY KT_FLOATS
#define X3                                    \
    {                                         \
        KT_RAND(-4, 4, 24, 33, 17), .seed = 7 \
    }
#define SWEEP_CASE(op, fn, dtypes, tol)                                                       \
    {                                                                                         \
        op, "(24, 33, 17)", fn, { X3 }, dtypes, tol, .count = SWEEP, .param_name = sweep_name \
    }
#define LARGE(s0, s1)                                                                           \
    {                                                                                           \
        "sum.IntList_out", #s0 " x " #s1, f_large, { { KT_RAND(-1, 1, s0, s1), .seed = 100 } }, \
            KT_ONE(TG_FLOAT32), &kt_tol_sum, .count = 7                                         \
    }
#define I32_7_9                                      \
    {                                                \
        KT_RAND_OF(TG_INT32, -5, 5, 7, 9), .seed = 3 \
    }

static const kt_case reduce_cases[] = {
    SWEEP_CASE("sum.IntList_out", f_sum, KT_ALL, &kt_tol_sum),
    SWEEP_CASE("mean.out", f_mean, FLOATS_ONLY, &kt_tol_sum),
    KT_CASE("prod.int_out", "(24, 33, 17) in [0.6, 1.5)", f_prod,
            { { KT_RAND(0.6, 1.5, 24, 33, 17) } }, KT_FLOATS, &kt_tol_sum, .count = SWEEP,
            .param_name = sweep_name),
    KT_CASE("prod.int_out", "(24, 33, 17) integers", f_prod, { { KT_RAND(-3, 4, 24, 33, 17) } },
            { 6, { TG_INT64, TG_INT32, TG_INT16, TG_INT8, TG_UINT8, TG_BOOL } }, &kt_exact,
            .count = SWEEP, .param_name = sweep_name),
    SWEEP_CASE("amax.out", f_amax, KT_ALL, &kt_exact),
    SWEEP_CASE("amin.out", f_amin, KT_ALL, &kt_exact),
    SWEEP_CASE("max.dim_max", f_max_dim, KT_ALL, &kt_exact),
    SWEEP_CASE("min.dim_min", f_min_dim, KT_ALL, &kt_exact),
    SWEEP_CASE("argmax.out", f_argmax, KT_ALL, &kt_exact),
    SWEEP_CASE("argmin.out", f_argmin, KT_ALL, &kt_exact),
    SWEEP_CASE("var.correction_out", f_var, FLOATS_ONLY, &kt_tol_var),
    SWEEP_CASE("std.correction_out", f_std, FLOATS_ONLY, &kt_tol_var),

    LARGE(4194304, 1),
    LARGE(4096, 300),
    LARGE(65536, 40),
    LARGE(3, 1048576),
    KT_CASE("max.dim_max", "NaN wins, first NaN's index", f_nan, { { KT_RAND(-1, 1, 16, 2000) } },
            KT_ONE(TG_FLOAT32), &kt_exact, .count = 12),
    KT_CASE("argmax.out", "int64 ties keep the first", f_ties, { { KT_RAND(0, 3, 16, 2000) } },
            KT_ONE(TG_INT64), &kt_exact, .count = 8),

    KT_CASE("sum.IntList_out", "int32, dtype float32", f_sum_as_f32, { I32_7_9 }, { 0 }, &kt_exact),
    KT_CASE("mean.out", "int32, dtype float64", f_mean_as_f64, { I32_7_9 }, { 0 }, &kt_tol_sum),
    KT_CASE("sum.IntList_out", "int32 into an int64 out=", f_sum_out_i64, { I32_7_9 }, { 0 },
            &kt_exact),
    KT_CASE("sum.IntList_out", "empty: sum 0, prod 1, mean NaN", f_empty, { { 0 } }, { 0 },
            &kt_exact, .count = 3),
    KT_CASE("mean.out", "int32 refused", f_mean_all, { I32_7_9 },
            .error =
                "mean(): could not infer output dtype. Input dtype must be either a floating point "
                "or complex dtype. Got: Int"),
    KT_CASE("amax.out", "empty, no dim", f_amax_empty, { { 0 } },
            .error = "amax(): Expected reduction dim to be specified for input.numel() == 0."),
    KT_CASE("var.correction_out", "int32 refused", f_var_all, { I32_7_9 },
            .error = "std and var only support floating point and complex dtypes"),
};
KT_REGISTER(reduce_cases);

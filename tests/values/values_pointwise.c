/* Value cases of the pointwise kernels (kt_case.h): binary (add, sub, mul, div, div with a
 * rounding mode, pow, maximum, minimum), the comparisons, threshold_backward, unary (neg ...
 * sigmoid), where, clamp (Scalar and Tensor bounds) and copy_.
 *
 * Random inputs in every dtype: equal shapes (33, 65) (the contiguous, vectorised path with a
 * tail) and strided, broadcasting (4, 1, 7) with (3, 7), a zero-dim CPU operand (a host
 * value), mixed dtypes, out= into another dtype and in place; each operator's ranges keep
 * divisors away from zero and logarithms positive. A dtype the CPU refuses is refused on every
 * backend in the same words. Other backends against the CPU within kt_tol_libm (integers and
 * bool exact). */
#include "kt_case.h"

/* ------------------------------------------------------------------ the operators */

KT_FN(f_add) { return kt_y1(y, tg_add(x[0], x[1], .alpha = 2)); }
KT_FN(f_sub) { return kt_y1(y, tg_sub(x[0], x[1], .alpha = 3)); }
KT_FN(f_mul) { return kt_y1(y, tg_mul(x[0], x[1])); }
KT_FN(f_div) { return kt_y1(y, tg_div(x[0], x[1])); }
KT_FN(f_div_trunc) { return kt_y1(y, tg_div_mode(x[0], x[1], "trunc")); }
KT_FN(f_div_floor) { return kt_y1(y, tg_div_mode(x[0], x[1], "floor")); }
KT_FN(f_pow) { return kt_y1(y, tg_pow(x[0], x[1])); }
KT_FN(f_maximum) { return kt_y1(y, tg_maximum(x[0], x[1])); }
KT_FN(f_minimum) { return kt_y1(y, tg_minimum(x[0], x[1])); }
KT_FN(f_eq) { return kt_y1(y, tg_eq(x[0], x[1])); }
KT_FN(f_ne) { return kt_y1(y, tg_ne(x[0], x[1])); }
KT_FN(f_lt) { return kt_y1(y, tg_lt(x[0], x[1])); }
KT_FN(f_le) { return kt_y1(y, tg_le(x[0], x[1])); }
KT_FN(f_gt) { return kt_y1(y, tg_gt(x[0], x[1])); }
KT_FN(f_ge) { return kt_y1(y, tg_ge(x[0], x[1])); }
KT_FN(f_threshold_backward) { return kt_y1(y, tg_threshold_backward(x[0], x[1], 0.25)); }

KT_FN(f_neg) { return kt_y1(y, tg_neg(x[0])); }
KT_FN(f_abs) { return kt_y1(y, tg_abs(x[0])); }
KT_FN(f_relu) { return kt_y1(y, tg_relu(x[0])); }
KT_FN(f_exp) { return kt_y1(y, tg_exp(x[0])); }
KT_FN(f_log) { return kt_y1(y, tg_log(x[0])); }
KT_FN(f_sqrt) { return kt_y1(y, tg_sqrt(x[0])); }
KT_FN(f_rsqrt) { return kt_y1(y, tg_rsqrt(x[0])); }
KT_FN(f_sin) { return kt_y1(y, tg_sin(x[0])); }
KT_FN(f_cos) { return kt_y1(y, tg_cos(x[0])); }
KT_FN(f_tanh) { return kt_y1(y, tg_tanh(x[0])); }
KT_FN(f_sigmoid) { return kt_y1(y, tg_sigmoid(x[0])); }

KT_FN(f_where) { return kt_y1(y, tg_where(x[2], x[0], x[1])); }
/* clamp: 0 Scalar bounds, 1 min only; 2 Tensor bounds x[1], x[2], 3 Tensor max only */
KT_FN(f_clamp)
{
    if (a->param == 0) return kt_y1(y, tg_clamp(x[0], .min = 2, .max = 6.5));
    return kt_y1(y, tg_clamp(x[0], .min = 3));
}
KT_FN(f_clamp_tensor)
{
    if (a->param == 0) return kt_y1(y, tg_clamp_tensor(x[0], .min = x[1], .max = x[2]));
    return kt_y1(y, tg_clamp_tensor(x[0], .max = x[2]));
}
/* copy_ of x[0] into a new tensor of dtype2 on the device */
KT_FN(f_copy)
{
    tg_int_list size = { .len = tg_tensor_dim(x[0]), .data = tg_tensor_sizes(x[0]) };
    tg_tensor *d = tg_empty(size, .dtype = a->dtype2, .device = a->device);
    return kt_y1(y, tg_copy_(d, x[0]));
}
/* copy_ of x[0] (broadcast, or its transpose) into a new (19, 23) float32 tensor */
KT_FN(f_copy_into_19_23)
{
    tg_tensor *d = tg_empty(TG_INTS(19, 23), .dtype = TG_FLOAT32, .device = a->device);
    return kt_y1(y, tg_copy_(d, x[0]));
}
KT_FN(f_copy_transposed_into_19_23)
{
    tg_tensor *d = tg_empty(TG_INTS(19, 23), .dtype = TG_FLOAT32, .device = a->device);
    return kt_y1(y, tg_copy_(d, tg_transpose(x[0], 0, 1)));
}

/* out= into another dtype (converted on store) and in place on a clone */
KT_FN(f_add_out_f64)
{
    tg_tensor *o = tg_empty(TG_INTS(17, 31), .dtype = TG_FLOAT64, .device = a->device);
    tg_tensor *r = tg_add_out(x[0], x[1], o, .alpha = 3);
    return r == o ? kt_y1(y, r) : -1;
}
KT_FN(f_lt_out_f32)
{
    tg_tensor *o = tg_empty(TG_INTS(17, 31), .dtype = TG_FLOAT32, .device = a->device);
    return kt_y1(y, tg_lt_out(x[0], x[1], o));
}
KT_FN(f_mul_)
{
    tg_tensor *t = tg_clone(x[0]);
    return kt_y1(y, tg_mul_(t, x[1]));
}
KT_FN(f_clamp_)
{
    tg_tensor *t = tg_clone(x[0]);
    return kt_y1(y, tg_clamp_(t, .min = -20, .max = 30));
}
KT_FN(f_ge_)
{
    tg_tensor *t = tg_clone(x[0]);
    return kt_y1(y, tg_ge_(t, x[1]));
}
KT_FN(f_tanh_out_f64)
{
    tg_tensor *o = tg_empty(TG_INTS(1001), .dtype = TG_FLOAT64, .device = a->device);
    return kt_y1(y, tg_tanh_out(x[0], o));
}
KT_FN(f_exp_)
{
    tg_tensor *t = tg_clone(x[0]);
    return kt_y1(y, tg_exp_(t));
}

/* refused */
KT_FN(f_div_floor_zero) { return kt_y1(y, tg_div_mode(x[0], tg_zeros_like(x[0]), "floor")); }
KT_FN(f_div_trunc_zero) { return kt_y1(y, tg_div_mode(x[0], tg_zeros_like(x[0]), "trunc")); }
KT_FN(f_div_round) { return kt_y1(y, tg_div_mode(x[0], x[0], "round")); }
KT_FN(f_sub_self) { return kt_y1(y, tg_sub(x[0], x[0])); }
KT_FN(f_add_alpha_half) { return kt_y1(y, tg_add(x[0], x[0], .alpha = 0.5)); }
KT_FN(f_clamp_none) { return kt_y1(y, tg_clamp(x[0])); }
KT_FN(f_where_float) { return kt_y1(y, tg_where(x[0], x[0], x[0])); }
KT_FN(f_exp_out_i64)
{
    tg_tensor *o = tg_empty(TG_INTS(8), .dtype = TG_INT64, .device = a->device);
    return kt_y1(y, tg_exp_out(x[0], o));
}

/* ------------------------------------------------------------------ the cases */

static const kt_pair mixed[] = {
    { TG_FLOAT32, TG_INT64 },  { TG_INT32, TG_FLOAT64 }, { TG_FLOAT16, TG_FLOAT32 },
    { TG_BFLOAT16, TG_INT64 }, { TG_UINT8, TG_INT8 },    { TG_INT64, TG_FLOAT16 },
    { TG_BOOL, TG_FLOAT32 },   { TG_INT16, TG_INT32 },
};
/* without the bool pair, for the operators that refuse bool */
static const kt_pair mixed_no_bool[] = {
    { TG_FLOAT32, TG_INT64 },  { TG_INT32, TG_FLOAT64 }, { TG_FLOAT16, TG_FLOAT32 },
    { TG_BFLOAT16, TG_INT64 }, { TG_UINT8, TG_INT8 },    { TG_INT64, TG_FLOAT16 },
    { TG_INT16, TG_INT32 },
};

#define TOL_REFUSE &kt_tol_libm, .flags = KT_MAY_REFUSE
/* A binary operator's six cases: equal shapes (and strided), broadcast, a CPU zero-dim
 * operand, each in every dtype and in mixed pairs. */
#define BINARY(op, fn, la, ha, lb, hb, dtypes, pairs)                                             \
    { op,                                                                                         \
      "(33, 65)",                                                                                 \
      fn,                                                                                         \
      { { KT_RAND(la, ha, 33, 65), .seed = 11 }, { KT_RAND(lb, hb, 33, 65), .seed = 23 } },       \
      dtypes,                                                                                     \
      &kt_tol_libm,                                                                               \
      .flags = KT_STRIDED | KT_MAY_REFUSE },                                                      \
        { op,                                                                                     \
          "(4, 1, 7) with (3, 7)",                                                                \
          fn,                                                                                     \
          { { KT_RAND(la, ha, 4, 1, 7), .seed = 12 }, { KT_RAND(lb, hb, 3, 7), .seed = 24 } },    \
          dtypes,                                                                                 \
          TOL_REFUSE },                                                                           \
        { op,                                                                                     \
          "a CPU zero-dim operand",                                                               \
          fn,                                                                                     \
          { { KT_RAND(la, ha, 33, 65), .seed = 14 }, { KT_HOST(KT_DT, lb, hb), .seed = 26 } },    \
          dtypes,                                                                                 \
          TOL_REFUSE },                                                                           \
        { op,                                                                                     \
          "mixed (33, 65)",                                                                       \
          fn,                                                                                     \
          { { KT_RAND(la, ha, 33, 65), .seed = 11 },                                              \
            { KT_RAND_OF(KT_DT2, lb, hb, 33, 65), .seed = 23 } },                                 \
          { 0 },                                                                                  \
          TOL_REFUSE,                                                                             \
          KT_PAIRS(pairs) },                                                                      \
        { op,                                                                                     \
          "mixed (4, 1, 7) with (3, 7)",                                                          \
          fn,                                                                                     \
          { { KT_RAND(la, ha, 4, 1, 7), .seed = 12 },                                             \
            { KT_RAND_OF(KT_DT2, lb, hb, 3, 7), .seed = 24 } },                                   \
          { 0 },                                                                                  \
          TOL_REFUSE,                                                                             \
          KT_PAIRS(pairs) },                                                                      \
    {                                                                                             \
        op, "mixed, a CPU zero-dim operand", fn,                                                  \
            { { KT_RAND(la, ha, 33, 65), .seed = 14 }, { KT_HOST(KT_DT2, lb, hb), .seed = 26 } }, \
            { 0 }, TOL_REFUSE, KT_PAIRS(pairs)                                                    \
    }

/* A unary operator's cases: (33, 65) (and strided) and (4, 1, 7), every dtype. */
#define UNARY(op, fn, lo, hi)                                                                 \
    { op,                                                                                     \
      "(33, 65)",                                                                             \
      fn,                                                                                     \
      { { KT_RAND(lo, hi, 33, 65), .seed = 31 } },                                            \
      KT_ALL,                                                                                 \
      &kt_tol_libm,                                                                           \
      .flags = KT_STRIDED | KT_MAY_REFUSE },                                                  \
    {                                                                                         \
        op, "(4, 1, 7)", fn, { { KT_RAND(lo, hi, 4, 1, 7), .seed = 32 } }, KT_ALL, TOL_REFUSE \
    }

static const kt_pair where_pairs[] = {
    { TG_FLOAT32, TG_FLOAT32 },
    { TG_FLOAT16, TG_FLOAT64 },
    { TG_INT64, TG_INT8 },
    { TG_BOOL, TG_BFLOAT16 },
};

#define CLAMP_DTYPES                                                                         \
    {                                                                                        \
        7, { TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16, TG_INT64, TG_INT32, TG_UINT8 } \
    }
/* x in [0, 9), its bounds in [0, 4) and [5, 9) */
#define CLAMP_X(...)                           \
    {                                          \
        KT_RAND(0, 9, __VA_ARGS__), .seed = 51 \
    }
#define CLAMP_LO(...)                          \
    {                                          \
        KT_RAND(0, 4, __VA_ARGS__), .seed = 53 \
    }
#define CLAMP_HI(...)                          \
    {                                          \
        KT_RAND(5, 9, __VA_ARGS__), .seed = 57 \
    }

#define COPY_ROW(s)                                                                               \
    { s, TG_FLOAT32 }, { s, TG_FLOAT64 }, { s, TG_FLOAT16 }, { s, TG_BFLOAT16 }, { s, TG_INT64 }, \
        { s, TG_INT32 }, { s, TG_INT16 }, { s, TG_INT8 }, { s, TG_UINT8 },                        \
    {                                                                                             \
        s, TG_BOOL                                                                                \
    }
static const kt_pair every_pair[] = {
    COPY_ROW(TG_FLOAT32), COPY_ROW(TG_FLOAT64), COPY_ROW(TG_FLOAT16), COPY_ROW(TG_BFLOAT16),
    COPY_ROW(TG_INT64),   COPY_ROW(TG_INT32),   COPY_ROW(TG_INT16),   COPY_ROW(TG_INT8),
    COPY_ROW(TG_UINT8),   COPY_ROW(TG_BOOL),
};

#define I32_17_31(s)                                     \
    {                                                    \
        KT_RAND_OF(TG_INT32, -50, 50, 17, 31), .seed = s \
    }
#define F32_17_31(s)                                     \
    {                                                    \
        KT_RAND_OF(TG_FLOAT32, -3, 3, 17, 31), .seed = s \
    }
#define F32_8                                        \
    {                                                \
        KT_RAND_OF(TG_FLOAT32, -1, 1, 8), .seed = 81 \
    }
#define I64_8                                      \
    {                                              \
        KT_RAND_OF(TG_INT64, -3, 3, 8), .seed = 83 \
    }
#define BOOL_8                                   \
    {                                            \
        KT_RAND_OF(TG_BOOL, 0, 2, 8), .seed = 85 \
    }

static const kt_case pointwise_cases[] = {
    BINARY("add.out", f_add, -4, 4, -4, 4, KT_ALL, mixed),
    BINARY("sub.out", f_sub, -4, 4, -4, 4, KT_NO_BOOL, mixed_no_bool),
    BINARY("mul.out", f_mul, -4, 4, -4, 4, KT_ALL, mixed),
    BINARY("div.out", f_div, -4, 4, 1, 5, KT_ALL, mixed),
    BINARY("div.out_mode", f_div_trunc, -9, 9, 1, 5, KT_NO_BOOL, mixed_no_bool),
    BINARY("div.out_mode", f_div_floor, -9, 9, 1, 5, KT_NO_BOOL, mixed_no_bool),
    BINARY("pow.Tensor_Tensor_out", f_pow, 0.5, 3, 0, 4, KT_NO_BOOL, mixed_no_bool),
    BINARY("maximum.out", f_maximum, -4, 4, -4, 4, KT_ALL, mixed),
    BINARY("minimum.out", f_minimum, -4, 4, -4, 4, KT_ALL, mixed),
    BINARY("eq.Tensor_out", f_eq, -2, 2, -2, 2, KT_ALL, mixed),
    BINARY("ne.Tensor_out", f_ne, -2, 2, -2, 2, KT_ALL, mixed),
    BINARY("lt.Tensor_out", f_lt, -2, 2, -2, 2, KT_ALL, mixed),
    BINARY("le.Tensor_out", f_le, -2, 2, -2, 2, KT_ALL, mixed),
    BINARY("gt.Tensor_out", f_gt, -2, 2, -2, 2, KT_ALL, mixed),
    BINARY("ge.Tensor_out", f_ge, -2, 2, -2, 2, KT_ALL, mixed),
    BINARY("threshold_backward", f_threshold_backward, -2, 2, -1, 1, KT_NO_BOOL, mixed_no_bool),
    KT_CASE("add.out", "int32 into a float64 out=", f_add_out_f64, { I32_17_31(1), I32_17_31(2) },
            { 0 }, &kt_tol_libm),
    KT_CASE("lt.Tensor_out", "into a float32 out=", f_lt_out_f32, { F32_17_31(4), I32_17_31(1) },
            { 0 }, &kt_tol_libm),
    KT_CASE("mul.out", "mul_: float32 *= int32", f_mul_, { F32_17_31(4), I32_17_31(2) }, { 0 },
            &kt_tol_libm),
    KT_CASE("ge.Tensor_out", "ge_: bool stored into float32", f_ge_, { F32_17_31(4), I32_17_31(2) },
            { 0 }, &kt_tol_libm),

    UNARY("neg.out", f_neg, -5, 5),
    UNARY("abs.out", f_abs, -5, 5),
    UNARY("relu.out", f_relu, -5, 5),
    UNARY("exp.out", f_exp, -8, 8),
    UNARY("log.out", f_log, 0.01, 9),
    UNARY("sqrt.out", f_sqrt, 0, 9),
    UNARY("rsqrt.out", f_rsqrt, 0.01, 9),
    UNARY("sin.out", f_sin, -6, 6),
    UNARY("cos.out", f_cos, -6, 6),
    UNARY("tanh.out", f_tanh, -4, 4),
    UNARY("sigmoid.out", f_sigmoid, -9, 9),
    KT_CASE("tanh.out", "float32 into a float64 out=", f_tanh_out_f64,
            { { KT_RAND_OF(TG_FLOAT32, -3, 3, 1001), .seed = 5 } }, { 0 }, &kt_tol_libm),
    KT_CASE("exp.out", "exp_ in place", f_exp_,
            { { KT_RAND_OF(TG_FLOAT32, -3, 3, 1001), .seed = 5 } }, { 0 }, &kt_tol_libm),

    KT_CASE("where.self_out", "(33, 65)", f_where,
            { { KT_RAND(0, 2, 33, 65), .seed = 41 },
              { KT_RAND_OF(KT_DT2, -5, 5, 33, 65), .seed = 43 },
              { KT_RAND_OF(TG_BOOL, 0, 2, 33, 65), .seed = 47 } },
            { 0 }, &kt_tol_libm, .flags = KT_STRIDED, KT_PAIRS(where_pairs)),
    KT_CASE("where.self_out", "(4, 1, 7), (3, 7), (4, 1, 7)", f_where,
            { { KT_RAND(0, 2, 4, 1, 7), .seed = 41 },
              { KT_RAND_OF(KT_DT2, -5, 5, 3, 7), .seed = 43 },
              { KT_RAND_OF(TG_BOOL, 0, 2, 4, 1, 7), .seed = 47 } },
            { 0 }, &kt_tol_libm, KT_PAIRS(where_pairs)),
    KT_CASE("where.self_out", "a CPU zero-dim other", f_where,
            { { KT_RAND(0, 2, 33, 65), .seed = 41 },
              { KT_HOST(KT_DT2, -5, 5), .seed = 43 },
              { KT_RAND_OF(TG_BOOL, 0, 2, 33, 65), .seed = 47 } },
            { 0 }, &kt_tol_libm, KT_PAIRS(where_pairs)),

    KT_CASE("clamp.out", "(33, 65)", f_clamp, { CLAMP_X(33, 65) }, CLAMP_DTYPES, &kt_tol_libm,
            .flags = KT_STRIDED, .count = 2),
    KT_CASE("clamp.out", "(4, 1, 7)", f_clamp, { CLAMP_X(4, 1, 7) }, CLAMP_DTYPES, &kt_tol_libm,
            .count = 2),
    KT_CASE("clamp.Tensor_out", "(33, 65)", f_clamp_tensor,
            { CLAMP_X(33, 65), CLAMP_LO(33, 65), CLAMP_HI(33, 65) }, CLAMP_DTYPES, &kt_tol_libm,
            .flags = KT_STRIDED, .count = 2),
    KT_CASE("clamp.Tensor_out", "(4, 1, 7) with bounds (3, 7)", f_clamp_tensor,
            { CLAMP_X(4, 1, 7), CLAMP_LO(3, 7), CLAMP_HI(3, 7) }, CLAMP_DTYPES, &kt_tol_libm,
            .count = 2),
    KT_CASE("clamp.Tensor_out", "CPU zero-dim bounds", f_clamp_tensor,
            { CLAMP_X(33, 65),
              { KT_HOST(KT_DT, 0, 4), .seed = 53 },
              { KT_HOST(KT_DT, 5, 9), .seed = 57 } },
            CLAMP_DTYPES, &kt_tol_libm, .count = 2),
    KT_CASE("clamp.out", "clamp_ [-20, 30] in place", f_clamp_, { F32_17_31(4) }, { 0 },
            &kt_tol_libm),

    KT_CASE("copy_", "every dtype into every dtype", f_copy,
            { { KT_RAND(-100, 100, 19, 23), .seed = 61 } }, { 0 }, &kt_tol_libm,
            KT_PAIRS(every_pair)),
    KT_CASE("copy_", "a broadcast (23) float64 row", f_copy_into_19_23,
            { { KT_RAND_OF(TG_FLOAT64, -1, 1, 23), .seed = 71 } }, { 0 }, &kt_tol_libm),
    KT_CASE("copy_", "a transposed int32 source", f_copy_transposed_into_19_23,
            { { KT_RAND_OF(TG_INT32, -9, 9, 23, 19), .seed = 73 } }, { 0 }, &kt_tol_libm),
    KT_CASE("copy_", "a CPU zero-dim source", f_copy_into_19_23,
            { { KT_HOST(TG_FLOAT64, -3, 3), .seed = 75 } }, { 0 }, &kt_tol_libm),

    /* refused on every backend */
    KT_CASE("div.out_mode", "floor by zero", f_div_floor_zero, { I64_8 },
            .error = "ZeroDivisionError"),
    KT_CASE("div.out_mode", "trunc by zero", f_div_trunc_zero, { I64_8 },
            .error = "ZeroDivisionError"),
    KT_CASE(
        "div.out_mode", "rounding mode 'round'", f_div_round, { F32_8 },
        .error =
            "div expected rounding_mode to be one of None, 'trunc', or 'floor' but found 'round'"),
    KT_CASE("sub.out", "bool - bool", f_sub_self, { BOOL_8 },
            .error = "Subtraction, the `-` operator, with two bool tensors is not supported"),
    KT_CASE("neg.out", "bool", f_neg, { BOOL_8 },
            .error = "Negation, the `-` operator, on a bool tensor is not supported"),
    KT_CASE("add.out", "integers, alpha 0.5", f_add_alpha_half, { I64_8 },
            .error =
                "For integral input tensors, argument alpha must not be a floating point number."),
    KT_CASE("clamp.out", "no bounds", f_clamp_none, { I64_8 },
            .error = "torch.clamp: At least one of 'min' or 'max' must not be None"),
    KT_CASE(
        "where.self_out", "a float condition", f_where_float, { F32_8 },
        .error =
            "where expected condition to be a boolean tensor, but got a tensor with dtype Float"),
    KT_CASE("exp.out", "float into an int64 out=", f_exp_out_i64, { F32_8 },
            .error = "result type Float can't be cast to the desired output type Long"),
};
KT_REGISTER(pointwise_cases);

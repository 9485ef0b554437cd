/* Value cases of pooling and padding (kt_case.h): max_pool2d_with_indices, its backward and
 * max_pool_double_backward, adaptive_max_pool2d, avg_pool2d, _adaptive_avg_pool2d and their
 * backward, reflection_pad2d, replication_pad2d and their backward, constant_pad_nd (a
 * composite: fill_, slice, copy_), forward and backward, float32, float64 and (pooling)
 * bfloat16, contiguous and with the last two dims transposed; NaN wins max pooling.
 * Bounds: maxima, gathers and indices exact; averages and gradient sums kt_tol_pool. */
#include "kt_case.h"

#define X                                      \
    {                                          \
        KT_RAND(-2, 2, 2, 3, 9, 11), .seed = 7 \
    }
#define POOL_DTYPES                                \
    {                                              \
        3, { TG_FLOAT32, TG_FLOAT64, TG_BFLOAT16 } \
    }

/* ------------------------------------------------------------------ max pooling */

typedef struct max_cfg {
    tg_int_list k, s, p, d;
    bool ceil;
} max_cfg;
static max_cfg max_config(int c)
{
    static const int64_t k3[] = { 3 }, s2[] = { 2 }, p1[] = { 1 }, d1[] = { 1 }, k32[] = { 3, 2 },
                         s21[] = { 2, 1 }, p10[] = { 1, 0 }, d21[] = { 2, 1 }, k2[] = { 2 },
                         p0[] = { 0 };
    max_cfg cfg[3] = {
        { { .len = 1, .data = k3 },
          { .len = 1, .data = s2 },
          { .len = 1, .data = p1 },
          { .len = 1, .data = d1 },
          false },
        { { .len = 2, .data = k32 },
          { .len = 2, .data = s21 },
          { .len = 2, .data = p10 },
          { .len = 2, .data = d21 },
          true },
        { { .len = 1, .data = k2 },
          TG_NO_INTS,
          { .len = 1, .data = p0 },
          { .len = 1, .data = d1 },
          true },
    };
    return cfg[c];
}
static tg_tensors2 max_pool(tg_tensor *x, int c)
{
    max_cfg m = max_config(c);
    return tg_max_pool2d_with_indices(x, m.k, .stride = m.s, .padding = m.p, .dilation = m.d,
                                      .ceil_mode = m.ceil);
}
/* values, indices and (not bfloat16) max_pool_double_backward */
KT_FN(f_max_pool)
{
    tg_tensors2 r = max_pool(x[0], a->param);
    if (a->dtype == TG_BFLOAT16) return kt_y2(y, r.r0, r.r1);
    y[2] = tg_max_pool_double_backward(x[0], r.r1, 2);
    return kt_y2(y, r.r0, r.r1) > 0 && y[2] ? 3 : -1;
}
KT_FN(f_max_pool_backward)
{
    max_cfg m = max_config(a->param);
    tg_tensors2 r = max_pool(x[0], a->param);
    tg_tensor *go = kt_input(a, tg_tensor_sizes(r.r0), 4, a->dtype, 30 + (uint64_t)a->param, -1, 1);
    return kt_y1(y,
                 tg_max_pool2d_with_indices_backward(go, x[0], m.k, m.s, m.p, m.d, m.ceil, r.r1));
}
KT_FN(f_adaptive_max)
{
    tg_tensors2 r = tg_adaptive_max_pool2d(x[0], TG_INTS(4, 5));
    return kt_y2(y, r.r0, r.r1);
}
KT_FN(f_adaptive_max_backward)
{
    tg_tensors2 r = tg_adaptive_max_pool2d(x[0], TG_INTS(4, 5));
    tg_tensor *go = kt_input(a, (int64_t[]){ 2, 3, 4, 5 }, 4, a->dtype, 41, -1, 1);
    return kt_y1(y, tg_adaptive_max_pool2d_backward(go, x[0], r.r1));
}
KT_FN(f_max_pool_nan)
{
    tg_tensors2 r = tg_max_pool2d_with_indices(x[0], TG_INTS(2));
    return kt_y2(y, r.r0, r.r1);
}
static const double nan16[16] = { 1, 2, NAN, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, NAN };

/* ------------------------------------------------------------------ average pooling */

/* config 0: kernel 3, stride 2, padding 1; 1: (3, 2), (2, 3), (1, 1), ceil_mode; 2: ceil_mode,
 * padding not counted; 3: divisor 5: the result and the backward */
KT_FN(f_avg_pool)
{
    int c = a->param;
    tg_int_list k = c == 1 ? TG_INTS(3, 2) : TG_INTS(3), s = c == 1 ? TG_INTS(2, 3) : TG_INTS(2);
    tg_int_list p = c == 1 ? TG_INTS(1, 1) : TG_INTS(1);
    bool ceil = c >= 1, cip = c != 2;
    tg_opt_int div = c == 3 ? 5 : TG_NONE_INT;
    y[0] = tg_avg_pool2d(x[0], k, .stride = s, .padding = p, .ceil_mode = ceil,
                         .count_include_pad = cip, .divisor_override = div);
    if (!y[0]) return -1;
    tg_tensor *go = kt_input(a, tg_tensor_sizes(y[0]), 4, a->dtype, 50 + (uint64_t)c, -1, 1);
    y[1] = tg_avg_pool2d_backward(go, x[0], k, s, p, ceil, cip, div);
    return y[1] ? 2 : -1;
}
/* output (4, 5), (9, 11), (13, 3): the result and the backward */
KT_FN(f_adaptive_avg)
{
    static const int64_t outs[3][2] = { { 4, 5 }, { 9, 11 }, { 13, 3 } };
    const int64_t *o = outs[a->param];
    tg_tensor *go =
        kt_input(a, (int64_t[]){ 2, 3, o[0], o[1] }, 4, a->dtype, 60 + (uint64_t)a->param, -1, 1);
    return kt_y2(y, tg__adaptive_avg_pool2d(x[0], (tg_int_list){ .len = 2, .data = o }),
                 tg__adaptive_avg_pool2d_backward(go, x[0]));
}

/* ------------------------------------------------------------------ padding */

static const int64_t pads[3][4] = { { 1, 2, 3, 4 }, { 8, 0, -2, 5 }, { -3, 10, 0, 0 } };
/* parameter = pads * 2 + reflection (pads 2 with reflection: 10 > W, refused: skipped) */
static tg_tensor *pad(tg_tensor *x, int p)
{
    tg_int_list l = { .len = 4, .data = pads[p / 2] };
    return p % 2 ? tg_reflection_pad2d(x, l) : tg_replication_pad2d(x, l);
}
KT_FN(f_pad)
{
    if (a->param == 5) return KT_NO_FORM;
    return kt_y1(y, pad(x[0], a->param));
}
KT_FN(f_pad_backward)
{
    if (a->param == 5) return KT_NO_FORM;
    tg_tensor *r = pad(x[0], a->param);
    if (!r) return -1;
    tg_tensor *go =
        kt_input(a, tg_tensor_sizes(r), 4, a->dtype, 70 + (uint64_t)a->param / 2, -1, 1);
    tg_int_list l = { .len = 4, .data = pads[a->param / 2] };
    return kt_y1(y, a->param % 2 ? tg_reflection_pad2d_backward(go, x[0], l)
                                 : tg_replication_pad2d_backward(go, x[0], l));
}
KT_FN(f_constant_pad)
{
    return kt_y1(y, tg_constant_pad_nd(x[0], TG_INTS(2, -1, 0, 3, 1, 1), .value = 1.5));
}
KT_FN(f_reflection_too_wide) { return kt_y1(y, tg_reflection_pad2d(x[0], TG_INTS(6, 1, 1, 1))); }
KT_FN(f_max_pool_too_small) { return kt_y1(y, tg_max_pool2d_with_indices(x[0], TG_INTS(6)).r0); }

#define ZEROS_2_3_5_6                            \
    {                                            \
        KT_RAND_OF(TG_FLOAT32, 0, 0, 2, 3, 5, 6) \
    }

static const kt_case pool_cases[] = {
    KT_CASE("max_pool2d_with_indices", "3 configs, and max_pool_double_backward", f_max_pool, { X },
            POOL_DTYPES, &kt_exact, .flags = KT_STRIDED, .count = 3,
            KT_ALSO("max_pool_double_backward")),
    KT_CASE("max_pool2d_with_indices_backward", "3 configs", f_max_pool_backward, { X },
            POOL_DTYPES, &kt_tol_pool, .flags = KT_STRIDED, .count = 3),
    KT_CASE("adaptive_max_pool2d", "to (4, 5)", f_adaptive_max, { X }, POOL_DTYPES, &kt_exact,
            .flags = KT_STRIDED),
    KT_CASE("adaptive_max_pool2d_backward", "to (4, 5)", f_adaptive_max_backward, { X },
            POOL_DTYPES, &kt_tol_pool, .flags = KT_STRIDED),
    KT_CASE("max_pool2d_with_indices", "NaN wins", f_max_pool_nan,
            { { KT_VALUES(nan16, 1, 4, 4) } }, KT_ONE(TG_FLOAT32), &kt_exact),
    KT_CASE("avg_pool2d", "4 configs, and the backward", f_avg_pool, { X }, POOL_DTYPES,
            &kt_tol_pool, .flags = KT_STRIDED, .count = 4, KT_ALSO("avg_pool2d_backward")),
    KT_CASE("_adaptive_avg_pool2d", "3 output sizes, and the backward", f_adaptive_avg, { X },
            POOL_DTYPES, &kt_tol_pool, .flags = KT_STRIDED, .count = 3,
            KT_ALSO("_adaptive_avg_pool2d_backward")),
    /* CPU padding has no bfloat16, as PyTorch's */
    KT_CASE("replication_pad2d", "3 paddings, replication and reflection", f_pad, { X }, KT_F32_F64,
            &kt_exact, .flags = KT_STRIDED, .count = 6, KT_ALSO("reflection_pad2d")),
    KT_CASE("replication_pad2d_backward", "3 paddings, replication and reflection", f_pad_backward,
            { X }, KT_F32_F64, &kt_tol_pool, .flags = KT_STRIDED, .count = 6,
            KT_ALSO("reflection_pad2d_backward")),
    KT_CASE("constant_pad_nd", "(2, -1, 0, 3, 1, 1), 1.5", f_constant_pad, { X }, KT_F32_F64,
            &kt_exact, .flags = KT_STRIDED),
    KT_CASE("reflection_pad2d", "padding 6 of width 6", f_reflection_too_wide, { ZEROS_2_3_5_6 },
            .error =
                "Argument #4: Padding size should be less than the corresponding input dimension, "
                "but got: padding (6, 1) at dimension 3 of input 4"),
    KT_CASE(
        "max_pool2d_with_indices", "kernel 6 of height 5", f_max_pool_too_small, { ZEROS_2_3_5_6 },
        .error = "Given input size: (3x5x6). Calculated output size: (3x0x1). Output size is too "
                 "small"),
};
KT_REGISTER(pool_cases);

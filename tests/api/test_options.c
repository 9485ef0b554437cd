/* Options spelled as a newcomer spells them mean what they say (docs/c-api.md, "Options"): a
 * plain value for every optional kind, 0 included (the value the old { has_value, value }
 * structs turned into None). Expected values are worked out by hand, or by a loop written here
 * (attention). tests/api/option_spellings.sh checks the spellings that must not compile. */
#include "kt_util.h"

#define T(shape_, ...)                                                  \
    kt_tensor((const double[]){ __VA_ARGS__ }, (const int64_t[])shape_, \
              (int64_t)(sizeof((const int64_t[])shape_) / sizeof(int64_t)), TG_FLOAT64)
#define SHAPE(...)  \
    {               \
        __VA_ARGS__ \
    }

/* [[1, 5, 2], [7, 0, 3]] */
static tg_tensor *m23(void) { return T(SHAPE(2, 3), 1, 5, 2, 7, 0, 3); }

/* int?: `.dim = 1` reduces over dim 1, and `.dim = 0` over dim 0 (not None: all elements). */
Test(options, int_optional)
{
    tg_scope_begin();
    tg_tensor *x = m23();
    kt_assert_close(tg_argmax(x, .dim = 1), (const double[]){ 1, 0 }, 2, 0, 0, "argmax dim 1");
    kt_assert_close(tg_argmax(x, .dim = 0), (const double[]){ 1, 0, 1 }, 3, 0, 0, "argmax dim 0");
    kt_assert_close(tg_argmax(x), (const double[]){ 3 }, 1, 0, 0, "argmax, dim None");
    kt_assert_close(tg_argmax(x, .dim = TG_NONE_INT), (const double[]){ 3 }, 1, 0, 0,
                    "argmax, dim TG_NONE_INT");
    tg_tensor *r = T(SHAPE(5), 0, 1, 2, 3, 4);
    kt_assert_close(tg_slice(r, .start = 2), (const double[]){ 2, 3, 4 }, 3, 0, 0, "slice 2:");
    kt_assert_close(tg_slice(r, .start = 0, .end = 2), (const double[]){ 0, 1 }, 2, 0, 0,
                    "slice 0:2");
    kt_assert_close(tg_slice(r, .end = -1, .step = 2), (const double[]){ 0, 2 }, 2, 0, 0,
                    "slice :-1:2");
    tg_scope_end();
}

/* Scalar?: clamp's bounds, 0 included. */
Test(options, scalar_optional)
{
    tg_scope_begin();
    tg_tensor *x = T(SHAPE(4), -2, 1, 4, 6);
    kt_assert_close(tg_clamp(x, .min = 3), (const double[]){ 3, 3, 4, 6 }, 4, 0, 0, "min 3");
    kt_assert_close(tg_clamp(x, .max = 3), (const double[]){ -2, 1, 3, 3 }, 4, 0, 0, "max 3");
    kt_assert_close(tg_clamp(x, .min = 0), (const double[]){ 0, 1, 4, 6 }, 4, 0, 0, "min 0");
    kt_assert_close(tg_clamp(x, .min = 0.5, .max = 4.5), (const double[]){ 0.5, 1, 4, 4.5 }, 4, 0,
                    0, "min 0.5 max 4.5");
    /* A NaN that is not TG_NONE_FLOAT is a value: clamp(min=nan) is NaN everywhere. */
    tg_tensor *n = tg_clamp(x, .min = NAN);
    cr_expect(isnan(tg_item(tg_select(n, 0, 2))), "clamp(min=nan) keeps the NaN");
    tg_scope_end();
}

/* float?: rms_norm's eps. x = [3, 4]: mean of squares 12.5. */
Test(options, float_optional)
{
    tg_scope_begin();
    tg_tensor *x = T(SHAPE(1, 2), 3, 4);
    double d = sqrt(12.5 + 1e-2);
    kt_assert_close(tg_rms_norm(x, TG_INTS(2), .eps = 1e-2), (const double[]){ 3 / d, 4 / d }, 2,
                    1e-15, 0, "eps 1e-2");
    d = sqrt(12.5 + 0.0);
    kt_assert_close(tg_rms_norm(x, TG_INTS(2), .eps = 0), (const double[]){ 3 / d, 4 / d }, 2,
                    1e-15, 0, "eps 0");
    cr_expect(tg_is_none_float(TG_NONE_FLOAT) && !tg_is_none_float(NAN) && !tg_is_none_float(0.0));
    tg_scope_end();
}

/* softmax(q k^T * scale) v for one head, by loops. q, k: [L, E], v: [L, E]. */
static void attention_by_hand(const double *q, const double *k, const double *v, int L, int E,
                              double scale, double *out)
{
    for (int i = 0; i < L; i++) {
        double s[8], m = -INFINITY, z = 0;
        for (int j = 0; j < L; j++) {
            s[j] = 0;
            for (int e = 0; e < E; e++) s[j] += q[i * E + e] * k[j * E + e];
            s[j] *= scale;
            m = fmax(m, s[j]);
        }
        for (int j = 0; j < L; j++) z += s[j] = exp(s[j] - m);
        for (int e = 0; e < E; e++) {
            out[i * E + e] = 0;
            for (int j = 0; j < L; j++) out[i * E + e] += s[j] / z * v[j * E + e];
        }
    }
}

/* float?: `.scale = 0.5` scales the scores by 0.5 (the old spelling gave scale 0: uniform
 * attention); left out, 1/sqrt(E). */
Test(options, attention_scale)
{
    enum { L = 3, E = 2 };
    const double q[L * E] = { 1, 2, -1, 0.5, 3, -2 }, k[L * E] = { 0.5, -1, 2, 1, -0.5, 1.5 },
                       v[L * E] = { 1, 0, 0, 1, 2, 2 };
    tg_scope_begin();
    tg_tensor *tq = T(SHAPE(1, 1, L, E), 1, 2, -1, 0.5, 3, -2);
    tg_tensor *tk = T(SHAPE(1, 1, L, E), 0.5, -1, 2, 1, -0.5, 1.5);
    tg_tensor *tv = T(SHAPE(1, 1, L, E), 1, 0, 0, 1, 2, 2);
    double want[L * E];
    attention_by_hand(q, k, v, L, E, 0.5, want);
    kt_assert_close(tg_scaled_dot_product_attention(tq, tk, tv, .scale = 0.5), want, L * E, 1e-12,
                    1e-12, "scale 0.5");
    attention_by_hand(q, k, v, L, E, 1 / sqrt(2.0), want);
    kt_assert_close(tg_scaled_dot_product_attention(tq, tk, tv), want, L * E, 1e-12, 1e-12,
                    "scale None");
    tg_scope_end();
}

/* bool?: native_dropout's train. p = 1 zeroes everything when training; train = false is the
 * identity; None trains (PyTorch: `train is None or train`). */
Test(options, bool_optional)
{
    tg_scope_begin();
    tg_tensor *x = T(SHAPE(3), 1, 2, 3);
    kt_assert_close(tg_native_dropout(x, 1.0, false).r0, (const double[]){ 1, 2, 3 }, 3, 0, 0,
                    "train false");
    kt_assert_close(tg_native_dropout(x, 1.0, true).r0, (const double[]){ 0, 0, 0 }, 3, 0, 0,
                    "train true");
    kt_assert_close(tg_native_dropout(x, 1.0, TG_NONE_BOOL).r0, (const double[]){ 0, 0, 0 }, 3, 0,
                    0, "train None");
    tg_scope_end();
}

/* int[1]? and int[N]: one int stands for the list (PyTorch's `sum(dim=0)`, `stride=1`). */
Test(options, int_list_plain_number)
{
    tg_scope_begin();
    tg_tensor *x = m23();
    kt_assert_close(tg_sum(x, .dim = 1), (const double[]){ 8, 10 }, 2, 0, 0, "sum dim 1");
    kt_assert_close(tg_sum(x, .dim = 0), (const double[]){ 8, 5, 5 }, 3, 0, 0, "sum dim 0");
    kt_assert_close(tg_sum(x, .dim = -1, .keepdim = true), (const double[]){ 8, 10 }, 2, 0, 0,
                    "sum dim -1");
    kt_assert_close(tg_sum(x, .dim = TG_INTS(0, 1)), (const double[]){ 18 }, 1, 0, 0, "sum both");
    kt_assert_close(tg_sum(x, .dim = TG_NO_INTS), (const double[]){ 18 }, 1, 0, 0, "sum None");
    /* 3x3 input, 2x2 windows: stride 1 gives 2x2 maxima, the default (stride = kernel) 1x1. */
    tg_tensor *img = T(SHAPE(1, 3, 3), 1, 2, 3, 4, 5, 6, 7, 8, 9);
    tg_tensor *p1 = tg_max_pool2d(img, TG_INTS(2), .stride = 1);
    kt_assert_shape(p1, (const int64_t[]){ 1, 2, 2 }, 3);
    kt_assert_close(p1, (const double[]){ 5, 6, 8, 9 }, 4, 0, 0, "max_pool2d stride 1");
    kt_assert_close(tg_max_pool2d(img, TG_INTS(2, 2)), (const double[]){ 5 }, 1, 0, 0,
                    "max_pool2d stride default");
    kt_assert_close(tg_max_pool2d(img, TG_INTS(3), .padding = 1, .stride = 3),
                    (const double[]){ 5 }, 1, 0, 0, "max_pool2d padding 1");
    tg_scope_end();
}

/* ScalarType? and the named int values. */
Test(options, dtype_and_reduction)
{
    tg_scope_begin();
    tg_tensor *x = m23(), *y = T(SHAPE(2, 3), 0, 5, 2, 7, 1, 1);
    cr_expect_eq(tg_tensor_dtype(tg_sum(tg_to(x, TG_FLOAT32), .dtype = TG_FLOAT64)), TG_FLOAT64);
    /* squared differences 1, 0, 0, 0, 1, 4 */
    kt_assert_close(tg_mse_loss(x, y), (const double[]){ 1.0 }, 1, 1e-15, 0, "mean");
    kt_assert_close(tg_mse_loss(x, y, .reduction = TG_REDUCTION_SUM), (const double[]){ 6 }, 1, 0,
                    0, "sum");
    kt_assert_close(tg_mse_loss(x, y, .reduction = TG_REDUCTION_NONE),
                    (const double[]){ 1, 0, 0, 0, 1, 4 }, 6, 0, 0, "none");
    tg_scope_end();
}

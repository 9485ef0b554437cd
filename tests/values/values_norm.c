/* Value cases of batch norm, group norm and upsampling (kt_case.h): native_batch_norm
 * (training with running statistics, eval, no affine, a transposed input) and its backward,
 * native_group_norm (affine or not) and its backward, upsample_nearest2d and
 * upsample_bilinear2d (align_corners both ways, output sizes and scales) and their backward;
 * float32 and float64. Bounds: kt_tol_norm, kt_tol_norm_backward (the statistics sum in double
 * in different orders), nearest exact, bilinear and the upsampling gradients kt_tol_atomic. */
#include "kt_case.h"

/* ------------------------------------------------------------------ batch norm */

/* x (5, 3, 7, 9), grad_output, weight, bias, running mean and var */
#define BN_INPUTS                                                                         \
    { KT_RAND(-2, 3, 5, 3, 7, 9), .seed = 1 }, { KT_RAND(-1, 1, 5, 3, 7, 9), .seed = 2 }, \
        { KT_RAND(-1, 1, 3), .seed = 3 }, { KT_RAND(-1, 1, 3), .seed = 4 },               \
        { KT_RAND(-1, 1, 3), .seed = 5 },                                                 \
    {                                                                                     \
        KT_RAND(0.5, 2, 3), .seed = 6                                                     \
    }

/* mode 0: training with running statistics, 1: eval, 2: training without affine or running
 * statistics: the three results and the running statistics after the call */
static int batch_norm(tg_tensor *const *x, int mode, tg_tensor **y, tg_tensors3 *f)
{
    bool affine = mode != 2;
    *f = tg_native_batch_norm(x[0], affine ? x[2] : NULL, affine ? x[3] : NULL,
                              affine ? x[4] : NULL, affine ? x[5] : NULL, mode != 1, 0.1, 1e-5);
    kt_y3(y, *f);
    if (!affine) return 3;
    y[3] = x[4];
    y[4] = x[5];
    return 5;
}
KT_FN(f_batch_norm)
{
    tg_tensors3 f;
    return batch_norm(x, a->param, y, &f);
}
/* the backward from this device's statistics */
KT_FN(f_batch_norm_backward)
{
    tg_tensors3 f;
    batch_norm(x, a->param, y, &f);
    bool affine = a->param != 2;
    return kt_y3(y, tg_native_batch_norm_backward(x[1], x[0], affine ? x[2] : NULL,
                                                  affine ? x[4] : NULL, affine ? x[5] : NULL, f.r1,
                                                  f.r2, a->param != 1, 1e-5,
                                                  TG_BOOLS(true, true, true)));
}
KT_FN(f_batch_norm_transposed)
{
    return kt_y3(
        y, tg_native_batch_norm(tg_transpose(x[0], 2, 3), x[2], x[3], NULL, NULL, true, 0.1, 1e-5));
}

/* ------------------------------------------------------------------ group norm */

#define GN_INPUTS                                                                           \
    { KT_RAND(-2, 3, 3, 6, 5, 7), .seed = 11 }, { KT_RAND(-1, 1, 3, 6, 5, 7), .seed = 12 }, \
        { KT_RAND(-1, 1, 6), .seed = 13 },                                                  \
    {                                                                                       \
        KT_RAND(-1, 1, 6), .seed = 14                                                       \
    }
static tg_tensors3 group_norm(tg_tensor *const *x, bool affine)
{
    return tg_native_group_norm(x[0], affine ? x[2] : NULL, affine ? x[3] : NULL, 3, 6, 35, 3,
                                1e-5);
}
KT_FN(f_group_norm) { return kt_y3(y, group_norm(x, a->param)); }
KT_FN(f_group_norm_backward)
{
    tg_tensors3 f = group_norm(x, a->param);
    return kt_y3(y, tg_native_group_norm_backward(x[1], x[0], f.r1, f.r2, a->param ? x[2] : NULL, 3,
                                                  6, 35, 3, TG_BOOLS(true, true, true)));
}

/* ------------------------------------------------------------------ upsampling */

/* parameter = size * 2 + scales: output sizes (11, 13), (3, 4), (10, 12), (5, 6); scales none
 * or (2.3, 1.7); the grad_output of that size */
static const int64_t up_sizes[4][2] = { { 11, 13 }, { 3, 4 }, { 10, 12 }, { 5, 6 } };
typedef struct up_args {
    tg_int_list o;
    tg_opt_float sh, sw;
    tg_tensor *go;
} up_args;
static up_args upsample_args(const kt_arg *a)
{
    int s = a->param / 2, sc = a->param % 2;
    up_args u = {
        { .len = 2, .data = up_sizes[s] }, sc ? 2.3 : TG_NONE_FLOAT, sc ? 1.7 : TG_NONE_FLOAT, NULL
    };
    u.go = kt_input(a, (int64_t[]){ 2, 3, up_sizes[s][0], up_sizes[s][1] }, 4, a->dtype,
                    30 + (uint64_t)s, -1, 1);
    return u;
}
KT_FN(f_nearest)
{
    up_args u = upsample_args(a);
    return kt_y1(y, tg_upsample_nearest2d(x[0], u.o, .scales_h = u.sh, .scales_w = u.sw));
}
KT_FN(f_nearest_backward)
{
    up_args u = upsample_args(a);
    return kt_y1(y, tg_upsample_nearest2d_backward(u.go, u.o, TG_INTS(2, 3, 5, 6), .scales_h = u.sh,
                                                   .scales_w = u.sw));
}
/* align_corners false and true, each on x and on its transpose in the last two dims, and the
 * backward */
KT_FN(f_bilinear)
{
    up_args u = upsample_args(a);
    tg_tensor *xt = tg_transpose(x[0], 2, 3);
    for (int ac = 0; ac < 2; ac++) {
        y[3 * ac] = tg_upsample_bilinear2d(x[0], u.o, ac, .scales_h = u.sh, .scales_w = u.sw);
        y[3 * ac + 1] = tg_upsample_bilinear2d(xt, u.o, ac, .scales_h = u.sh, .scales_w = u.sw);
        y[3 * ac + 2] = tg_upsample_bilinear2d_backward(u.go, u.o, TG_INTS(2, 3, 5, 6), ac,
                                                        .scales_h = u.sh, .scales_w = u.sw);
        if (!y[3 * ac] || !y[3 * ac + 1] || !y[3 * ac + 2]) return -1;
    }
    return 6;
}

#define UP_X                                   \
    {                                          \
        KT_RAND(-2, 3, 2, 3, 5, 6), .seed = 21 \
    }

static const kt_case norm_cases[] = {
    KT_CASE("native_batch_norm", "(5, 3, 7, 9): training, eval, no affine", f_batch_norm,
            { BN_INPUTS }, KT_F32_F64, &kt_tol_norm, .count = 3),
    KT_CASE("native_batch_norm_backward", "training, eval, no affine", f_batch_norm_backward,
            { BN_INPUTS }, KT_F32_F64, &kt_tol_norm_backward, .count = 3),
    KT_CASE("native_batch_norm", "a transposed input", f_batch_norm_transposed, { BN_INPUTS },
            KT_F32_F64, &kt_tol_norm),
    KT_CASE("native_group_norm", "(3, 6, 5, 7), 3 groups, affine or not", f_group_norm,
            { GN_INPUTS }, KT_F32_F64, &kt_tol_norm, .count = 2),
    KT_CASE("native_group_norm_backward", "affine or not", f_group_norm_backward, { GN_INPUTS },
            KT_F32_F64, &kt_tol_norm_backward, .count = 2),
    KT_CASE("upsample_nearest2d", "(2, 3, 5, 6) to 4 sizes, scales", f_nearest, { UP_X },
            KT_F32_F64, &kt_exact, .count = 8),
    KT_CASE("upsample_nearest2d_backward", "4 sizes, scales", f_nearest_backward, { UP_X },
            KT_F32_F64, &kt_tol_atomic, .count = 8),
    KT_CASE("upsample_bilinear2d", "4 sizes, scales, align_corners, transposed, backward",
            f_bilinear, { UP_X }, KT_F32_F64, &kt_tol_atomic, .count = 8,
            KT_ALSO("upsample_bilinear2d_backward")),
};
KT_REGISTER(norm_cases);

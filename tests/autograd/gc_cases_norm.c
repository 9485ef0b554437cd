/* Gradcheck cases of the normalization and resizing operators (kernels/cpu/norm.c,
 * kernels/composite/norm.c). Running statistics are constant positive inputs; in training
 * they are updated in place on every call, which the outputs do not depend on. */
#include "gradcheck.h"
#include "tg_cover.h"
#include "kt_util.h"

/* batchnorm_double_backward (native_batch_norm_backward's derivative) runs in the
 * gradgradchecks of batch norm below. */
TG_COVERS("batchnorm_double_backward");

/* A constant positive (n) vector: running_var. */
#define POSC(n_)                                                                     \
    {                                                                                \
        .used = true, .ndim = 1, .shape = { n_ }, .domain = GC_POS, .constant = true \
    }

static int first3(tg_tensors3 r, tg_tensor **y)
{
    y[0] = r.r0;
    kt_release_all(r.r1, r.r2);
    return 1;
}

GC_FN(f_native_bn_train)
{
    return first3(tg_native_batch_norm(x[0], x[1], x[2], NULL, NULL, true, 0.1, 1e-5), y);
}
GC_FN(f_native_bn_train_running)
{
    return first3(tg_native_batch_norm(x[0], NULL, NULL, x[1], x[2], true, 0.1, 1e-5), y);
}
GC_FN(f_native_bn_eval)
{
    return first3(tg_native_batch_norm(x[0], x[1], x[2], x[3], x[4], false, 0.1, 1e-5), y);
}
GC_FN(f_bn_train)
{
    return gc_y1(y, tg_batch_norm(x[0], x[1], x[2], NULL, NULL, true, 0.1, 1e-5, false));
}
GC_FN(f_bn_eval)
{
    return gc_y1(y, tg_batch_norm(x[0], x[1], NULL, x[2], x[3], false, 0.1, 1e-5, false));
}
/* native_batch_norm_backward differentiated (batchnorm_double_backward); the statistics are
 * functions of the input, as in PyTorch's double backward. */
GC_FN(f_native_bn_backward)
{
    tg_tensors3 r = tg_native_batch_norm(x[1], x[2], NULL, NULL, NULL, true, 0.1, 1e-5);
    tg_tensors3 g = tg_native_batch_norm_backward(x[0], x[1], x[2], NULL, NULL, r.r1, r.r2, true,
                                                  1e-5, TG_BOOLS(true, true, false));
    kt_release_all(r.r0, r.r1, r.r2);
    return gc_y_first2(y, g);
}
GC_FN(f_native_bn_backward_eval)
{
    tg_tensors3 g = tg_native_batch_norm_backward(x[0], x[1], x[2], x[3], x[4], NULL, NULL, false,
                                                  1e-5, TG_BOOLS(true, true, true));
    y[0] = g.r0;
    y[1] = g.r1;
    y[2] = g.r2;
    return 3;
}
GC_FN(f_native_gn) { return first3(tg_native_group_norm(x[0], x[1], x[2], 2, 6, 3, 3, 1e-5), y); }
GC_FN(f_native_gn_plain)
{
    return first3(tg_native_group_norm(x[0], NULL, NULL, 3, 4, 2, 2, 1e-5), y);
}
GC_FN(f_native_gn_backward)
{
    tg_tensors3 r = tg_native_group_norm(x[1], x[2], NULL, 2, 4, 3, 2, 1e-5);
    tg_tensors3 g = tg_native_group_norm_backward(x[0], x[1], r.r1, r.r2, x[2], 2, 4, 3, 2,
                                                  TG_BOOLS(true, true, false));
    kt_release_all(r.r0, r.r1, r.r2);
    return gc_y_first2(y, g);
}
GC_FN(f_gn) { return gc_y1(y, tg_group_norm(x[0], 2, .weight = x[1], .bias = x[2])); }
GC_FN(f_in)
{
    return gc_y1(y, tg_instance_norm(x[0], x[1], x[2], NULL, NULL, true, 0.1, 1e-5, false));
}
GC_FN(f_in_running)
{
    return gc_y1(y, tg_instance_norm(x[0], NULL, NULL, x[1], x[2], true, 0.1, 1e-5, false));
}
GC_FN(f_nearest_up) { return gc_y1(y, tg_upsample_nearest2d(x[0], TG_INTS(5, 7))); }
GC_FN(f_nearest_scaled)
{
    return gc_y1(y, tg_upsample_nearest2d(x[0], TG_INTS(4, 3), .scales_h = 1.5, .scales_w = 0.7));
}
GC_FN(f_nearest_bw)
{
    return gc_y1(y, tg_upsample_nearest2d_backward(x[0], TG_INTS(5, 7), TG_INTS(1, 2, 3, 4)));
}
GC_FN(f_bilinear) { return gc_y1(y, tg_upsample_bilinear2d(x[0], TG_INTS(5, 7), false)); }
GC_FN(f_bilinear_ac_scaled)
{
    return gc_y1(
        y, tg_upsample_bilinear2d(x[0], TG_INTS(4, 3), true, .scales_h = 1.5, .scales_w = 0.7));
}
GC_FN(f_bilinear_scaled)
{
    return gc_y1(
        y, tg_upsample_bilinear2d(x[0], TG_INTS(4, 3), false, .scales_h = 1.5, .scales_w = 0.7));
}
GC_FN(f_bilinear_bw)
{
    return gc_y1(y,
                 tg_upsample_bilinear2d_backward(x[0], TG_INTS(5, 7), TG_INTS(1, 2, 3, 4), true));
}

GC_FN(f_nearest_vec)
{
    return gc_y1(y, tg_upsample_nearest2d_vec(x[0], TG_NO_INTS, TG_FLOATS(1.7, 1.4)));
}
GC_FN(f_nearest_bw_vec)
{
    y[0] =
        tg_upsample_nearest2d_backward_vec(x[0], TG_INTS(5, 7), TG_INTS(1, 2, 3, 4), TG_NO_FLOATS);
    return 1;
}
GC_FN(f_bilinear_vec)
{
    return gc_y1(y, tg_upsample_bilinear2d_vec(x[0], TG_NO_INTS, false, TG_FLOATS(2.0, 1.5)));
}
GC_FN(f_bilinear_bw_vec)
{
    return gc_y1(y, tg_upsample_bilinear2d_backward_vec(x[0], TG_NO_INTS, TG_INTS(1, 2, 3, 4),
                                                        false, TG_FLOATS(2.0, 1.5)));
}

static const gc_case norm_cases[] = {
    GC_CASE("upsample_nearest2d.vec", "scale_factors", f_nearest_vec, { REAL(1, 2, 3, 4) },
            .gradgrad = true),
    GC_CASE("upsample_nearest2d_backward.vec", "output_size", f_nearest_bw_vec,
            { REAL(1, 2, 5, 7) }, .gradgrad = true),
    GC_CASE("upsample_bilinear2d.vec", "scale_factors, transposed", f_bilinear_vec,
            { REAL_T(1, 2, 3, 4) }, .gradgrad = true),
    GC_CASE("upsample_bilinear2d_backward.vec", "scale_factors", f_bilinear_bw_vec,
            { REAL(1, 2, 6, 6) }, .gradgrad = true),
    GC_CASE("native_batch_norm", "training, affine", f_native_bn_train,
            { REAL(4, 3, 2), REAL(3), REAL(3) }, .gradgrad = true),
    GC_CASE("native_batch_norm", "training, running statistics, transposed (N, C)",
            f_native_bn_train_running, { REAL_T(5, 3), CONST(3), POSC(3) }, .gradgrad = true),
    GC_CASE("native_batch_norm", "eval, affine", f_native_bn_eval,
            { REAL(2, 3, 2), REAL(3), REAL(3), CONST(3), POSC(3) }, .gradgrad = true),
    GC_CASE("native_batch_norm_backward", "double backward", f_native_bn_backward,
            { REAL(4, 3), REAL(4, 3), REAL(3) }),
    GC_CASE("native_batch_norm_backward", "eval, grad_out, input, weight, bias",
            f_native_bn_backward_eval,
            { REAL(3, 2, 2), REAL(3, 2, 2), REAL(2), CONST(2), POSC(2) }),
    GC_CASE("batch_norm", "training, strided", f_bn_train, { REAL_S(3, 2, 3), REAL(2), REAL(2) },
            .gradgrad = true),
    GC_CASE("batch_norm", "eval", f_bn_eval, { REAL(3, 2, 2), REAL(2), CONST(2), POSC(2) }),
    GC_CASE("native_group_norm", "affine", f_native_gn, { REAL(2, 6, 3), REAL(6), REAL(6) }),
    GC_CASE("native_group_norm", "no affine, transposed", f_native_gn_plain, { REAL_T(3, 4, 2) }),
    GC_CASE("native_group_norm_backward", "grad_out, input, weight", f_native_gn_backward,
            { REAL(2, 4, 3), REAL(2, 4, 3), REAL(4) },
            .expect_error = "native_group_norm_backward"),
    GC_CASE("group_norm", "affine, strided", f_gn, { REAL_S(2, 4, 3), REAL(4), REAL(4) }),
    GC_CASE("instance_norm", "affine", f_in, { REAL(2, 3, 4), REAL(3), REAL(3) }),
    GC_CASE("instance_norm", "running statistics, transposed", f_in_running,
            { REAL_T(2, 3, 4), CONST(3), POSC(3) }),
    GC_CASE("upsample_nearest2d", "(3, 4) -> (5, 7)", f_nearest_up, { REAL(1, 2, 3, 4) },
            .gradgrad = true),
    GC_CASE("upsample_nearest2d", "scales, transposed", f_nearest_scaled, { REAL_T(2, 1, 3, 4) },
            .gradgrad = true),
    GC_CASE("upsample_nearest2d_backward", "(5, 7) -> (3, 4)", f_nearest_bw, { REAL(1, 2, 5, 7) },
            .gradgrad = true),
    GC_CASE("upsample_bilinear2d", "(3, 4) -> (5, 7)", f_bilinear, { REAL(1, 2, 3, 4) },
            .gradgrad = true),
    GC_CASE("upsample_bilinear2d", "align_corners, scales, transposed", f_bilinear_ac_scaled,
            { REAL_T(2, 1, 3, 4) }, .gradgrad = true),
    GC_CASE("upsample_bilinear2d", "scales, strided", f_bilinear_scaled, { REAL_S(1, 2, 3, 4) }),
    GC_CASE("upsample_bilinear2d_backward", "align_corners, (5, 7) -> (3, 4)", f_bilinear_bw,
            { REAL(1, 2, 5, 7) }, .gradgrad = true),
};
GC_REGISTER(norm_cases);

/* Gradcheck cases of the pooling and padding operators (gradcheck.h). Max pooling inputs are
 * GC_DISTINCT (no ties, so the finite differences do not cross a switch of the maximum);
 * backward operators are checked as functions of grad_output (and self, whose gradient is
 * zero), with gradgrad where PyTorch has double backward. */
#include "gradcheck.h"
#include "kt_util.h"

GC_FN(f_mp2d)
{
    return gc_y_t2(y, tg_max_pool2d_with_indices(x[0], TG_INTS(3), .stride = TG_INTS(2),
                                                 .padding = TG_INTS(1)));
}
GC_FN(f_mp2d_dil_ceil)
{
    return gc_y_t2(y, tg_max_pool2d_with_indices(x[0], TG_INTS(2, 3), .stride = TG_INTS(2, 1),
                                                 .padding = TG_INTS(1, 0),
                                                 .dilation = TG_INTS(1, 2), .ceil_mode = true));
}
/* grad_output x[0] through max_pool2d_with_indices_backward at the indices of x[1]. */
GC_FN(f_mp2d_backward)
{
    tg_tensors2 r = { NULL, NULL };
    TG_NO_GRAD {
        r = tg_max_pool2d_with_indices(x[1], TG_INTS(2), .stride = TG_INTS(2),
                                       .padding = TG_INTS(1));
    }
    y[0] = tg_max_pool2d_with_indices_backward(x[0], x[1], TG_INTS(2), TG_INTS(2), TG_INTS(1),
                                               TG_INTS(1), false, r.r1);
    kt_release_all(r.r0, r.r1);
    return y[0] ? 1 : -1;
}
GC_FN(f_mp2d_composite) { return gc_y1(y, tg_max_pool2d(x[0], TG_INTS(2))); }
GC_FN(f_mp1d)
{
    return gc_y1(y, tg_max_pool1d(x[0], TG_INTS(3), .stride = TG_INTS(2), .padding = TG_INTS(1)));
}
/* x[0] (2, 3, 4, 5) gathered at the indices of a 2x2 / 1 max pooling of fixed distinct values
 * (sin of 0, 1, 2, ...) made on x[0]'s device. */
GC_FN(f_mp_double)
{
    tg_tensors2 r = { NULL, NULL };
    TG_NO_GRAD {
        tg_tensor *a = tg_arange(120, .dtype = TG_FLOAT64, .device = tg_tensor_device(x[0]));
        tg_tensor *s = a ? tg_sin(a) : NULL;
        tg_tensor *z = s ? tg_reshape(s, TG_INTS(2, 3, 4, 5)) : NULL;
        if (z) r = tg_max_pool2d_with_indices(z, TG_INTS(2), .stride = TG_INTS(1));
        kt_release_all(z, s, a);
    }
    tg_release(r.r0);
    y[0] = r.r1 ? tg_max_pool_double_backward(x[0], r.r1, 2) : NULL;
    tg_release(r.r1);
    return y[0] ? 1 : -1;
}
GC_FN(f_ap2d)
{
    return gc_y1(y, tg_avg_pool2d(x[0], TG_INTS(3), .stride = TG_INTS(2), .padding = TG_INTS(1)));
}
GC_FN(f_ap2d_opts)
{
    return gc_y1(y, tg_avg_pool2d(x[0], TG_INTS(3, 2), .stride = TG_INTS(2, 3),
                                  .padding = TG_INTS(1, 1), .ceil_mode = true,
                                  .count_include_pad = false));
}
GC_FN(f_ap2d_div) { return gc_y1(y, tg_avg_pool2d(x[0], TG_INTS(2), .divisor_override = 3)); }
GC_FN(f_ap2d_backward)
{
    return gc_y1(y, tg_avg_pool2d_backward(x[0], x[1], TG_INTS(3), TG_INTS(2), TG_INTS(1), true,
                                           false, TG_NONE_INT));
}
GC_FN(f_ap1d)
{
    return gc_y1(y, tg_avg_pool1d(x[0], TG_INTS(3), .stride = TG_INTS(2), .padding = TG_INTS(1)));
}
GC_FN(f_aap) { return gc_y1(y, tg__adaptive_avg_pool2d(x[0], TG_INTS(3, 2))); }
GC_FN(f_aap_composite) { return gc_y1(y, tg_adaptive_avg_pool2d(x[0], TG_INTS(1, 1))); }
GC_FN(f_aap_backward) { return gc_y1(y, tg__adaptive_avg_pool2d_backward(x[0], x[1])); }
GC_FN(f_amp) { return gc_y_t2(y, tg_adaptive_max_pool2d(x[0], TG_INTS(3, 2))); }
GC_FN(f_amp_backward)
{
    tg_tensors2 r = { NULL, NULL };
    TG_NO_GRAD {
        r = tg_adaptive_max_pool2d(x[1], TG_INTS(3, 2));
    }
    y[0] = tg_adaptive_max_pool2d_backward(x[0], x[1], r.r1);
    kt_release_all(r.r0, r.r1);
    return y[0] ? 1 : -1;
}
GC_FN(f_cpad) { return gc_y1(y, tg_constant_pad_nd(x[0], TG_INTS(1, 2, -1, 1), .value = 0.5)); }
GC_FN(f_cpad_backward) { return gc_y1(y, tg_constant_pad_nd_backward(x[0], TG_INTS(1, 0, 1, 1))); }
GC_FN(f_rpad) { return gc_y1(y, tg_reflection_pad2d(x[0], TG_INTS(2, 1, -1, 2))); }
GC_FN(f_rpad_backward)
{
    return gc_y1(y, tg_reflection_pad2d_backward(x[0], x[1], TG_INTS(2, 1, -1, 2)));
}
GC_FN(f_reppad) { return gc_y1(y, tg_replication_pad2d(x[0], TG_INTS(3, 1, 2, -1))); }
GC_FN(f_reppad_backward)
{
    return gc_y1(y, tg_replication_pad2d_backward(x[0], x[1], TG_INTS(3, 1, 2, -1)));
}

static const gc_case pool_cases[] = {
    GC_CASE("max_pool2d_with_indices", "3x3 / 2 pad 1", f_mp2d, { DISTINCT(2, 2, 5, 6) },
            .gradgrad = true),
    GC_CASE("max_pool2d_with_indices", "unbatched, transposed, dilation, ceil", f_mp2d_dil_ceil,
            { DISTINCT_T(2, 6, 7) }, .gradgrad = true),
    GC_CASE("max_pool2d_with_indices_backward", "grad_output", f_mp2d_backward,
            { REAL(2, 2, 3, 3), DISTINCT(2, 2, 4, 5) }, .gradgrad = true),
    GC_CASE("max_pool2d", "2x2", f_mp2d_composite, { DISTINCT(1, 2, 4, 6) }),
    GC_CASE("max_pool1d", "k3 s2 p1", f_mp1d, { DISTINCT(2, 3, 7) }, .gradgrad = true),
    GC_CASE("max_pool_double_backward", "gather", f_mp_double, { REAL(2, 3, 4, 5) },
            .gradgrad = true),
    GC_CASE("avg_pool2d", "3x3 / 2 pad 1", f_ap2d, { REAL(2, 2, 5, 6) }, .gradgrad = true),
    GC_CASE("avg_pool2d", "ceil, no pad count, transposed", f_ap2d_opts, { REAL_T(2, 7, 6) },
            .gradgrad = true),
    GC_CASE("avg_pool2d", "divisor_override, strided", f_ap2d_div, { REAL_S(1, 2, 4, 5) }),
    GC_CASE("avg_pool2d_backward", "grad_output", f_ap2d_backward,
            { REAL(2, 2, 3, 4), REAL(2, 2, 5, 6) }, .gradgrad = true),
    GC_CASE("avg_pool1d", "k3 s2 p1", f_ap1d, { REAL(2, 3, 7) }, .gradgrad = true),
    GC_CASE("_adaptive_avg_pool2d", "5x7 -> 3x2", f_aap, { REAL(2, 2, 5, 7) }, .gradgrad = true),
    GC_CASE("adaptive_avg_pool2d", "1x1 (mean)", f_aap_composite, { REAL_T(2, 2, 4, 3) }),
    GC_CASE("_adaptive_avg_pool2d_backward", "grad_output", f_aap_backward,
            { REAL(2, 3, 2), REAL(2, 5, 7) }, .gradgrad = true),
    GC_CASE("adaptive_max_pool2d", "5x7 -> 3x2", f_amp, { DISTINCT(2, 2, 5, 7) }, .gradgrad = true),
    GC_CASE("adaptive_max_pool2d_backward", "grad_output", f_amp_backward,
            { REAL(2, 3, 2), DISTINCT(2, 5, 7) }, .gradgrad = true),
    GC_CASE("constant_pad_nd", "pad and crop", f_cpad, { REAL_T(2, 4, 3) }, .gradgrad = true),
    GC_CASE("constant_pad_nd_backward", "crop", f_cpad_backward, { REAL(3, 5, 4) },
            .gradgrad = true),
    GC_CASE("reflection_pad2d", "pad and crop", f_rpad, { REAL(2, 2, 4, 5) }, .gradgrad = true),
    GC_CASE("reflection_pad2d", "unbatched, strided", f_rpad, { REAL_S(2, 4, 5) }),
    GC_CASE("reflection_pad2d_backward", "grad_output", f_rpad_backward,
            { REAL(2, 5, 8), REAL(2, 4, 5) }, .gradgrad = true),
    GC_CASE("replication_pad2d", "pad and crop", f_reppad, { REAL_T(2, 2, 4, 5) },
            .gradgrad = true),
    GC_CASE("replication_pad2d_backward", "grad_output", f_reppad_backward,
            { REAL(2, 5, 9), REAL(2, 4, 5) }, .gradgrad = true),
};
GC_REGISTER(pool_cases);

/* Value cases of the deterministic factories (kt_case.h): fill_, arange, linspace, eye, in
 * every dtype, into contiguous and transposed tensors. Every backend computes each element
 * with the same formula in the same type (CUDA with unfused, _rn arithmetic so nvcc cannot
 * contract it into fused multiply-adds): exact. The random fills draw from per-device streams
 * and are checked by their statistics (tests/cuda/test_cuda_random.c, tests/ops). */
#include "kt_case.h"

static tg_tensor *empty_on(const kt_arg *a, int64_t rows, int64_t cols)
{
    return tg_empty(TG_INTS(rows, cols), .dtype = a->dtype, .device = a->device);
}

/* 0: fill_ 3; 1: fill_ 1 through a transposed view (result 0 is the base) */
KT_FN(f_fill)
{
    tg_tensor *t = empty_on(a, 37, 41);
    if (a->param == 0) return kt_y1(y, tg_fill_(t, 3));
    return kt_y2(y, t, tg_fill_(tg_transpose(t, 0, 1), 1));
}
KT_FN(f_fill_overflow) { return kt_y1(y, tg_fill_(empty_on(a, 37, 41), 300)); }

KT_FN(f_arange)
{
    tg_tensor *o = tg_empty(TG_INTS(0), .dtype = a->dtype, .device = a->device);
    double step = tg_dtype_is_floating(a->dtype) ? 0.75 : 1;
    return kt_y1(y, tg_arange_start_out(-3, 90, o, .step = step));
}
KT_FN(f_linspace)
{
    tg_tensor *o = tg_empty(TG_INTS(0), .dtype = a->dtype, .device = a->device);
    return kt_y1(y, tg_linspace_out(-5, 100, 1001, o));
}
/* 0: into a (5, 7) out; 1: into a transposed out of that shape */
KT_FN(f_eye)
{
    tg_tensor *o = a->param ? tg_transpose(empty_on(a, 7, 5), 0, 1) : empty_on(a, 5, 7);
    return kt_y1(y, tg_eye_m_out(5, 7, o));
}
/* the random fills' argument checks (their values: tests/cuda/test_cuda_random.c) */
KT_FN(f_uniform_int) { return kt_y1(y, tg_uniform_(empty_on(a, 1, 4))); }
KT_FN(f_uniform_bad) { return kt_y1(y, tg_uniform_(empty_on(a, 1, 4), .from = 2, .to = 1)); }
KT_FN(f_normal_bad) { return kt_y1(y, tg_normal_(empty_on(a, 1, 4), .std = -1)); }
KT_FN(f_normal_int) { return kt_y1(y, tg_normal_(empty_on(a, 1, 4))); }
KT_FN(f_random_empty_range) { return kt_y1(y, tg_random_(empty_on(a, 1, 4), 5, 5)); }
KT_FN(f_arange_bad) { return kt_y1(y, tg_arange_start_out(5, 1, empty_on(a, 1, 1), .step = 1)); }
KT_FN(f_linspace_bad) { return kt_y1(y, tg_linspace_out(0, 1, -2, empty_on(a, 1, 1))); }
KT_FN(f_eye_bad) { return kt_y1(y, tg_eye_m_out(-1, 2, empty_on(a, 1, 1))); }

static const kt_case factory_cases[] = {
    KT_CASE("fill_.Scalar", "(37, 41), and through a transposed view", f_fill, { { 0 } }, KT_ALL,
            &kt_exact, .count = 2),
    KT_CASE("fill_.Scalar", "300 into uint8", f_fill_overflow, { { 0 } }, KT_ONE(TG_UINT8),
            .error = "value cannot be converted to type uint8_t without overflow"),
    /* bool: arange and linspace refuse or degenerate alike */
    KT_CASE("arange.start_out", "arange(-3, 90, 0.75 or 1)", f_arange, { { 0 } }, KT_NO_BOOL,
            &kt_exact),
    KT_CASE("linspace.out", "linspace(-5, 100, 1001)", f_linspace, { { 0 } }, KT_NO_BOOL,
            &kt_exact),
    KT_CASE("eye.m_out", "eye(5, 7), and into a transposed out", f_eye, { { 0 } }, KT_NO_BOOL,
            &kt_exact, .count = 2),
    KT_CASE("arange.start_out", "step of the wrong sign", f_arange_bad, { { 0 } },
            KT_ONE(TG_FLOAT32),
            .error = "upper bound and larger bound inconsistent with step sign"),
    KT_CASE("linspace.out", "negative steps", f_linspace_bad, { { 0 } }, KT_ONE(TG_FLOAT32),
            .error = "number of steps must be non-negative"),
    KT_CASE("eye.m_out", "negative n", f_eye_bad, { { 0 } }, KT_ONE(TG_FLOAT32),
            .error = "n must be greater or equal to 0, got -1"),
    KT_CASE("uniform_", "int64", f_uniform_int, { { 0 } }, KT_ONE(TG_INT64),
            .error = "\"check_uniform_bounds\" not implemented for 'Long'"),
    KT_CASE("uniform_", "from 2 to 1", f_uniform_bad, { { 0 } }, KT_ONE(TG_FLOAT32),
            .error = "uniform_ expects to return a [from, to) range, but found from=2 > to=1"),
    KT_CASE("normal_", "std -1", f_normal_bad, { { 0 } }, KT_ONE(TG_FLOAT32),
            .error = "normal expects std >= 0.0, but found std -1"),
    KT_CASE("normal_", "int64", f_normal_int, { { 0 } }, KT_ONE(TG_INT64),
            .error = "not implemented for 'Long'"),
    KT_CASE("random_.from", "from 5 to 5", f_random_empty_range, { { 0 } }, KT_ONE(TG_INT64),
            .error = "random_ expects 'from' to be less than 'to', but got from=5 >= to=5"),
};
KT_REGISTER(factory_cases);

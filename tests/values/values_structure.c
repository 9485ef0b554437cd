/* Value cases of the cumulative and structure kernels (kt_case.h): cumsum and cumprod (every
 * dim, integral promotion, a dtype argument, in place, into a transposed out=, zero-dim and
 * empty inputs), flip, roll (per dim and flattened), repeat and repeat_interleave.Tensor, in
 * float32, float64, int64 and bool, contiguous and strided. Every comparison is exact: the
 * gathers move elements, the scans accumulate in the same type in the same order (double for
 * the floating dtypes, int64 for the integers) and round once per element. */
#include "kt_case.h"

#define X                                   \
    {                                       \
        KT_RAND(-3, 3, 3, 5, 4), .seed = 11 \
    }
#define DTYPES                                           \
    {                                                    \
        4, { TG_FLOAT32, TG_FLOAT64, TG_INT64, TG_BOOL } \
    }

/* parameter 0 .. 5: dim -3 .. 2 of cumsum, then of cumprod (6 .. 11); 12: cumsum dim 1 as
 * float64; 13: cumprod dim 2 as int32; 14: cumsum_ dim 0 on a clone; 15: cumprod dim 1 into a
 * transposed out= */
KT_FN(f_scan)
{
    int p = a->param;
    if (p < 6) return kt_y1(y, tg_cumsum(x[0], p - 3));
    if (p < 12) return kt_y1(y, tg_cumprod(x[0], p - 9));
    if (p == 12) return kt_y1(y, tg_cumsum(x[0], 1, .dtype = TG_FLOAT64));
    if (p == 13) return kt_y1(y, tg_cumprod(x[0], 2, .dtype = TG_INT32));
    if (p == 14) return kt_y1(y, tg_cumsum_(tg_clone(x[0]), 0));
    tg_dtype odt = tg_tensor_dtype(tg_cumprod(x[0], 1));
    tg_tensor *o = tg_empty(TG_INTS(4, 5, 3), .dtype = odt, .device = a->device);
    return kt_y1(y, tg_cumprod_out(x[0], 1, tg_transpose(o, 0, 2)));
}
KT_FN(f_cumsum0) { return kt_y1(y, tg_cumsum(x[0], 0)); }
KT_FN(f_cumprod_empty) { return kt_y1(y, tg_cumprod(x[0], 1)); }

/* flip 0; -1, 1; every dim; roll flat 7; roll (-2, 9) on dims (2, 1); repeat (2, 1, 3),
 * (2, 1, 2, 1), (1, 0, 2) */
KT_FN(f_structure)
{
    switch (a->param) {
    case 0: return kt_y1(y, tg_flip(x[0], TG_INTS(0)));
    case 1: return kt_y1(y, tg_flip(x[0], TG_INTS(-1, 1)));
    case 2: return kt_y1(y, tg_flip(x[0], TG_INTS(0, 1, 2)));
    case 3: return kt_y1(y, tg_roll(x[0], TG_INTS(7)));
    case 4: return kt_y1(y, tg_roll(x[0], TG_INTS(-2, 9), .dims = TG_INTS(2, 1)));
    case 5: return kt_y1(y, tg_repeat(x[0], TG_INTS(2, 1, 3)));
    case 6: return kt_y1(y, tg_repeat(x[0], TG_INTS(2, 1, 2, 1)));
    default: return kt_y1(y, tg_repeat(x[0], TG_INTS(1, 0, 2)));
    }
}
KT_FN(f_repeat_interleave) { return kt_y1(y, tg_repeat_interleave(x[0])); }
KT_FN(f_repeat_interleave_size) { return kt_y1(y, tg_repeat_interleave(x[0], .output_size = 5)); }
KT_FN(f_flip_twice) { return kt_y1(y, tg_flip(x[0], TG_INTS(1, 1))); }
KT_FN(f_cumsum_dim2) { return kt_y1(y, tg_cumsum(x[0], 2)); }

static const double minus2[2] = { 1, -2 }, one_two[2] = { 1, 2 };
#define ZEROS_2_3                          \
    {                                      \
        KT_RAND_OF(TG_FLOAT32, 0, 0, 2, 3) \
    }

static const kt_case structure_cases[] = {
    KT_CASE("cumsum.out", "(3, 5, 4): every dim, dtype, in place, a transposed out=", f_scan, { X },
            DTYPES, &kt_exact, .flags = KT_STRIDED, .count = 16, KT_ALSO("cumprod.out")),
    KT_CASE("cumsum.out", "zero-dim", f_cumsum0, { { KT_RAND0_OF(TG_FLOAT32, -1, 1), .seed = 3 } },
            { 0 }, &kt_exact),
    KT_CASE("cumprod.out", "(2, 0, 3)", f_cumprod_empty,
            { { KT_RAND_OF(TG_FLOAT32, 0, 0, 2, 0, 3) } }, { 0 }, &kt_exact),
    KT_CASE("flip", "flip, roll, repeat", f_structure, { X }, DTYPES, &kt_exact,
            .flags = KT_STRIDED, .count = 8, KT_ALSO("roll", "repeat")),
    KT_CASE("repeat_interleave.Tensor", "(9) repeats in [0, 4)", f_repeat_interleave,
            { { KT_RAND(0, 4, 9), .seed = 5 } }, { 2, { TG_INT64, TG_INT32 } }, &kt_exact),
    KT_CASE("repeat_interleave.Tensor", "no repeats", f_repeat_interleave,
            { { KT_RAND_OF(TG_INT64, 0, 0, 0) } }, { 0 }, &kt_exact),
    KT_CASE("repeat_interleave.Tensor", "a negative repeat", f_repeat_interleave,
            { { KT_VALUES_OF(TG_INT64, minus2, 2) } }, .error = "repeats can not be negative"),
    KT_CASE("repeat_interleave.Tensor", "output_size 5 for 3", f_repeat_interleave_size,
            { { KT_VALUES_OF(TG_INT64, one_two, 2) } },
            .error = "allocated size does not match required size"),
    KT_CASE("flip", "dim 1 twice", f_flip_twice, { ZEROS_2_3 },
            .error = "dim 1 appears multiple times in the list of dims"),
    KT_CASE("cumsum.out", "dim 2 of 2", f_cumsum_dim2, { ZEROS_2_3 },
            .error = "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
};
KT_REGISTER(structure_cases);

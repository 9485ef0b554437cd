/* dtypes: PyTorch's promotion table, can_cast, names, half/bfloat16 conversions, load/store. */
#include "rt_test.h"

TestSuite(rt_dtype, .fini = rt_leak_check);

Test(rt_dtype, promote_table_matches_pytorch)
{
    /* Pairs checked against torch.promote_types (1.13). */
    struct {
        tg_dtype a, b, r;
    } cases[] = {
        { TG_BOOL, TG_BOOL, TG_BOOL },           { TG_BOOL, TG_UINT8, TG_UINT8 },
        { TG_BOOL, TG_INT8, TG_INT8 },           { TG_BOOL, TG_FLOAT16, TG_FLOAT16 },
        { TG_UINT8, TG_INT8, TG_INT16 },         { TG_INT8, TG_UINT8, TG_INT16 },
        { TG_UINT8, TG_INT16, TG_INT16 },        { TG_UINT8, TG_INT32, TG_INT32 },
        { TG_INT8, TG_INT64, TG_INT64 },         { TG_INT32, TG_INT64, TG_INT64 },
        { TG_INT64, TG_FLOAT16, TG_FLOAT16 },    { TG_INT64, TG_BFLOAT16, TG_BFLOAT16 },
        { TG_INT64, TG_FLOAT32, TG_FLOAT32 },    { TG_INT32, TG_FLOAT64, TG_FLOAT64 },
        { TG_FLOAT16, TG_BFLOAT16, TG_FLOAT32 }, { TG_BFLOAT16, TG_FLOAT16, TG_FLOAT32 },
        { TG_FLOAT16, TG_FLOAT32, TG_FLOAT32 },  { TG_BFLOAT16, TG_FLOAT64, TG_FLOAT64 },
        { TG_FLOAT32, TG_FLOAT64, TG_FLOAT64 },  { TG_UINT8, TG_UINT8, TG_UINT8 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_expect_eq(tg_promote_types(cases[i].a, cases[i].b), cases[i].r, "%s + %s",
                     tg_dtype_name(cases[i].a), tg_dtype_name(cases[i].b));
        cr_expect_eq(tg_promote_types(cases[i].b, cases[i].a), cases[i].r, "symmetric");
    }
}

Test(rt_dtype, can_cast)
{
    cr_expect(tg_can_cast(TG_INT64, TG_FLOAT16));
    cr_expect(tg_can_cast(TG_FLOAT64, TG_FLOAT16));
    cr_expect(tg_can_cast(TG_INT64, TG_UINT8));
    cr_expect(tg_can_cast(TG_BOOL, TG_INT8));
    cr_expect(!tg_can_cast(TG_FLOAT32, TG_INT64));
    cr_expect(!tg_can_cast(TG_INT32, TG_BOOL));
    cr_expect(!tg_can_cast(TG_FLOAT32, TG_BOOL));
}

Test(rt_dtype, names_and_sizes)
{
    cr_expect_str_eq(tg_dtype_name(TG_BFLOAT16), "bfloat16");
    cr_expect_str_eq(tg__dtype_torch_name(TG_FLOAT32), "Float");
    cr_expect_str_eq(tg__dtype_torch_name(TG_INT64), "Long");
    cr_expect_eq(tg_dtype_size(TG_FLOAT16), 2);
    cr_expect_eq(tg_dtype_size(TG_INT64), 8);
    cr_expect_eq(tg_dtype_size(TG_BOOL), 1);
    cr_expect(tg_dtype_is_integral(TG_BOOL, true) && !tg_dtype_is_integral(TG_BOOL, false));
    cr_expect(tg_dtype_is_floating(TG_BFLOAT16));
}

Test(rt_dtype, half_conversions)
{
    cr_expect_eq(tg__float_to_half(1.0f), 0x3c00);
    cr_expect_eq(tg__float_to_half(-2.0f), 0xc000);
    cr_expect_eq(tg__float_to_half(65504.0f), 0x7bff);
    cr_expect_eq(tg__float_to_half(65520.0f), 0x7c00);           /* rounds to inf */
    cr_expect_eq(tg__float_to_half(5.9604645e-08f), 0x0001);     /* smallest subnormal */
    cr_expect_eq(tg__float_to_half(2.9802322e-08f), 0x0000);     /* tie -> even (0) */
    cr_expect_eq(tg__float_to_half(1.0f + 1.0f / 2048), 0x3c00); /* tie -> even */
    cr_expect_eq(tg__float_to_half(1.0f + 3.0f / 2048), 0x3c02); /* tie -> even (up) */
    cr_expect(isnan(tg__half_to_float(tg__float_to_half(NAN))));
    for (uint32_t h = 0; h < 0x7c00; h++) /* round trip of finite halves */
        cr_assert_eq(tg__float_to_half(tg__half_to_float((uint16_t)h)), h, "0x%x", h);
    cr_expect_eq(tg__float_to_bf16(1.0f), 0x3f80);
    cr_expect_eq(tg__bf16_to_float(0x4049), 3.140625f);
    cr_expect_eq(tg__float_to_bf16(1.00390625f), 0x3f80); /* tie -> even */
}

Test(rt_dtype, load_store)
{
    unsigned char buf[8];
    tg__store_double(buf, TG_UINT8, -1.0);
    cr_expect_eq(buf[0], 255); /* wraps like PyTorch on x86 */
    tg__store_double(buf, TG_BOOL, 0.5);
    cr_expect_eq(tg__load_double(buf, TG_BOOL), 1.0);
    tg__store_int64(buf, TG_INT64, INT64_MAX);
    cr_expect_eq(tg__load_int64(buf, TG_INT64), INT64_MAX);
    tg__store_double(buf, TG_INT32, 3.9);
    cr_expect_eq(tg__load_int64(buf, TG_INT32), 3); /* truncation */
    tg__store_double(buf, TG_FLOAT16, 0.1);
    cr_expect(fabs(tg__load_double(buf, TG_FLOAT16) - 0.1) < 1e-4);
    tg__store_double(buf, TG_INT64, NAN); /* defined, no UB */
    cr_expect_eq(tg__load_int64(buf, TG_INT64), INT64_MIN);
}

Test(rt_dtype, default_dtype)
{
    cr_expect_eq(tg_get_default_dtype(), TG_FLOAT32);
    cr_expect_eq(tg_set_default_dtype(TG_FLOAT64), TG_FLOAT32);
    cr_expect_eq(tg_get_default_dtype(), TG_FLOAT64);
    cr_expect_eq(tg_set_default_dtype(TG_INT32), TG_DTYPE_NONE);
    cr_expect(tg_last_error() != NULL);
    tg_clear_error();
    tg_set_default_dtype(TG_FLOAT32);
}

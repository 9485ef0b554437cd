/* result_type: the three priority groups (dim tensors, zero-dim tensors, wrapped numbers). */
#include "rt_test.h"
#include "kt_util.h"

TestSuite(rt_promote, .fini = rt_leak_check);

static tg_tensor *dim1(tg_dtype t) { return tg__empty("t", (int64_t[]){ 2 }, 1, t, TG_DEVICE_CPU); }
static tg_tensor *zero(tg_dtype t) { return tg__empty("t", NULL, 0, t, TG_DEVICE_CPU); }

static tg_dtype rt2(tg_tensor *a, tg_tensor *b)
{
    tg_dtype r = tg__result_type((tg_tensor *[]){ a, b }, 2);
    kt_release_all(a, b);
    return r;
}

Test(rt_promote, pytorch_cases)
{
    /* int64 tensor + 2.5 -> the default dtype, not float64 */
    cr_expect_eq(rt2(dim1(TG_INT64), tg__wrapped_scalar(2.5, false)), TG_FLOAT32);
    /* int32 tensor + 5 -> int32 (a wrapped int never widens an integer tensor) */
    cr_expect_eq(rt2(dim1(TG_INT32), tg__wrapped_scalar(5, true)), TG_INT32);
    /* uint8 tensor + int8 zero-dim -> uint8 (same category: the dim tensor wins) */
    cr_expect_eq(rt2(dim1(TG_UINT8), zero(TG_INT8)), TG_UINT8);
    /* float16 tensor + float32 zero-dim -> float16 */
    cr_expect_eq(rt2(dim1(TG_FLOAT16), zero(TG_FLOAT32)), TG_FLOAT16);
    /* int32 tensor + float64 zero-dim -> float64: a zero-dim operand of a higher category
     * counts with its own dtype (torch.ones(2, dtype=torch.int32) + torch.tensor(1.5,
     * dtype=torch.float64) is float64); only wrapped numbers become the default dtype. */
    cr_expect_eq(rt2(dim1(TG_INT32), zero(TG_FLOAT64)), TG_FLOAT64);
    /* int32 tensor + 2.5 -> float32 */
    cr_expect_eq(rt2(dim1(TG_INT32), tg__wrapped_scalar(2.5, false)), TG_FLOAT32);
    /* bool tensor + 5 -> int64; bool tensor + bool tensor -> bool */
    cr_expect_eq(rt2(dim1(TG_BOOL), tg__wrapped_scalar(5, true)), TG_INT64);
    cr_expect_eq(rt2(dim1(TG_BOOL), dim1(TG_BOOL)), TG_BOOL);
    /* bool tensor + uint8 zero-dim -> uint8 (bool is promoted by anything) */
    cr_expect_eq(rt2(dim1(TG_BOOL), zero(TG_UINT8)), TG_UINT8);
    /* dim tensors of different dtypes promote by the table */
    cr_expect_eq(rt2(dim1(TG_UINT8), dim1(TG_INT8)), TG_INT16);
    cr_expect_eq(rt2(dim1(TG_INT64), dim1(TG_FLOAT16)), TG_FLOAT16);
    /* two zero-dim tensors promote normally; zero-dim beats wrapped of the same category */
    cr_expect_eq(rt2(zero(TG_INT32), zero(TG_INT64)), TG_INT64);
    cr_expect_eq(rt2(zero(TG_INT32), tg__wrapped_scalar(3, true)), TG_INT32);
    /* zero-dim float16 + float wrapped -> float16 */
    cr_expect_eq(rt2(zero(TG_FLOAT16), tg__wrapped_scalar(1.5, false)), TG_FLOAT16);
    /* float32 tensor + float64 zero-dim -> float32 */
    cr_expect_eq(rt2(dim1(TG_FLOAT32), zero(TG_FLOAT64)), TG_FLOAT32);
    /* bfloat16 tensor + float64 zero-dim -> bfloat16 (same category: the dim tensor wins) */
    cr_expect_eq(rt2(dim1(TG_BFLOAT16), zero(TG_FLOAT64)), TG_BFLOAT16);
}

Test(rt_promote, scalar_state_api)
{
    tg_tensor *t = dim1(TG_INT64);
    tg_result_type_state s = TG_RESULT_TYPE_INIT;
    tg__result_type_update(&s, t);
    tg__result_type_update_scalar(&s, 2.5, false);
    cr_expect_eq(tg__result_type_finish(&s), TG_FLOAT32);
    s = TG_RESULT_TYPE_INIT;
    tg__result_type_update(&s, t);
    tg__result_type_update_scalar(&s, 2, true);
    cr_expect_eq(tg__result_type_finish(&s), TG_INT64);
    tg__result_type_update(&s, NULL); /* undefined tensors are skipped */
    cr_expect_eq(tg__result_type_finish(&s), TG_INT64);
    tg_release(t);
    /* only wrapped numbers: a float Scalar gives the default dtype */
    s = TG_RESULT_TYPE_INIT;
    tg__result_type_update_scalar(&s, 2.5, false);
    tg__result_type_update_scalar(&s, 1, true);
    cr_expect_eq(tg__result_type_finish(&s), TG_FLOAT32);
}

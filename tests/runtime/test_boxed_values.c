/* The boxed values of the schema types beyond the project's own (runtime/dispatch/op_glue.h):
 * float/bool/str lists, Storage, ConstQuantizerPtr, QScheme, Tensor?[] arguments, and the
 * ScalarType/QScheme/int[] results, boxed and unboxed the way generated code does. */
#include <stdlib.h>

#include "rt_test.h"
#include "dispatch/op_glue.h"

TestSuite(rt_boxed_values, .fini = rt_leak_check);

Test(rt_boxed_values, lists_round_trip)
{
    tg_boxed_stack s = { .n = 0 };
    tg__box_float_list(&s, TG_FLOATS(0.5, 2.0));
    tg__box_opt_float_list(&s, TG_NO_FLOATS);
    tg__box_bool_list(&s, TG_BOOLS(true, false, true));
    tg__box_str_list(&s, TG_DIMNAMES("N", "C"));
    tg__box_opt_str_list(&s, TG_STRS_EMPTY);
    tg__box_float_list(&s, TG_NO_FLOATS); /* a plain list given as { NULL, 0 }: empty */
    cr_assert_eq(s.n, 6);
    cr_expect_eq(s.v[1].tag, TG_IV_NONE);

    tg_float_list f;
    cr_expect(!tg__unbox_float_list(&s.v[0], &f));
    cr_expect(f.len == 2 && f.data[0] == 0.5 && f.data[1] == 2.0);
    cr_expect(!tg__unbox_opt_float_list(&s.v[1], &f));
    cr_expect(f.data == NULL, "None is .data == NULL");
    cr_expect(tg__unbox_float_list(&s.v[1], &f), "None is not a float[]");
    tg_bool_list b;
    cr_expect(!tg__unbox_bool_list(&s.v[2], &b));
    cr_expect(b.len == 3 && b.data[0] && !b.data[1] && b.data[2]);
    cr_expect(tg__unbox_bool_list(&s.v[0], &b), "a float[] is not a bool[]");
    tg_str_list l;
    cr_expect(!tg__unbox_str_list(&s.v[3], &l));
    cr_expect(l.len == 2 && !strcmp(l.data[0], "N") && !strcmp(l.data[1], "C"));
    cr_expect(!tg__unbox_opt_str_list(&s.v[4], &l));
    cr_expect(l.data != NULL && l.len == 0, "an empty list is present");
    cr_expect(!tg__unbox_float_list(&s.v[5], &f));
    cr_expect(f.data != NULL && f.len == 0);
    cr_expect_str_eq(tg_ivalue_tag_name(s.v[3].tag), "str[]");
    tg__drop_stack(&s);
}

Test(rt_boxed_values, pointers_and_enums)
{
    tg_boxed_stack s = { .n = 0 };
    int storage_stand_in, quantizer_stand_in;
    tg_storage *st = (tg_storage *)(void *)&storage_stand_in;
    const tg_quantizer *q = (const tg_quantizer *)(const void *)&quantizer_stand_in;
    tg__box_storage(&s, st);
    tg__box_opt_storage(&s, NULL);
    tg__box_quantizer(&s, q);
    tg__box_qscheme(&s, TG_PER_CHANNEL_SYMMETRIC);
    tg__box_opt_qscheme(&s, TG_QSCHEME_NONE);
    tg__box_int(&s, (tg_stream)7); /* a Stream is boxed as its id */

    tg_storage *st2 = NULL;
    cr_expect(!tg__unbox_storage(&s.v[0], &st2));
    cr_expect_eq(st2, st);
    cr_expect(tg__unbox_storage(&s.v[1], &st2), "a Storage is never None");
    cr_expect(!tg__unbox_opt_storage(&s.v[1], &st2));
    cr_expect_null(st2);
    const tg_quantizer *q2 = NULL;
    cr_expect(!tg__unbox_quantizer(&s.v[2], &q2));
    cr_expect_eq(q2, q);
    cr_expect(tg__unbox_quantizer(&s.v[0], &q2), "a Storage is not a quantizer");
    tg_quant_scheme qs;
    cr_expect(!tg__unbox_qscheme(&s.v[3], &qs));
    cr_expect_eq(qs, TG_PER_CHANNEL_SYMMETRIC);
    cr_expect(!tg__unbox_opt_qscheme(&s.v[4], &qs));
    cr_expect_eq(qs, TG_QSCHEME_NONE);
    cr_expect(tg__unbox_qscheme(&s.v[4], &qs));
    tg_stream id = 0;
    cr_expect(!tg__unbox_int(&s.v[5], &id));
    cr_expect_eq(id, 7);
    tg__drop_stack(&s);
}

/* Tensor?[]: elements may be None, both in the key set and when unboxed. */
Test(rt_boxed_values, optional_tensor_list)
{
    tg_tensor *t = rt_arange((int64_t[]){ 2 }, 1, TG_FLOAT32);
    tg_tensor_list l = TG_TENSORS(NULL, t);
    cr_expect_eq(tg__opt_list_keys(l), (tg_keyset)1 << TG_KEY_CPU);
    tg_boxed_stack s = { .n = 0 };
    tg__box_opt_tensor_list(&s, l);
    tg_tensor_list got;
    cr_expect(!tg__unbox_opt_tensor_list(&s.v[0], &got));
    cr_expect(got.len == 2 && got.data[0] == NULL && got.data[1] == t);
    cr_expect(tg__unbox_tensor_list(&s.v[0], &got), "a Tensor[] refuses None elements");
    tg__drop_stack(&s);
    tg_release(t);
}

/* Results: the stack takes the kernel's value; a failed one (the error value) pushes nothing. */
Test(rt_boxed_values, results)
{
    tg_boxed_stack s = { .n = 0 };
    int64_t *offsets = malloc(3 * sizeof *offsets);
    cr_assert(offsets);
    offsets[0] = 0, offsets[1] = 4, offsets[2] = 9;
    cr_expect_eq(tg__push_int_list(&s, (tg_int_list){ .len = 3, .data = offsets }), 0);
    cr_expect_eq(tg__push_dtype(&s, TG_FLOAT64), 0);
    cr_expect_eq(tg__push_qscheme(&s, TG_PER_TENSOR_AFFINE), 0);
    cr_expect_eq(tg__push_int_list(&s, TG_NO_INTS), -1);
    cr_expect_eq(tg__push_dtype(&s, TG_DTYPE_NONE), -1);
    cr_expect_eq(tg__push_qscheme(&s, TG_QSCHEME_NONE), -1);
    cr_assert_eq(s.n, 3);
    tg_int_list l = tg__boxed_result_int_list(&s, 3, 0);
    cr_expect(l.len == 3 && l.data[2] == 9);
    cr_expect_eq(tg__boxed_result_dtype(&s, 3, 1), TG_FLOAT64);
    cr_expect_eq(tg__boxed_result_qscheme(&s, 3, 2), TG_PER_TENSOR_AFFINE);
    cr_expect_eq(tg__boxed_result_dtype(&s, 3, 2), TG_DTYPE_NONE, "a QScheme is not a dtype");
    cr_expect_null(tg__boxed_result_int_list(&s, 3, 1).data);
    tg_int_list_release(l); /* the caller owns the array now */
    tg_int_list_release(TG_NO_INTS);
}

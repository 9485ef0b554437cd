/* Tensor[] results: split, split_with_sizes, unbind and chunk (values and view geometry checked
 * by hand against PyTorch 1.13, errors in PyTorch's words), and the ownership of lists: the
 * caller's tg_tensor_list_release, scopes (tg_scope_end frees the array and the elements,
 * tg_scope_keep_list and tg_scope_keep move them out), boxed calls by name (the stack owns a
 * TENSOR_LIST result) and the CUDA -> CPU fallback with a list result. Every test checks that
 * no tensor or storage leaks; the sanitizer run checks that no array leaks. */
#include "kt_util.h"
#include "core/core.h"
#include "tg_kernels.h"
#include "tg_cover.h"
#include "fake_device.h"

TG_COVERS("split.Tensor", "split_with_sizes", "unbind.int", "chunk");

static tg_tensor *arange(int64_t n, const int64_t *shape, int64_t ndim)
{
    double v[64];
    for (int64_t i = 0; i < n; i++) v[i] = (double)i;
    return kt_tensor(v, shape, ndim, TG_FLOAT32);
}

/* Piece i of l has `shape`, shares x's storage at element offset `off`, and holds `want`. */
static void expect_piece(tg_tensor_list l, int64_t i, tg_tensor *x, const int64_t *shape,
                         int64_t nd, int64_t off, const double *want)
{
    cr_assert(i < l.len, "piece %lld of %lld", (long long)i, (long long)l.len);
    tg_tensor *p = l.data[i];
    kt_assert_shape(p, shape, nd);
    cr_expect_eq(tg_tensor_storage_offset(p), off, "piece %lld: offset %lld, expected %lld",
                 (long long)i, (long long)tg_tensor_storage_offset(p), (long long)off);
    cr_expect_eq((char *)tg_tensor_data(p) - (char *)tg_tensor_data(x),
                 off * (int64_t)tg_dtype_size(tg_tensor_dtype(x)), "piece %lld is a view of x",
                 (long long)i);
    int64_t n = tg_tensor_numel(p);
    if (n) kt_assert_close(p, want, n, 0, 0, "piece");
}

Test(split, split_with_sizes_views_along_a_dim)
{
    kt_live live = kt_live_now();
    tg_tensor *x = arange(10, (int64_t[]){ 2, 5 }, 2); /* [[0..4], [5..9]] */
    tg_tensor_list l = tg_split_with_sizes(x, TG_INTS(2, 0, 3), .dim = 1);
    cr_assert(l.data, "%s", tg_last_error());
    cr_assert_eq(l.len, 3);
    expect_piece(l, 0, x, (int64_t[]){ 2, 2 }, 2, 0, (double[]){ 0, 1, 5, 6 });
    expect_piece(l, 1, x, (int64_t[]){ 2, 0 }, 2, 2, NULL);
    expect_piece(l, 2, x, (int64_t[]){ 2, 3 }, 2, 2, (double[]){ 2, 3, 4, 7, 8, 9 });
    cr_expect_eq(tg_tensor_stride(l.data[2], 0), 5);
    tg_tensor_list_release(l);
    /* negative dim, method-style defaults */
    l = tg_split_with_sizes(x, TG_INTS(1, 1), .dim = -2);
    cr_assert(l.data, "%s", tg_last_error());
    expect_piece(l, 1, x, (int64_t[]){ 1, 5 }, 2, 5, (double[]){ 5, 6, 7, 8, 9 });
    tg_tensor_list_release(l);
    tg_release(x);
    kt_assert_no_leak(live);
}

Test(split, split_equal_pieces_last_shorter)
{
    kt_live live = kt_live_now();
    tg_tensor *x = arange(5, (int64_t[]){ 5 }, 1);
    tg_tensor_list l = tg_split(x, 2); /* [0,1] [2,3] [4] */
    cr_assert(l.data, "%s", tg_last_error());
    cr_assert_eq(l.len, 3);
    expect_piece(l, 0, x, (int64_t[]){ 2 }, 1, 0, (double[]){ 0, 1 });
    expect_piece(l, 2, x, (int64_t[]){ 1 }, 1, 4, (double[]){ 4 });
    tg_tensor_list_release(l);
    l = tg_split(x, 7); /* one whole piece */
    cr_assert_eq(l.len, 1);
    expect_piece(l, 0, x, (int64_t[]){ 5 }, 1, 0, (double[]){ 0, 1, 2, 3, 4 });
    tg_tensor_list_release(l);
    tg_tensor *e = tg_empty(TG_INTS(0));
    l = tg_split(e, 0); /* 0 of 0: one empty piece */
    cr_assert(l.data, "%s", tg_last_error());
    cr_expect_eq(l.len, 1);
    tg_tensor_list_release(l);
    kt_release_all(e, x);
    kt_assert_no_leak(live);
}

Test(split, unbind_drops_the_dim)
{
    kt_live live = kt_live_now();
    tg_tensor *x = arange(6, (int64_t[]){ 2, 3 }, 2);
    tg_tensor_list l = tg_unbind(x, .dim = 1);
    cr_assert(l.data, "%s", tg_last_error());
    cr_assert_eq(l.len, 3);
    expect_piece(l, 2, x, (int64_t[]){ 2 }, 1, 2, (double[]){ 2, 5 });
    cr_expect_eq(tg_tensor_stride(l.data[2], 0), 3);
    tg_tensor_list_release(l);
    l = tg_unbind(x);
    cr_assert_eq(l.len, 2);
    expect_piece(l, 1, x, (int64_t[]){ 3 }, 1, 3, (double[]){ 3, 4, 5 });
    tg_tensor_list_release(l);
    /* an empty dim gives an empty list, which is not an error: data is set */
    tg_tensor *e = tg_empty(TG_INTS(0, 2));
    l = tg_unbind(e);
    cr_expect(l.data != NULL && l.len == 0, "empty result: data %p len %lld", (void *)l.data,
              (long long)l.len);
    cr_expect_null(tg_last_error());
    tg_tensor_list_release(l);
    kt_release_all(e, x);
    kt_assert_no_leak(live);
}

Test(split, chunk_counts_like_pytorch)
{
    kt_live live = kt_live_now();
    tg_tensor *x = arange(6, (int64_t[]){ 6 }, 1);
    tg_tensor_list l = tg_chunk(x, 4); /* ceil(6/4) = 2: three pieces */
    cr_assert(l.data, "%s", tg_last_error());
    cr_expect_eq(l.len, 3);
    expect_piece(l, 2, x, (int64_t[]){ 2 }, 1, 4, (double[]){ 4, 5 });
    tg_tensor_list_release(l);
    tg_tensor *y = arange(5, (int64_t[]){ 5 }, 1);
    l = tg_chunk(y, 3); /* [0,1] [2,3] [4] */
    cr_expect_eq(l.len, 3);
    expect_piece(l, 2, y, (int64_t[]){ 1 }, 1, 4, (double[]){ 4 });
    tg_tensor_list_release(l);
    tg_tensor *e = tg_empty(TG_INTS(0, 3));
    l = tg_chunk(e, 2); /* keeps the number of chunks */
    cr_expect_eq(l.len, 2);
    kt_assert_shape(l.data[1], (int64_t[]){ 0, 3 }, 2);
    tg_tensor_list_release(l);
    kt_release_all(e, y, x);
    kt_assert_no_leak(live);
}

/* A write through a piece is seen by the base: the pieces are views. */
Test(split, pieces_share_storage_and_version)
{
    kt_live live = kt_live_now();
    tg_tensor *x = arange(4, (int64_t[]){ 4 }, 1);
    tg_tensor_list l = tg_split(x, 2);
    tg_release(tg_fill_(l.data[1], 9));
    kt_assert_close(x, (double[]){ 0, 1, 9, 9 }, 4, 0, 0, "x after piece 1 filled");
    cr_expect_eq(tg__version(x), tg__version(l.data[0]));
    tg_tensor_list_release(l);
    tg_release(x);
    kt_assert_no_leak(live);
}

Test(split, errors_in_pytorch_words)
{
    kt_live live = kt_live_now();
    tg_tensor *x = arange(5, (int64_t[]){ 5 }, 1);
    tg_tensor *z = kt_tensor((double[]){ 1 }, NULL, 0, TG_FLOAT32);
    struct {
        tg_tensor_list l;
        const char *msg;
    } cases[] = {
        { tg_split_with_sizes(x, TG_INTS(2, 2)),
          "split_with_sizes: split_with_sizes expects split_sizes to sum exactly to 5 (input tensor's size at "
          "dimension 0), but got split_sizes=[2, 2]" },
        { tg_split_with_sizes(x, TG_INTS(2, -1, 4)),
          "split_with_sizes: split_with_sizes expects split_sizes have only non-negative entries, but got "
          "split_sizes=[2, -1, 4]" },
        { tg_split_with_sizes(z, TG_INTS(1)),
          "split_with_sizes: split expects at least a 1-dimensional tensor" },
        { tg_split_with_sizes(x, TG_INTS(5), .dim = 3),
          "split_with_sizes: Dimension out of range (expected to be in range of [-1, 0], but got 3)" },
        { tg_split(x, 0),
          "split: split_size can only be 0 if dimension size is 0, but got dimension size of 5" },
        { tg_split(x, -1),
          "split: split expects split_size be non-negative, but got split_size=-1" },
        { tg_split(z, 1), "split: split expects at least a 1-dimensional tensor" },
        { tg_unbind(z), "unbind: Dimension specified as 0 but tensor has no dimensions" },
        { tg_unbind(x, .dim = 2),
          "unbind: Dimension out of range (expected to be in range of [-1, 0], but got 2)" },
        { tg_chunk(x, 0), "chunk: chunk expects `chunks` to be greater than 0, got: 0" },
        { tg_chunk(z, 2), "chunk: chunk expects at least a 1-dimensional tensor" },
        { tg_split(NULL, 2), "split: argument 'self' is NULL" },
    };
    /* Each call above ran with the previous error still recorded (the first error wins), so
     * run them again one at a time for their messages. */
    tg_clear_error();
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_expect(cases[i].l.data == NULL && cases[i].l.len == 0,
                  "case %zu: an error gives { NULL, 0 }", i);
        tg_tensor_list_release(cases[i].l); /* a no-op on { NULL, 0 } */
    }
    tg_tensor_list r;
#define EXPECT_ERROR(call, i)                                                     \
    r = (call);                                                                   \
    cr_expect_null(r.data);                                                       \
    cr_expect_str_eq(tg_last_error() ? tg_last_error() : "(none)", cases[i].msg); \
    tg_clear_error();
    EXPECT_ERROR(tg_split_with_sizes(x, TG_INTS(2, 2)), 0);
    EXPECT_ERROR(tg_split_with_sizes(x, TG_INTS(2, -1, 4)), 1);
    EXPECT_ERROR(tg_split_with_sizes(z, TG_INTS(1)), 2);
    EXPECT_ERROR(tg_split_with_sizes(x, TG_INTS(5), .dim = 3), 3);
    EXPECT_ERROR(tg_split(x, 0), 4);
    EXPECT_ERROR(tg_split(x, -1), 5);
    EXPECT_ERROR(tg_split(z, 1), 6);
    EXPECT_ERROR(tg_unbind(z), 7);
    EXPECT_ERROR(tg_unbind(x, .dim = 2), 8);
    EXPECT_ERROR(tg_chunk(x, 0), 9);
    EXPECT_ERROR(tg_chunk(z, 2), 10);
    EXPECT_ERROR(tg_split(NULL, 2), 11);
#undef EXPECT_ERROR
    kt_release_all(z, x);
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ ownership under scopes */

/* Inside a scope the scope owns the list: tg_scope_end releases the elements and frees the
 * array (ASan reports the array if it does not). */
Test(split, scope_frees_list_and_elements)
{
    kt_live live = kt_live_now();
    tg_tensor *x = arange(6, (int64_t[]){ 6 }, 1);
    tg_scope_begin();
    tg_tensor_list l = tg_split(x, 2);
    tg_tensor *s = tg_add(l.data[0], l.data[2]); /* [4, 6] */
    kt_assert_close(s, (double[]){ 4, 6 }, 2, 0, 0, "sum of pieces");
    tg_tensor_list e = tg_unbind(tg_empty(TG_INTS(0, 3))); /* an empty list is tracked too */
    cr_expect(e.data && e.len == 0);
    tg_scope_end();
    tg_release(x);
    kt_assert_no_leak(live);
}

Test(split, scope_keep_list_moves_list_to_the_caller)
{
    kt_live live = kt_live_now();
    tg_tensor *x = arange(6, (int64_t[]){ 6 }, 1);
    tg_scope_begin();
    tg_tensor_list kept = tg_scope_keep_list(tg_chunk(x, 3));
    tg_tensor_list dropped = tg_split(x, 4);
    (void)dropped;
    tg_scope_end();
    cr_assert_eq(kept.len, 3);
    kt_assert_close(kept.data[2], (double[]){ 4, 5 }, 2, 0, 0, "kept piece");
    tg_tensor_list_release(kept); /* now the caller's */
    tg_release(x);
    kt_assert_no_leak(live);
}

/* Nested: a kept list moves to the enclosing scope, which frees it. Keeping one element keeps
 * only that element (the array is freed at the scope's end). */
Test(split, nested_scopes_and_single_elements)
{
    kt_live live = kt_live_now();
    tg_tensor *x = arange(6, (int64_t[]){ 2, 3 }, 2);
    tg_tensor *one;
    tg_scope_begin();
    tg_scope_begin();
    tg_tensor_list inner = tg_scope_keep_list(tg_unbind(x));
    tg_scope_end();
    kt_assert_close(inner.data[1], (double[]){ 3, 4, 5 }, 3, 0, 0, "kept in the outer scope");
    tg_scope_end(); /* frees `inner` */
    tg_scope_begin();
    tg_tensor_list l = tg_split(x, 1, .dim = 1);
    one = tg_scope_keep(l.data[1]);
    tg_scope_end();
    kt_assert_close(one, (double[]){ 1, 4 }, 2, 0, 0, "kept element");
    kt_release_all(one, x);
    kt_assert_no_leak(live);
}

/* ------------------------------------------------------------------ boxed calls */

Test(split, boxed_call_by_name_owns_the_list)
{
    kt_live live = kt_live_now();
    tg_tensor *x = arange(5, (int64_t[]){ 5 }, 1);
    tg_boxed_stack s = { .n = 0 };
    tg_boxed_push_tensor(&s, x);
    tg_boxed_push_int_list(&s, TG_INTS(3, 2));
    tg_boxed_push_int(&s, 0);
    cr_assert_eq(tg_call_boxed("split_with_sizes", &s), 0, "%s", tg_last_error());
    cr_assert_eq(s.n, 1);
    cr_assert_eq(s.v[0].tag, TG_IV_TENSOR_LIST);
    tg_tensor_list l = s.v[0].v.tensors; /* the caller takes it over */
    cr_assert_eq(l.len, 2);
    kt_assert_close(l.data[1], (double[]){ 3, 4 }, 2, 0, 0, "piece 1");
    tg_tensor_list_release(l);
    /* a failing call consumes its arguments and leaves no result */
    s.n = 0;
    s.v[s.n++] = (tg_ivalue){ .tag = TG_IV_TENSOR, .v.t = tg_retain(x) };
    s.v[s.n++] = (tg_ivalue){ .tag = TG_IV_INT_LIST, .v.ints = TG_INTS(1) };
    s.v[s.n++] = (tg_ivalue){ .tag = TG_IV_INT, .v.i = 0 };
    cr_expect_eq(tg_call_boxed("split_with_sizes", &s), -1);
    cr_expect_eq(s.n, 0);
    cr_expect(strstr(tg_last_error(), "to sum exactly to 5") != NULL, "%s", tg_last_error());
    tg_clear_error();
    tg_release(x);
    kt_assert_no_leak(live);
}

/* The CUDA -> CPU fallback with a Tensor[] result: a fake device whose memory is host memory,
 * and an out-of-tree operator that has only a CPU kernel (unbind's). Every piece comes back on
 * the device. */
static tg_op_entry cpu_unbind[1] = {
    { .name = "lists::unbind_cpu", .call_boxed = tg__boxed_unbind, .ntensor_args = 1, .nargs = 2 }
};
static tg_op_entry *const cpu_unbind_rows[] = { &cpu_unbind[0] };
static const tg_library cpu_unbind_lib = { TG_LIBRARY_ABI, "lists", cpu_unbind_rows, 1, NULL, 0 };
static void quiet(const char *msg, void *user)
{
    (void)msg;
    (void)user;
}

Test(split, cuda_fallback_moves_list_results_to_the_device)
{
    tg__register_device_hooks(TG_CUDA, &tg_test_fake_cuda);
    tg_set_warning_handler(quiet, NULL);
    cpu_unbind[0].kernels[TG_KEY_CPU] = (tg_fnptr)tg__composite_unbind;
    cr_assert_eq(tg_library_register(&cpu_unbind_lib), 0, "%s", tg_last_error());
    kt_live live = kt_live_now();
    tg_tensor *h = arange(6, (int64_t[]){ 2, 3 }, 2);
    tg_tensor *g = tg__empty("test", (int64_t[]){ 2, 3 }, 2, TG_FLOAT32, (tg_device){ TG_CUDA, 0 });
    cr_assert_eq(tg__copy_into("copy_", g, h), 0);
    tg_boxed_stack s = { .n = 0 };
    s.v[s.n++] = (tg_ivalue){ .tag = TG_IV_TENSOR, .v.t = tg_retain(g) };
    s.v[s.n++] = (tg_ivalue){ .tag = TG_IV_INT, .v.i = 1 };
    cr_assert_eq(tg_call_boxed("lists::unbind_cpu", &s), 0, "%s", tg_last_error());
    cr_assert_eq(s.v[0].tag, TG_IV_TENSOR_LIST);
    tg_tensor_list l = s.v[0].v.tensors;
    cr_assert_eq(l.len, 3);
    for (int64_t i = 0; i < 3; i++) {
        cr_expect_eq(tg_tensor_device(l.data[i]).type, TG_CUDA, "piece %lld on the device",
                     (long long)i);
        kt_assert_close(l.data[i], (double[]){ (double)i, (double)i + 3 }, 2, 0, 0, "piece");
    }
    tg_tensor_list_release(l);
    kt_release_all(g, h);
    kt_assert_no_leak(live);
    tg_set_warning_handler(NULL, NULL);
}

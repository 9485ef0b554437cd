/* Every schema type and return form with a C mapping (docs/generated-code.md, "Type mapping"):
 * tests/codegen/good/types.yaml, one operator per form, generates into a temporary directory,
 * its declarations and defaults read as documented, and the public header, stubs, boxed
 * callers and table compile with -Wall -Wextra -Werror (gcc and clang) together with a user
 * of the convenience macros. Tests run from the
 * repository root with $TGEN (default build/tgen). */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "codegen/gen_dir.h"

#define SPEC "tests/codegen/good/types.yaml"
#define DERIVS "tests/codegen/good/types_derivs.yaml" /* so that tg_autograd.c has kernels */

static char *gen_types(void)
{
    char *dir = tgen_tmpdir("types");
    const char *args[] = { "--gen", "--native",    SPEC,        "--derivatives",
                           DERIVS,  "--templates", "templates", "--out",
                           dir,     NULL };
    tgen_run_ok(args, "tgen");
    return dir;
}

Test(tgen_types, spec_checks_clean)
{
    const char *args[] = { "--check", "--strict", SPEC, DERIVS, NULL };
    tgen_result r = tgen_run(args);
    cr_expect_eq(r.status, 0, "status %d:\n%s", r.status, r.err ? r.err : "");
    cr_expect_str_empty(r.err);
    tgen_result_free(&r);
}

/* The declarations users see: one line each, as tg_ops.h (its operator headers) writes them. */
Test(tgen_types, declarations)
{
    char *dir = gen_types();
    char *h = tgen_slurp_public(dir);
    cr_assert(h, "no tg_ops.h in %s", dir);
    const char *const want[] = {
        "int64_t tg_size_dimname(tg_tensor *self, const char *dim);",
        "tg_tensor *tg_rename(tg_tensor *self, tg_str_list names);",
        "tg_tensor *tg_upsample_bilinear2d_vec(tg_tensor *input, tg_int_list output_size, bool "
        "align_corners, tg_float_list scale_factors);",
        "tg_tensors3 tg_native_layer_norm_backward(tg_tensor *grad_out, tg_tensor *input, "
        "tg_int_list normalized_shape, tg_tensor *mean, tg_tensor *rstd, tg_tensor *weight, "
        "tg_tensor *bias, tg_bool_list output_mask);",
        "tg_tensor_list tg__foreach_add_scalarlist(tg_tensor_list self, tg_float_list scalars);",
        "tg_tensor *tg_index(tg_tensor *self, tg_tensor_list indices);",
        "tg_tensor *tg_set_source_storage_(tg_tensor *self, tg_storage *source);",
        "int tg_record_stream(tg_tensor *self, tg_stream s);",
        "int64_t tg__cufft_get_plan_cache_size(int64_t device_index);",
        "tg_tensor *tg_tt_quantize(tg_tensor *self, const tg_quantizer *quantizer, tg_storage "
        "*storage, tg_str_list names, tg_tensor_list views, tg_generator *generator);",
        "int tg__foreach_add_scalar_(tg_tensor_list self, double scalar);",
        "tg_tuple_tensorx3_tensorlist tg__cudnn_rnn_backward(",
        "tg_hist_bin_edges_tensorlist tg_histogramdd_fn(",
        "tg_hist_bin_edges tg_histogram_bin_ct_fn(",
        "tg_tuple_tensorx4_int tg__batch_norm_impl_index(",
        "tg_tuple_float_int tg__choose_qparams_per_tensor_fn(",
        "tg_int_list tg__nested_tensor_offsets(tg_tensor *self);",
        "tg_dtype tg_result_type(tg_tensor *tensor, tg_tensor *other);",
        "tg_quant_scheme tg_qscheme(tg_tensor *self);",
        "double tg_item_value(tg_tensor *self);",
        "int64_t tg_sym_size_int(tg_tensor *self, int64_t dim);",
        "bool tg_sym_is_contiguous_fn(",
        "    tg_tensor_list bin_edges;\n} tg_hist_bin_edges_tensorlist;",
        "    tg_tensor *r3;\n    int64_t r4;\n} tg_tuple_tensorx4_int;",
        "    double r0;\n    int64_t r1;\n} tg_tuple_float_int;",
        /* every new default as a C initialiser */
        ".dim = { .data = NULL, .len = 0 }, .output_mask = { .len = 3, .data = "
        "tg__default_tt_defaults_output_mask }, .scales = { .len = 3, .data = "
        "tg__default_tt_defaults_scales }, .factors = { .data = NULL, .len = 0 }, .modes = { .len "
        "= 0, .data = tg__empty_str_list_storage }, .names = { .len = 0, .data = "
        "tg__empty_str_list_storage }, .mask = { .data = NULL, .len = 0 }, .value = TG_NONE_FLOAT, "
        ".eps = 1e-5, .flag = true, .index = 0, .qscheme = TG_PER_TENSOR_AFFINE, .maybe = "
        "TG_QSCHEME_NONE, __VA_ARGS__ })",
        "extern const bool tg__default_tt_defaults_output_mask[];",
        "extern const double tg__default_tt_defaults_scales[];",
    };
    tgen_expect_each(h, want, sizeof want / sizeof want[0], "tg_ops.h");
    char *c = tgen_read_out(dir, "tg_ops.c");
    cr_expect(
        strstr(c, "const bool tg__default_tt_defaults_output_mask[] = { true, false, true };"));
    cr_expect(strstr(c, "const double tg__default_tt_defaults_scales[] = { 0.5, 2, -INFINITY };"));
    /* Tensor?[] elements may be None: no NULL check, keys of the present ones */
    cr_expect(strstr(
        c, "tg_keyset tg_ks = (tg_dispatch_tensor_keys(self) | tg__opt_list_keys(indices))"));
    free(c);
    free(h);
    tgen_rmdir(dir);
}

/* A user of the new types and macros, compiled with the generated files. */
static const char *const user =
    "#include \"tg_ops.h\"\n"
    "int types_user(tg_tensor *x, tg_storage *st, const tg_quantizer *q);\n"
    "int types_user(tg_tensor *x, tg_storage *st, const tg_quantizer *q) {\n"
    "    int64_t n = tg_size_dimname(x, \"N\");\n"
    "    tg_tensor *a = tg_sum_dim_dimnamelist(x, TG_DIMNAMES(\"N\", \"C\"), .keepdim = true);\n"
    "    tg_tensor *b = tg_rename(x, TG_NO_STRS);\n"
    "    tg_tensor *c = tg_upsample_bilinear2d_vec(x, TG_NO_INTS, false, TG_FLOATS(2.0, 2.0));\n"
    "    tg_tensors3 d = tg_native_layer_norm_backward(x, x, TG_INTS(2), x, x, NULL, NULL,\n"
    "                                                  TG_BOOLS(true, false, true));\n"
    "    tg_tensor_list e = tg__foreach_add_scalarlist(TG_TENSORS(x, x), TG_FLOATS(1, 2));\n"
    "    tg_tensor *f = tg_index(x, TG_TENSORS(NULL, x));\n"
    "    tg_tensor *g = tg_tt_defaults(x, .output_mask = TG_BOOLS(false, false, true),\n"
    "                                  .modes = TG_STRS(\"a\"), .names = TG_STRS_EMPTY,\n"
    "                                  .factors = TG_FLOATS_EMPTY, .mask = TG_BOOLS_EMPTY,\n"
    "                                  .qscheme = TG_PER_CHANNEL_AFFINE, .value = 1.5);\n"
    "    tg_tensor *h = tg_tt_quantize(x, q, st, TG_STRS(\"x\"), TG_TENSORS(x), NULL);\n"
    "    int status = tg_record_stream(x, 0) | tg__foreach_add_scalar_(TG_TENSORS(x), 1.0);\n"
    "    tg_hist_bin_edges_tensorlist i = tg_histogramdd(x, TG_INTS(4));\n"
    "    tg_tuple_float_int j = tg__choose_qparams_per_tensor(x);\n"
    "    tg_int_list k = tg__nested_tensor_offsets(x);\n"
    "    tg_dtype l = tg_result_type(x, x);\n"
    "    tg_quant_scheme m = tg_qscheme(x);\n"
    "    tg_values_count_int_mean_float_any_bool_dtype_dtype_scheme_qscheme_parts_tensorlist o =\n"
    "        tg_tt_mixed(x);\n"
    "    tg_int_list_release(k);\n"
    "    tg_tensor_list_release(e);\n"
    "    tg_tensor_list_release(i.bin_edges);\n"
    "    tg_tensor_list_release(o.parts);\n"
    "    tg_release(a); tg_release(b); tg_release(c); tg_release(d.r0); tg_release(d.r1);\n"
    "    tg_release(d.r2); tg_release(f); tg_release(g); tg_release(h); tg_release(i.hist);\n"
    "    tg_release(o.values);\n"
    "    return status + (int)n + (int)j.r1 + (int)l + (int)m + (int)o.count;\n"
    "}\n";

Test(tgen_types, generated_code_compiles_warning_free)
{
    char *dir = gen_types();
    tgen_write_file(dir, "types_user.c", user);
    const char *const sources[] = { "types_user.c",  "tg_ops.c",        "tg_boxed.c",
                                    "tg_register.c", "tg_structured.c", "tg_autograd.c" };
    cr_expect_eq(tgen_compile_errors(dir, sources, sizeof sources / sizeof sources[0]), 0);
    tgen_rmdir(dir);
}

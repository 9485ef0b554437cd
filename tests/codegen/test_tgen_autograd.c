/* tgen's autograd emission (generated/tg_autograd.c, tg_grad_op_list.h, the autograd slot of
 * tg_register.c) on a small spec whose formulas exercise each kind of saved value (a tensor,
 * its sizes, dim, numel or scalar type alone, scalars, an int list and a string kept in the
 * node, the output), joint formulas, output_differentiability, not_implemented, Tensor? and
 * Tensor[] inputs, in-place (saving self before the op) and out= variants, and a
 * CompositeImplicitAutograd op with and without a formula. The generated C must compile
 * warning-free (-Werror) with gcc and clang; the checks below pin the properties the engine
 * relies on. Tests run from the repository root with $TGEN (default build/tgen). */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "codegen/gen_dir.h"

#define SPEC "tests/codegen/emit/autograd.yaml"
#define DERIVS "tests/codegen/emit/autograd_derivs.yaml"

static char *dir;
static char *autograd_c, *register_c, *grad_list_h;

static void generate(void)
{
    dir = tgen_tmpdir("autograd");
    const char *args[] = { "--gen", "--native",    SPEC,        "--derivatives",
                           DERIVS,  "--templates", "templates", "--out",
                           dir,     NULL };
    tgen_run_ok(args, "tgen");
    autograd_c = tgen_read_shards(dir, "tg_autograd");
    register_c = tgen_read_shards(dir, "tg_ops"); /* the op table's rows */
    grad_list_h = tgen_read_out(dir, "tg_grad_op_list.h");
}

static void cleanup(void)
{
    free(autograd_c);
    free(register_c);
    free(grad_list_h);
    tgen_rmdir(dir);
}

TestSuite(tgen_autograd, .init = generate, .fini = cleanup);

/* The text of the generated code that starts with `head`, up to `stop`. */
static char *section_to(const char *text, const char *head, const char *stop)
{
    const char *p = strstr(text, head);
    cr_assert(p, "no '%s' in the generated code", head);
    const char *end = strstr(p, stop);
    return strndup(p, end ? (size_t)(end - p) : strlen(p));
}

/* A definition: up to the next blank line. */
static char *section(const char *text, const char *head) { return section_to(text, head, "\n\n"); }

static void expect_in(const char *text, const char *what, const char *where)
{
    cr_expect(strstr(text, what) != NULL, "%s lacks '%s':\n%s", where, what, text);
}

Test(tgen_autograd, compiles_warning_free)
{
    const char *const files[] = { "tg_autograd*.c", "tg_register.c", "tg_ops*.c",
                                  "tg_structured*.c", "tg_boxed*.c" };
    cr_expect_eq(tgen_compile_errors(dir, files, sizeof files / sizeof files[0]), 0,
                 "generated C does not compile (commands above)");
}

Test(tgen_autograd, saves_only_what_formulas_use)
{
    /* A tensor used only through sizes(): its sizes; a scalar by value. */
    char *s = section(autograd_c, "typedef struct tg__node_SumBackward0 {");
    expect_in(s, "tg_saved_sizes self_sizes;", "SumBackward0");
    expect_in(s, "bool keepdim;", "SumBackward0");
    cr_expect(!strstr(s, "tg_saved self;"), "SumBackward0 keeps self:\n%s", s);
    free(s);
    /* dim() and numel() alone: two ints; the output as a saved tensor. */
    s = section(autograd_c, "typedef struct tg__node_SoftplusLikeBackward0 {");
    expect_in(s, "int64_t self_dim;", "SoftplusLikeBackward0");
    expect_in(s, "int64_t self_numel;", "SoftplusLikeBackward0");
    expect_in(s, "double beta;", "SoftplusLikeBackward0");
    expect_in(s, "tg_saved result;", "SoftplusLikeBackward0");
    free(s);
    /* scalar_type() alone. */
    s = section(autograd_c, "typedef struct tg__node_ToCopyBackward0 {");
    expect_in(s, "tg_dtype self_scalar_type;", "ToCopyBackward0");
    free(s);
    /* A Tensor? with its None flag; a string kept after the node struct. */
    expect_in(autograd_c, "bool weight_defined;", "WeightedBackward0");
    expect_in(autograd_c,
              "{ TG_AG_SAVE_STR, false, offsetof(tg__frame_DivBackward0, rounding_mode), "
              "offsetof(tg__node_DivBackward0, rounding_mode), 0, NULL }",
              "the div.Tensor_mode entry");
    /* A non-differentiable output read by name is saved as an output (output 1). */
    expect_in(autograd_c,
              "{ TG_AG_SAVE_TENSOR, true, 1, offsetof(tg__node_MaxBackward0, result1), 0, NULL },",
              "the max.dim entry");
}

/* Int lists are copied into the node's trailing storage before strings, whatever the
 * argument order, so that they stay 8-byte aligned. */
Test(tgen_autograd, keeps_int_lists_before_strings)
{
    char *k = section_to(autograd_c, "static const tg_ag_save StrThenIntsBackward0_saves[]", "};");
    const char *ints =
        strstr(k, "{ TG_AG_SAVE_INTS, false, offsetof(tg__frame_StrThenIntsBackward0, dims)");
    const char *str =
        strstr(k, "{ TG_AG_SAVE_STR, false, offsetof(tg__frame_StrThenIntsBackward0, mode)");
    cr_assert(ints && str, "the entry does not keep both values:\n%s", k);
    cr_expect(ints < str, "the string is copied before the int list:\n%s", k);
    free(k);
}

Test(tgen_autograd, names_nodes_like_pytorch)
{
    expect_in(autograd_c, "{ { \"AddBackward0\", tg__autograd_apply", "add.Tensor");
    expect_in(autograd_c, "{ { \"AddBackward1\", tg__autograd_apply", "add.Scalar");
    expect_in(autograd_c, "{ \"ToCopyBackward0\"", "_to_copy");
    expect_in(autograd_c, "{ \"SoftplusLikeBackward0\"", "softplus_like");
}

Test(tgen_autograd, records_history_for_differentiable_outputs_only)
{
    /* The runtime gives history to the outputs marked differentiable (record.c). */
    char *k = section_to(autograd_c, "static const tg_ag_output MaxBackward0_outputs[]", "};");
    expect_in(k,
              "{ offsetof(tg_values_indices, values), offsetof(tg__frame_MaxBackward0, result0), "
              "sizeof(tg_tensor *), TG_AG_OUT_TENSOR, true },",
              "max.dim");
    expect_in(k,
              "{ offsetof(tg_values_indices, indices), offsetof(tg__frame_MaxBackward0, result1), "
              "sizeof(tg_tensor *), TG_AG_OUT_TENSOR, false },",
              "max.dim");
    free(k);
    /* Two outputs, one edge. */
    k = section_to(autograd_c, "static const tg_ag_entry MaxBackward0_entry", "};");
    expect_in(k, ".nedges = 1, .list_edge = -1,", "max.dim");
    expect_in(k, ".noutputs = 2,", "max.dim");
    free(k);
}

/* PyTorch numbers `grads[i]` and `grad` over the differentiable outputs only (torchgen gives
 * the node those outputs alone); the node here holds every output's gradient at its schema
 * index, so the formula's index is mapped (issue 35, bug 2). */
Test(tgen_autograd, numbers_gradients_over_differentiable_outputs)
{
    /* [False, True, True]: grads[0] is output 1's, grads[1] output 2's. */
    char *f = section_to(autograd_c, "static tg_tensor *Split3Backward0_x(", "\n}\n");
    expect_in(f, "tg_mul_scalar(grads[2], (double)(INT64_C(3)))", "Split3Backward0_x");
    expect_in(f, "tg_add_fn(grads[1], t0,", "Split3Backward0_x");
    cr_expect(!strstr(f, "grads[0]"), "Split3Backward0_x reads output 0's gradient:\n%s", f);
    free(f);
    /* [False, False, True]: `grad` is output 2's. */
    f = section_to(autograd_c, "static tg_tensor *Split3FirstBackward0_x(", "\n}\n");
    expect_in(f, "tg_mul_scalar(grads[2], (double)(INT64_C(5)))", "Split3FirstBackward0_x");
    free(f);
}

Test(tgen_autograd, joint_and_not_implemented_formulas)
{
    /* A joint formula fills out[] itself and runs when either edge needs a gradient. */
    expect_in(autograd_c,
              "{ TG_AGF_STATUS, -1, UINT64_C(0x3), -1, NULL, .fn.status = "
              "MaximumBackward0_self_other }",
              "MaximumBackward0");
    expect_in(autograd_c, "out[1] = tg__gen_take(&t0.indices);", "MaximumBackward0_self_other");
    expect_in(autograd_c,
              "{ TG_AGF_NOT_IMPL, -1, UINT64_C(0x2), -1, \"mm: mat2\", .fn.one = NULL }",
              "MmBackward0");
    /* A Tensor[] input declared not_implemented: one edge per element after the fixed ones. */
    char *e = section_to(autograd_c, "static const tg_ag_entry CatBackward0_entry", "};");
    expect_in(e, ".edges = NULL, .nedges = 0, .list_edge = 0,", "cat");
    free(e);
    /* No formula at all (floor): forward works, backward names the operator (the runtime's
     * NotImplemented node, record.c). */
    e = section_to(autograd_c, "static const tg_ag_entry tg__ni_floor_entry", "};");
    cr_expect(!strstr(e, ".vt ="), "floor has a node of its own:\n%s", e);
    free(e);
    expect_in(
        autograd_c,
        "static const tg_ag_op tg_op = { \"floor\", \"floor\", &tg__ni_floor_entry, false, 0 };",
        "floor");
}

Test(tgen_autograd, inplace_and_out_variants)
{
    /* The in-place op records its functional sibling's entry, marked in place: the runtime
     * checks self, saves a copy of it before the op runs (record.c) and its forward formulas
     * read that copy. */
    char *k = section(autograd_c, "tg_tensor *tg__autograd_kernel_mul_(");
    expect_in(
        k,
        "static const tg_ag_op tg_op = { \"mul_\", \"mul_.Tensor\", &MulBackward0_entry, true, 0 };",
        "mul_");
    expect_in(k, "tg__autograd_begin(&tg_c, &tg_op, &tg_x) ? NULL : tg_mul_(self, other);",
              "mul_ records, then runs the op");
    free(k);
    expect_in(autograd_c,
              "{ TG_AG_SAVE_TENSOR, false, offsetof(tg__frame_MulBackward0, self), "
              "offsetof(tg__node_MulBackward0, self), 0, NULL },",
              "MulBackward0 saves self");
    k = section(autograd_c, "tg_tensor *tg__autograd_kernel_add_out(");
    expect_in(k, "tg_autograd_check_out(\"add\", tg_in, 3)", "add.out");
    free(k);
}

Test(tgen_autograd, fills_the_autograd_slot)
{
    static const char *const slots[] = {
        "[TG_KEY_AUTOGRAD] = (tg_fnptr)tg__autograd_kernel_add,",
        "[TG_KEY_AUTOGRAD] = (tg_fnptr)tg__autograd_kernel_add_out,",
        /* A composite with a formula uses the formula; one without keeps the composite. */
        "[TG_KEY_AUTOGRAD] = (tg_fnptr)tg__autograd_kernel_twice,",
        "[TG_KEY_AUTOGRAD] = (tg_fnptr)tg__composite_square,",
    };
    tgen_expect_each(register_c, slots, sizeof slots / sizeof slots[0], "the rows");
    /* Factories get none (nothing to differentiate). */
    char *row = section_to(register_c, "tg_op_entry tg__row_zeros = {", "\n    },\n");
    cr_expect(!strstr(row, "TG_KEY_AUTOGRAD"), "zeros has an autograd kernel:\n%s", row);
    free(row);
}

Test(tgen_autograd, lists_differentiable_ops)
{
    expect_in(grad_list_h, "X(add, \"add.Tensor\")", "tg_grad_op_list.h");
    expect_in(grad_list_h, "X(add_, \"add_.Tensor\")", "tg_grad_op_list.h");
    expect_in(grad_list_h, "X(mul_, \"mul_.Tensor\")", "tg_grad_op_list.h");
    cr_expect(!strstr(grad_list_h, "X(floor,"), "floor has no formula but is listed");
    cr_expect(!strstr(grad_list_h, "X(add_out,"), "out= variants are not differentiable");
}

/* The same inputs give the same bytes (generated/ is committed; CI diffs it). */
Test(tgen_autograd, output_is_deterministic)
{
    char *again = strdup("/tmp/tgen_autograd2_XXXXXX");
    cr_assert(again && mkdtemp(again));
    const char *args[] = { "--gen",       "--native",  SPEC,    "--derivatives", DERIVS,
                           "--templates", "templates", "--out", again,           NULL };
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0);
    tgen_result_free(&r);
    char path[512];
    snprintf(path, sizeof path, "%s/tg_autograd.c", again);
    char *second = tgen_slurp(path);
    cr_expect(second && !strcmp(second, autograd_c), "two runs differ");
    free(second);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", again);
    if (system(cmd) != 0) cr_log_warn("could not remove %s", again);
    free(again);
}

/* Forward mode: a formula's terms are C functions over the forward context, each run only when
 * its tangent exists; auto_element_wise is the backward formula on the tangent, auto_linear the
 * operator on the tangents; in-place ops read self as it was; an operator without a forward
 * formula fails when a tangent reaches it. */
Test(tgen_autograd, forward_mode)
{
    expect_in(autograd_c, "if (!(t0 = tg_mul(n->other_t, n->self))) goto done;", "mul jvp term 0");
    expect_in(autograd_c, "if (!(t0 = tg_mul(n->self_t, n->other))) goto done;", "mul jvp term 1");
    /* Term 0 runs when other has a tangent (argument 1), term 1 when self has (argument 0). */
    char *k = section_to(autograd_c, "static const tg_fw_term MulBackward0_terms[]", "};");
    expect_in(k, "{ 0, false, UINT64_C(0x2), MulBackward0_jvp0_0, NULL },", "mul term 0");
    expect_in(k, "{ 0, false, UINT64_C(0x1), MulBackward0_jvp0_1, NULL },", "mul term 1");
    free(k);
    /* The formulas read the output (`result`) from the frame, where the runtime puts its
     * alias. */
    expect_in(autograd_c,
              "{ 0, offsetof(tg__frame_MulBackward0, result), sizeof(tg_tensor *), "
              "TG_AG_OUT_TENSOR, true }",
              "mul's output");
    expect_in(autograd_c, "if (!(t0 = tg_mul(n->self_t, n->result))) goto done;",
              "exp: auto_element_wise");
    expect_in(autograd_c, "tg_expand_fn(n->self_t, n->size,", "expand: auto_linear");
    /* floor has no forward formula: its descriptor has no terms and no reason, so forward
     * mode reports it not implemented. */
    k = section_to(autograd_c, "static const tg_ag_entry tg__ni_floor_entry", "};");
    cr_expect(!strstr(k, ".terms =") && !strstr(k, ".fw_why ="), "floor has forward terms:\n%s", k);
    free(k);
}

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
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0, "tgen failed:\n%s", r.err ? r.err : "");
    tgen_result_free(&r);
    autograd_c = tgen_read_out(dir, "tg_autograd.c");
    register_c = tgen_read_out(dir, "tg_register.c");
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
    const char *const files[] = { "tg_autograd.c", "tg_register.c", "tg_ops.c", "tg_structured.c" };
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
    expect_in(autograd_c, "tg_n->rounding_mode = tg__gen_keep_str(rounding_mode, &tg_cursor);",
              "the div.Tensor_mode kernel");
    /* A non-differentiable output read by name is saved as an output. */
    expect_in(autograd_c, "tg_autograd_save(&tg_n->result1, tg_r.indices, true, 1);",
              "the max.dim kernel");
}

/* Int lists are copied into the node's trailing storage before strings, whatever the
 * argument order, so that they stay 8-byte aligned. */
Test(tgen_autograd, keeps_int_lists_before_strings)
{
    char *k = section_to(autograd_c, "tg__autograd_kernel_str_then_ints(", "\n}\n");
    const char *ints = strstr(k, "tg__gen_keep_ints(dims, &tg_cursor)");
    const char *str = strstr(k, "tg__gen_keep_str(mode, &tg_cursor)");
    cr_assert(ints && str, "the kernel does not keep both values:\n%s", k);
    cr_expect(ints < str, "the string is copied before the int list:\n%s", k);
    free(k);
}

Test(tgen_autograd, names_nodes_like_pytorch)
{
    expect_in(autograd_c, "{ \"AddBackward0\", AddBackward0_apply", "add.Tensor");
    expect_in(autograd_c, "{ \"AddBackward1\", AddBackward1_apply", "add.Scalar");
    expect_in(autograd_c, "{ \"ToCopyBackward0\"", "_to_copy");
    expect_in(autograd_c, "{ \"SoftplusLikeBackward0\"", "softplus_like");
}

Test(tgen_autograd, records_history_for_differentiable_outputs_only)
{
    char *k = section(autograd_c, "tg_values_indices tg__autograd_kernel_max_dim(");
    expect_in(k, "tg_autograd_set_history(tg_r.values, &tg_n->base, 0);", "max.dim");
    cr_expect(!strstr(k, "tg_autograd_set_history(tg_r.indices"), "indices get a grad_fn:\n%s", k);
    expect_in(k, "tg_autograd_node_new(sizeof *tg_n, &MaxBackward0_vtable, 2, 1)", "max.dim");
    free(k);
}

Test(tgen_autograd, joint_and_not_implemented_formulas)
{
    expect_in(autograd_c, "tg_rc = MaximumBackward0_self_other(n, grads, out);",
              "MaximumBackward0");
    expect_in(autograd_c, "out[1] = t0.indices;", "MaximumBackward0_self_other");
    expect_in(autograd_c, "tg_rc = tg_autograd_not_implemented(\"mm: mat2\");", "MmBackward0");
    /* A Tensor[] input declared not_implemented: one edge per element after the fixed ones. */
    expect_in(autograd_c,
              "tg_autograd_node_new(sizeof *tg_n, &CatBackward0_vtable, 1, 0 + (int)tensors.len)",
              "cat");
    /* No formula at all (floor): forward works, backward names the operator. */
    expect_in(autograd_c, "return tg_autograd_not_implemented(\"floor\");", "floor");
    expect_in(autograd_c, "{ \"NotImplemented\", tg__ni_apply_floor, NULL }", "floor");
}

Test(tgen_autograd, inplace_and_out_variants)
{
    char *k = section(autograd_c, "tg_tensor *tg__autograd_kernel_mul_(");
    expect_in(k, "tg_autograd_check_inplace(\"mul_\", self)", "mul_");
    expect_in(k, "tg_tensor *tg_orig = tg_clone(self);", "mul_");
    expect_in(k, "&MulBackward0_vtable", "mul_");
    /* self is saved before the op runs. */
    cr_expect(strstr(k, "tg_clone(self)") <
                  strstr(k, "tg__below_mul_(self, other);\n    if (!tg_r)"),
              "mul_ saves self after the op:\n%s", k);
    free(k);
    k = section(autograd_c, "tg_tensor *tg__autograd_kernel_add_out(");
    expect_in(k, "tg_autograd_check_out(\"add\", tg_in, 3)", "add.out");
    free(k);
}

Test(tgen_autograd, fills_the_autograd_slot)
{
    expect_in(register_c, "[TG_KEY_AUTOGRAD] = (tg_fnptr)tg__autograd_kernel_add,",
              "tg_register.c");
    expect_in(register_c, "[TG_KEY_AUTOGRAD] = (tg_fnptr)tg__autograd_kernel_add_out,",
              "tg_register.c");
    /* A composite with a formula uses the formula; one without keeps the composite. */
    expect_in(register_c, "[TG_KEY_AUTOGRAD] = (tg_fnptr)tg__autograd_kernel_twice,",
              "tg_register.c");
    expect_in(register_c, "[TG_KEY_AUTOGRAD] = (tg_fnptr)tg__composite_square,", "tg_register.c");
    /* Factories get none (nothing to differentiate). */
    char *row = section_to(register_c, "[TG_OP_ZEROS] = {", "\n    },\n");
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
    char *k = section(autograd_c, "static int tg__fwt_mul(");
    expect_in(k, "if (tg__fw_has(other, tg_l)) {", "mul: term 0 runs with other's tangent");
    expect_in(k, "if (tg__fw_has(self, tg_l)) {", "mul: term 1 runs with self's tangent");
    expect_in(k, ".result = tg__fw_output_alias(tg_r, tg_l)", "mul reads its output's alias");
    expect_in(k, "tg__fw_set(\"mul\", tg_r, tg_t, tg_l)", "mul");
    free(k);
    k = section(autograd_c, "static int tg__fwt_mul_(");
    expect_in(k, ".self = tg_self0", "mul_ reads self as it was");
    expect_in(k, "tg__fw_set_inplace(\"mul_\", tg_r, tg_t, tg_l)", "mul_");
    free(k);
    k = section(autograd_c, "static tg_tensor *tg__fwk_mul_(");
    expect_in(k, "tg_tensor *tg_self0 = tg_clone(self);", "mul_ keeps self as it was");
    free(k);
    expect_in(autograd_c, "if (!(t0 = tg_mul(n->self_t, n->result))) goto done;",
              "exp: auto_element_wise");
    expect_in(autograd_c, "tg_expand_fn(n->self_t, n->size,", "expand: auto_linear");
    expect_in(autograd_c, "tg__fw_not_implemented(\"floor\");", "floor");
    /* Without an input requiring grad the kernel runs the op through the forward-mode
     * wrapper; with one, the tangents are computed once the output has its history. */
    k = section(autograd_c, "tg_tensor *tg__autograd_kernel_mul(");
    expect_in(k, "return tg__fwk_mul(self, other);", "mul");
    cr_expect(strstr(k, "tg_autograd_set_history(") < strstr(k, "tg__fwt_mul(self, other, tg_r)"),
              "mul computes tangents before recording history:\n%s", k);
    free(k);
}

/* tgen --gen on a small spec in PyTorch's style (tests/codegen/emit/pytorch_forms*.yaml: no
 * c_name:, PyTorch's own formula forms): the C++ forms of PyTorch's formulas compile to C
 * (tuples, std::get, grad_input_mask, optionals, Tensor() as "no gradient", vocabulary functions
 * returning several tensors and overloads), entries past the limits of generated nodes become
 * nodes whose backward fails with the reason, and the generator bugs of issue 10 stay fixed:
 * node names shared by two entries (ConjPhysicalBackward0/1), a comment inside a formula, the
 * engine's calls under the C names tgen derives (tg_sum_dim_intlist, not the project's tg_sum),
 * `.conj()` as the operator conj. Tests run from the repository root with $TGEN. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "codegen/gen_dir.h"

#define SPEC "tests/codegen/emit/pytorch_forms.yaml"
#define DERIVS "tests/codegen/emit/pytorch_forms_derivs.yaml"
#define VOCAB "tests/codegen/emit/pytorch_forms_functions.yaml"

static char *dir, *autograd_c, *engine_c;

static void generate(void)
{
    dir = tgen_tmpdir("pytorch_forms");
    const char *args[] = { "--gen",         "--native",    SPEC,
                           "--derivatives", DERIVS,        "--autograd-functions",
                           VOCAB,           "--templates", "templates",
                           "--out",         dir,           NULL };
    tgen_run_ok(args, "tgen --gen");
    autograd_c = tgen_read_shards(dir, "tg_autograd");
    engine_c = tgen_read_out(dir, "tg_autograd_engine.c");
}

static void cleanup(void)
{
    free(autograd_c);
    free(engine_c);
    tgen_rmdir(dir);
}

TestSuite(tgen_pytorch_forms, .init = generate, .fini = cleanup);

static int count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

static void expect_has(const char *what)
{
    cr_expect(strstr(autograd_c, what) != NULL, "tg_autograd.c lacks '%s'", what);
}

Test(tgen_pytorch_forms, compiles_warning_free)
{
    const char *const files[] = { "tg_autograd*.c" };
    cr_expect_eq(tgen_compile_errors(dir, files, 1), 0,
                 "generated C does not compile (commands above)");
}

Test(tgen_pytorch_forms, check_counts_the_entries_past_the_limits)
{
    const char *args[] = {
        "--check", "--strict", "--autograd-functions", VOCAB, SPEC, DERIVS, NULL
    };
    tgen_result r = tgen_run(args);
    cr_expect_eq(r.status, 0, "tgen --check --strict failed:\n%s", r.err ? r.err : "");
    cr_expect(r.out && strstr(r.out, "checked, but not generatable yet: 3 derivative entries"),
              "unexpected summary: %s", r.out ? r.out : "");
    cr_expect(r.out && !strstr(r.out, "not checked"), "unexpected summary: %s", r.out ? r.out : "");
    tgen_result_free(&r);
}

/* Entries whose CamelCase names collide are numbered on: conj_physical / conj_physical_ and
 * _indices / indices (1.13.1 defined ConjPhysicalBackward0 twice). */
Test(tgen_pytorch_forms, numbers_nodes_by_their_name)
{
    const char *const names[] = { "ConjPhysicalBackward0", "ConjPhysicalBackward1",
                                  "IndicesBackward0", "IndicesBackward1" };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char def[128];
        snprintf(def, sizeof def, "static const tg_ag_node_type %s_type", names[i]);
        cr_expect_eq(count(autograd_c, def), 1, "%s defined %d times", names[i],
                     count(autograd_c, def));
    }
}

/* A comment in a formula is escaped in the C comment that quotes the formula. */
Test(tgen_pytorch_forms, quotes_comments_in_formulas)
{
    expect_has("/* other: maybe_multiply(grad, alpha.conj()) /\\* alpha times grad *\\/ */");
    expect_has("/\\*s=*\\/");
    cr_expect_eq(count(autograd_c, "/*s=*/"), 0, "a formula's comment is pasted unescaped");
}

/* The engine calls the spec's operators by the C names tgen derives for them. */
Test(tgen_pytorch_forms, engine_uses_the_derived_c_names)
{
    const char *const calls[] = {
        "tg_sum_dim_intlist(r, ((tg_int_list){ .len = nd, .data = dims }), .keepdim = true)",
        "tg_zeros(((tg_int_list){ .len = m->ndim, .data = m->sizes }), .dtype = m->dtype, .device = m->device)",
        "tg_to_dtype(r, m->dtype)",
        "return tg_add(a, b);",
    };
    tgen_expect_each(engine_c, calls, sizeof calls / sizeof calls[0], "tg_autograd_engine.c");
    /* (This spec lacks clone, view and copy_: the calls after the engine's report it.) */
    char *rest = strstr(engine_c, "\n/* This spec does not declare the operator that copies");
    cr_expect(rest != NULL, "the engine does not report the operators the spec lacks");
    if (rest) *rest = 0;
    cr_expect_eq(count(engine_c, "tg__gen_engine_missing(\""), 0,
                 "the engine reports operators the spec has");
    if (rest) *rest = '\n';
}

/* A SymInt's `.expect_int()` (op-plugin's formulas) is the int itself. */
Test(tgen_pytorch_forms, expect_int_is_the_int)
{
    expect_has("/* self: first_rows(grad, self.sym_size(0).expect_int() - n) */");
    expect_has("if (!(t1 = tg_first_rows(grads[0], (t0 - n->n_)))) goto done;");
}

/* `.conj()` of a tensor is the operator conj (logaddexp's formulas). */
Test(tgen_pytorch_forms, conj_method_is_the_operator) { expect_has("tg_conj(t2)"); }

Test(tgen_pytorch_forms, compiles_the_cpp_forms)
{
    /* vocabulary: overloads are distinct functions; a tuple gets a result struct */
    expect_has("tg_tensor *tg__grad_scaled_tensor(tg_tensor *grad, tg_tensor *s);");
    expect_has("} tg__grad_two_grads_result;");
    /* grad_input_mask: whether each input of the formula needs a gradient */
    expect_has("(tg_bool_list){ (const bool[]){ tg__node_needs_input_grad(&n->base, 0), "
               "tg__node_needs_input_grad(&n->base, 1) }, 2 }");
    /* a tuple call fails only when every field is NULL */
    expect_has("if (!t2.r0 && !t2.r1) goto done;");
    /* std::tuple<...>() in a branch: no gradient */
    expect_has("static int DivBackward0_self_other(");
    /* Tensor() as a gradient: the formula returns a status and stores NULL */
    expect_has("static int OptGradBackward0_self(tg_node *tg_nd, tg_tensor *const *grads, "
               "tg_tensor **out)");
    expect_has("{ TG_AGF_STATUS, -1, UINT64_C(0x1), -1, NULL, .fn.status = OptGradBackward0_self "
               "}");
    expect_has("(!tg_is_none_int(n->dim)) && (((void)s_self, TG_STRIDED) == TG_STRIDED)");
    expect_has("if ((grads[0] != NULL) && tg_is_grad_enabled()) {");
    expect_has("sqrt((double)(3.1415926535897931))");
    /* x.options() for dtype, layout, device and pin_memory; int lists filled in a loop */
    expect_has(".dtype = tg_tensor_dtype(s_self), .layout = TG_STRIDED, .device = "
               "tg_tensor_device(s_self)");
    expect_has("if (!(t0 = tg__gen_ints_new(n->pad.len)).data) goto done;");
    expect_has("((int64_t *)t3.data)[tg_j] = (n->pad.data[tg_j] * INT64_C(2));");
    expect_has("tg__gen_ints_free(t3);");
}

/* An int among the returns: history on the tensor, the int saved by value for the formula. */
Test(tgen_pytorch_forms, saves_scalar_outputs_by_value)
{
    expect_has("{ TG_AG_SAVE_VALUE, true, 1, offsetof(tg__node_WithCountBackward0, result1), "
               "sizeof(int64_t), NULL }");
    expect_has("tg__grad_scaled(grads[0], (double)(n->result1))");
    expect_has("TG_AG_OUT_TENSOR, true }");
    expect_has("sizeof(int64_t), TG_AG_OUT_OTHER, true }");
}

/* Entries tgen cannot generate: the operator's kernel records a node of the entry's name whose
 * backward fails naming the operator and why. */
Test(tgen_pytorch_forms, entries_past_the_limits_fail_in_backward)
{
    expect_has("{ \"WithListBackward0\", tg__autograd_apply_not_generated, NULL }");
    expect_has(".why = \"the operator returns a value other than a Tensor\",");
    expect_has(".why = \"it is a mutable operator (it writes to an argument)\",");
    expect_has(".why = \"it reads the Tensor[] argument 'tensors' whole (a node saves only its "
               "elements' sizes)\",");
}

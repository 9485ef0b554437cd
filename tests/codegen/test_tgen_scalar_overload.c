/* Scalar overloads (`scalar_overload_of:`, docs/spec.md): tgen generates their kernels.
 *
 * - generates_the_glue: from tests/codegen/good/scalar_overload.yaml, the exact kernel text
 *   (each Scalar that stands for a Tensor wrapped and released, defaults passed through the
 *   options struct, result structs) in the three row slots of a CompositeImplicitAutograd
 *   kernel, compiling warning-free with gcc and clang.
 * - the library's own: eq/add/pow... .Scalar rows hold the generated kernels, and they wrap
 *   as PyTorch does (integral Scalars promote like Python ints, others like Python floats;
 *   alpha passed through; in place and out= through the Tensor overload). The fixture tests
 *   (tests/ops/test_pointwise.c) cover the values of every overload; this checks the rule.
 * Every value test checks that no tensor leaks. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "codegen/gen_dir.h"
#include "tensorgen.h"
#include "tg_kernels.h"
#include "kt_util.h"

#define SPEC "tests/codegen/good/scalar_overload.yaml"

/* ------------------------------------------------------------------ the generator */

static const char lerp_scalar[] =
    "/* lerp.Scalar(Tensor self, Scalar end, Scalar weight, Scalar alpha=1) -> Tensor */\n"
    "tg_tensor *tg__scalar_overload_lerp_scalar(tg_tensor *self, double end, double weight, double alpha)\n"
    "{\n"
    "    tg_tensor *tg_w_end = tg_wrap_scalar(end);\n"
    "    tg_tensor *tg_w_weight = tg_wrap_scalar(weight);\n"
    "    tg_tensor *tg_r = tg_lerp_fn(self, tg_w_end, tg_w_weight, (tg_lerp_opts){ .alpha = alpha });\n"
    "    tg_release(tg_w_end);\n"
    "    tg_release(tg_w_weight);\n"
    "    return tg_r;\n"
    "}\n";

static const char minmax_scalar[] =
    "tg_min_max tg__scalar_overload_minmax_scalar(double self, tg_tensor *other)\n"
    "{\n"
    "    tg_tensor *tg_w_self = tg_wrap_scalar(self);\n"
    "    tg_min_max tg_r = tg_minmax(tg_w_self, other);\n"
    "    tg_release(tg_w_self);\n"
    "    return tg_r;\n"
    "}\n";

Test(tgen_scalar_overload, generates_the_glue)
{
    char dir[] = "/tmp/tgen_scalar_XXXXXX";
    cr_assert(mkdtemp(dir));
    const char *args[] = {
        "--gen", "--native", SPEC, "--templates", "templates", "--out", dir, NULL
    };
    tgen_result r = tgen_run(args);
    cr_assert_eq(r.status, 0, "tgen failed:\n%s", r.err ? r.err : "");
    tgen_result_free(&r);

    char *glue = tgen_read_shards(dir, "tg_structured"), *rows = tgen_read_shards(dir, "tg_ops");
    cr_expect(strstr(glue, lerp_scalar), "lerp.Scalar's kernel differs:\n%s", glue);
    cr_expect(strstr(glue, minmax_scalar), "minmax.Scalar's kernel differs:\n%s", glue);
    cr_expect(
        strstr(glue, "tg_lerp__fn(self, tg_w_end, weight, (tg_lerp__opts){ .alpha = alpha });"),
        "lerp_.Scalar must wrap only `end`");
    cr_expect(
        strstr(
            glue,
            "tg_lerp_out_fn(self, tg_w_end, tg_w_weight, out, (tg_lerp_out_opts){ .alpha = alpha });"),
        "lerp.Scalar_out must call lerp.Tensor_out with out");
    const char *keys[] = { "TG_KEY_CPU", "TG_KEY_CUDA", "TG_KEY_AUTOGRAD" };
    for (int k = 0; k < 3; k++) {
        char slot[128];
        snprintf(slot, sizeof slot, "[%s] = (tg_fnptr)tg__scalar_overload_lerp_scalar,", keys[k]);
        cr_expect(strstr(rows, slot), "no %s in the rows", slot);
    }
    free(glue);
    free(rows);

    const char *const ccs[] = { "gcc", "clang" };
    for (int i = 0; i < 2; i++) {
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", ccs[i]);
        if (system(cmd) != 0) continue;
        snprintf(cmd, sizeof cmd,
                 "for f in %s/tg_structured*.c; do %s -std=c11 -Wall -Wextra -Werror -Iruntime "
                 "-I%s -c \"$f\" -o /dev/null || exit 1; done",
                 dir, ccs[i], dir);
        cr_expect_eq(system(cmd), 0, "failed: %s", cmd);
    }
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    cr_expect_eq(system(cmd), 0);
}

/* ------------------------------------------------------------------ the library's overloads */

/* Each test ends with as many live tensors as it started with. */
#define LEAK_CHECK_BEGIN int64_t tg_live0 = tg_live_tensors()
#define LEAK_CHECK_END                                               \
    cr_expect_eq(tg_live_tensors(), tg_live0, "leaked %lld tensors", \
                 (long long)(tg_live_tensors() - tg_live0))

Test(scalar_overloads, rows_hold_the_generated_kernels)
{
    /* An out= variant's Autograd slot holds its generated autograd kernel instead, which
     * refuses arguments that require grad (docs/generated-code.md, "Autograd"). */
    static const struct {
        tg_op op;
        tg_fnptr kernel;
        bool autograd;
    } rows[] = {
        { TG_OP_ADD_SCALAR, (tg_fnptr)tg__scalar_overload_add_scalar, true },
        { TG_OP_ADD_SCALAR_, (tg_fnptr)tg__scalar_overload_add_scalar_, true },
        { TG_OP_DIV_SCALAR, (tg_fnptr)tg__scalar_overload_div_scalar, true },
        { TG_OP_EQ_SCALAR, (tg_fnptr)tg__scalar_overload_eq_scalar, true },
        { TG_OP_GE_SCALAR_, (tg_fnptr)tg__scalar_overload_ge_scalar_, true },
        { TG_OP_LT_SCALAR_OUT, (tg_fnptr)tg__scalar_overload_lt_scalar_out, false },
        { TG_OP_POW_SCALAR_SELF, (tg_fnptr)tg__scalar_overload_pow_scalar_self, true },
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        const tg_op_entry *e = tg__ops[rows[i].op];
        cr_expect(e->kernels[TG_KEY_CPU] == rows[i].kernel, "%s: CPU slot", e->name);
        if (rows[i].autograd)
            cr_expect(e->kernels[TG_KEY_AUTOGRAD] == rows[i].kernel, "%s: Autograd slot", e->name);
    }
    /* The autogen'ed out= variant wraps the generated functional kernel. */
    cr_expect(tg__ops[TG_OP_ADD_SCALAR_OUT]->kernels[TG_KEY_CPU] ==
              (tg_fnptr)tg__autogen_composite_add_scalar_out);
}

/* A 1-D tensor of dtype with the values (converted). */
static tg_tensor *vec(tg_dtype dtype, const double *v, int64_t n)
{
    tg_tensor *d = tg_tensor_from_data(v, (int64_t[]){ n }, 1, TG_FLOAT64);
    tg_tensor *t = tg_to(d, dtype);
    tg_release(d);
    return t;
}

/* Checks dtype and values of t, then releases it. */
static void expect_vec(tg_tensor *t, tg_dtype dtype, const double *want, int64_t n,
                       const char *what)
{
    cr_assert(t, "%s: NULL (%s)", what, tg_last_error() ? tg_last_error() : "no error");
    cr_expect_eq(tg_tensor_dtype(t), dtype, "%s: dtype %d, expected %d", what, tg_tensor_dtype(t),
                 dtype);
    cr_assert_eq(tg_tensor_numel(t), n, "%s: numel", what);
    tg_tensor *d = tg_to(t, TG_FLOAT64);
    tg_tensor *c = tg_contiguous(d);
    const double *got = tg_tensor_data(c);
    for (int64_t i = 0; i < n; i++)
        cr_expect(got[i] == want[i] || (isnan(got[i]) && isnan(want[i])),
                  "%s[%lld]: %g, expected %g", what, (long long)i, got[i], want[i]);
    kt_release_all(c, d, t);
}

Test(scalar_overloads, wrap_integral_scalars_like_python_ints)
{
    LEAK_CHECK_BEGIN;
    tg_tensor *x = vec(TG_INT64, (double[]){ 1, 2, 3 }, 3);
    tg_tensor *b = vec(TG_UINT8, (double[]){ 250, 7 }, 2);
    expect_vec(tg_add_scalar(x, 2), TG_INT64, (double[]){ 3, 4, 5 }, 3, "int64 + 2");
    expect_vec(tg_add_scalar(x, 2, .alpha = 3), TG_INT64, (double[]){ 7, 8, 9 }, 3,
               "int64 + 3 * 2");
    expect_vec(tg_sub_scalar(x, 1, .alpha = 2), TG_INT64, (double[]){ -1, 0, 1 }, 3,
               "int64 - 2 * 1");
    expect_vec(tg_mul_scalar(b, 2), TG_UINT8, (double[]){ 244, 14 }, 2,
               "uint8 * 2 stays uint8 and wraps");
    expect_vec(tg_eq_scalar(x, 2), TG_BOOL, (double[]){ 0, 1, 0 }, 3, "int64 == 2");
    expect_vec(tg_pow_scalar_self(2, x), TG_INT64, (double[]){ 2, 4, 8 }, 3, "2 ** int64");
    kt_release_all(x, b);
    LEAK_CHECK_END;
}

Test(scalar_overloads, wrap_other_scalars_like_python_floats)
{
    LEAK_CHECK_BEGIN;
    tg_tensor *x = vec(TG_INT64, (double[]){ 1, 2, 3 }, 3);
    tg_dtype f = tg_get_default_dtype();
    expect_vec(tg_add_scalar(x, 2.5), f, (double[]){ 3.5, 4.5, 5.5 }, 3, "int64 + 2.5");
    expect_vec(tg_div_scalar(x, 2), f, (double[]){ 0.5, 1, 1.5 }, 3, "int64 / 2 (true division)");
    expect_vec(tg_add_scalar(x, INFINITY), f, (double[]){ INFINITY, INFINITY, INFINITY }, 3,
               "int64 + inf");
    expect_vec(tg_gt_scalar(x, 1.5), TG_BOOL, (double[]){ 0, 1, 1 }, 3, "int64 > 1.5");
    expect_vec(tg_ne_scalar(x, NAN), TG_BOOL, (double[]){ 1, 1, 1 }, 3, "int64 != nan");
    tg_tensor *h = vec(TG_FLOAT64, (double[]){ 0.25, 2 }, 2);
    expect_vec(tg_mul_scalar(h, 2), TG_FLOAT64, (double[]){ 0.5, 4 }, 2,
               "float64 * 2 stays float64");
    kt_release_all(h, x);
    LEAK_CHECK_END;
}

Test(scalar_overloads, in_place_and_out_go_through_the_tensor_overload)
{
    LEAK_CHECK_BEGIN;
    tg_tensor *x = vec(TG_FLOAT32, (double[]){ 1, 2, 3 }, 3);
    tg_tensor *r = tg_add_scalar_(x, 1, .alpha = 2);
    cr_expect(r == x, "in place returns self");
    tg_release(r);
    expect_vec(tg_retain(x), TG_FLOAT32, (double[]){ 3, 4, 5 }, 3, "x after add_(1, alpha=2)");
    tg_tensor *out =
        tg_empty(((tg_int_list){ .len = 1, .data = (int64_t[]){ 3 } }), .dtype = TG_BOOL);
    r = tg_lt_scalar_out(x, 4, out);
    cr_expect(r == out, "out= returns out");
    tg_release(r);
    expect_vec(out, TG_BOOL, (double[]){ 1, 0, 0 }, 3, "x < 4 into out");
    r = tg_eq_scalar_(x, 4);
    expect_vec(r, TG_FLOAT32, (double[]){ 0, 1, 0 }, 3, "x == 4 in place keeps x's dtype");
    tg_release(x);
    LEAK_CHECK_END;
}

/* The value table: each operator case once, run on every backend (ggml's test-backend-ops is
 * the model).
 *
 * A case (kt_case) names the operator it covers, what is special about it, a function that
 * calls the operator, its inputs (generators: shape, dtype, range, special values, seed, or a
 * fixture's values), the dtypes it runs in, optional out= and in-place forms, the reference
 * (PyTorch's values from tests/fixtures/ where the family has them) and the bounds (kt_tol:
 * one bound per dtype, a stated metric and the reason when it is loose). Families register
 * their tables from their own files, tests/values/values_<family>.c:
 *
 *     static const kt_case relu_cases[] = {
 *         { "relu.out", "(33, 65)", f_relu, { { KT_RAND(-5, 5, 33, 65) } }, KT_FLOATS,
 *           &kt_tol_libm, .out = f_relu_out, .inplace = f_relu_, .flags = KT_STRIDED },
 *     };
 *     KT_REGISTER(relu_cases);
 *
 * and the runner (tests/values/kt_run.c, through test_values.c) runs, for every dtype of every
 * case (and every parameter, .count > 1):
 *   - on the CPU: the function, against the fixture (ref, within ref_tol) when there is one;
 *     then each other form the case has (.out: into out= tensors; .inplace: on a clone of
 *     input 0; KT_REF_LOOP: the pointwise reference loop), and with KT_STRIDED each form again
 *     with every input (and out= tensor) non-contiguous, holding the same values: against the
 *     functional result (bit for bit with KT_FORMS_EXACT), or the fixture;
 *   - on every other backend (CUDA): the function and each form on the same inputs copied
 *     there, against the CPU's functional result within `tol`, every result on that backend's
 *     device. A case with `error` must fail on every backend with an
 *     error containing it (one kt_expect_error).
 * Every run is inside a scope (the function's results and intermediates belong to it) and is
 * checked for leaked tensors and storages. */
#ifndef KT_CASE_H
#define KT_CASE_H

#include "kt_cuda.h"

#define KT_MAX_IN 6
#define KT_MAX_OUT 6
#define KT_MAX_DIMS 5
#define KT_MAX_DTYPES 10

/* An input's dtype when it is the case's (the dtype the runner is at), or the second dtype of
 * the case's dtype pairs. */
#define KT_DT TG_DTYPE_NONE
#define KT_DT2 ((tg_dtype)(TG_DTYPE_NONE - 1))

/* One input: a fixture's values, or uniform random values in [lo, hi) from a fixed LCG (for
 * integer dtypes floored, for unsigned ones from max(lo, 0), for bool 0 and 1), with the
 * `special` values written over the first elements (floating dtypes only). */
typedef struct kt_in {
    bool used;
    int8_t ndim; /* 0: a zero-dim tensor */
    int64_t shape[KT_MAX_DIMS];
    tg_dtype dtype; /* KT_DT: the case's */
    double lo, hi;
    const double *values; /* a fixture's values, instead of random ones */
    const double *special;
    int8_t nspecial;
    bool host;     /* stays a CPU tensor on every backend (a Scalar operand) */
    uint64_t seed; /* 0: 101 + the input's position; plus the dtype's position in the case */
} kt_in;

/* Which form of the operator a case's function is asked for. */
typedef enum kt_form {
    KT_FUNCTIONAL,
    KT_OUT_FORM,       /* kt_arg.out holds the out= tensors (case.out) */
    KT_INPLACE_FORM,   /* x[0] is a clone the operator may modify (case.inplace) */
    KT_REFERENCE_LOOP, /* the function, on the CPU's pointwise reference loop */
} kt_form;

/* What a case's function is given. */
typedef struct kt_arg {
    tg_dtype dtype;          /* the case's dtype (TG_DTYPE_NONE when the case lists none) */
    tg_dtype dtype2;         /* with dtype pairs: the second */
    tg_device device;        /* the backend's device: where factories create */
    int param;               /* 0 .. count - 1 */
    kt_form form;            /* which form is running */
    tg_tensor *const *out;   /* KT_OUT_FORM: the out= tensors (the functional result's shapes) */
    const struct kt_op *ops; /* the case's KT_OPS list */
} kt_arg;

/* Calls the operator on x[] and stores its results in y[] (at most KT_MAX_OUT; a result may be
 * NULL when the operator leaves it undefined, an output_mask); returns how many, or -1 after
 * an error. Everything it creates belongs to the runner's scope: no release needed. */
typedef int (*kt_fn)(tg_tensor *const *x, const kt_arg *a, tg_tensor **y);
/* What an out= or in-place function returns for a parameter whose operator lacks that form, and
 * what any function returns for a parameter that does not apply (nothing is compared). */
#define KT_NO_FORM (-2)
#define KT_FN(name) static int name(tg_tensor *const *x, const kt_arg *a, tg_tensor **y)

/* A random input a case's function makes itself (its shape follows the parameter): kt_rand's
 * values, the same on every backend, on a->device. */
static inline tg_tensor *kt_input(const kt_arg *a, const int64_t *shape, int64_t ndim, tg_dtype dt,
                                  uint64_t seed, double lo, double hi)
{
    tg_tensor *t = kt_rand(shape, ndim, dt, seed, lo, hi);
    return a->device.type == TG_CPU ? t : kt_copy_to(t, a->device);
}

/* A fixture's values (an index: kt_tensor_i64's) as a tensor of dt on a->device. */
static inline tg_tensor *kt_fixture(const kt_arg *a, const double *v, const int64_t *shape,
                                    int64_t ndim, tg_dtype dt)
{
    tg_tensor *t = kt_tensor(v, shape, ndim, dt);
    return a->device.type == TG_CPU ? t : kt_copy_to(t, a->device);
}
static inline tg_tensor *kt_fixture_i64(const kt_arg *a, const int64_t *v, const int64_t *shape,
                                        int64_t ndim)
{
    tg_tensor *t = kt_tensor_i64(v, shape, ndim);
    return a->device.type == TG_CPU ? t : kt_copy_to(t, a->device);
}

/* y[0] = r: one result (-1 when the call failed). */
static inline int kt_y1(tg_tensor **y, tg_tensor *r)
{
    y[0] = r;
    return r ? 1 : -1;
}
/* Two and three results (the first one decides failure). */
static inline int kt_y2(tg_tensor **y, tg_tensor *r0, tg_tensor *r1)
{
    y[0] = r0;
    y[1] = r1;
    return r0 ? 2 : -1;
}
static inline int kt_y3(tg_tensor **y, tg_tensors3 r)
{
    y[0] = r.r0;
    y[1] = r.r1;
    y[2] = r.r2;
    return r.r0 || r.r1 || r.r2 ? 3 : -1;
}

/* A bound per dtype: |got - want| <= atol + rtol * |want| (kt_assert_same_values), exact for
 * integer and bool results. The rules, each with its reason, are in tests/values/kt_tol.c. */
typedef struct kt_tol {
    double rtol[4], atol[4]; /* float64, float32, float16, bfloat16 */
} kt_tol;
extern const kt_tol kt_exact, kt_tol_libm, kt_tol_sum, kt_tol_var, kt_tol_gemm, kt_tol_conv,
    kt_tol_norm, kt_tol_norm_backward, kt_tol_softmax, kt_tol_softmax_special, kt_tol_log_softmax,
    kt_tol_scatter, kt_tol_atomic, kt_tol_relative, kt_tol_pool, kt_tol_attention, kt_tol_optim,
    kt_tol_fx_activation, kt_tol_fx_activation_lm, kt_tol_fx_norm;
/* The bound of `tol` for a result of dtype dt: rtol and atol (0 and 0 for integers and bool;
 * tol NULL is exact). */
void kt_tol_of(const kt_tol *tol, tg_dtype dt, double *rtol, double *atol);

typedef struct kt_dtypes {
    int n;
    tg_dtype v[KT_MAX_DTYPES];
} kt_dtypes;
/* Two dtypes at once (mixed operands, copies between dtypes): a case's .pairs run once per
 * pair, inputs of dtype KT_DT taking the first and KT_DT2 the second. */
typedef struct kt_pair {
    tg_dtype a, b;
} kt_pair;
#define KT_PAIRS(array) .pairs = (array), .npairs = (int)KT_NUMEL(array)
#define KT_FLOATS                                              \
    {                                                          \
        4, { TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16 } \
    }
#define KT_F32_F64                    \
    {                                 \
        2, { TG_FLOAT32, TG_FLOAT64 } \
    }
#define KT_F64_F32                    \
    {                                 \
        2, { TG_FLOAT64, TG_FLOAT32 } \
    }
/* One dtype. */
#define KT_ONE(dt)  \
    {               \
        1, { (dt) } \
    }
/* Every dtype but bool. */
#define KT_NO_BOOL                                                                         \
    {                                                                                      \
        9,                                                                                 \
        {                                                                                  \
            TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16, TG_INT64, TG_INT32, TG_INT16, \
                TG_INT8, TG_UINT8                                                          \
        }                                                                                  \
    }
/* Every dtype the kernels take. */
#define KT_ALL                                                                             \
    {                                                                                      \
        10,                                                                                \
        {                                                                                  \
            TG_FLOAT32, TG_FLOAT64, TG_FLOAT16, TG_BFLOAT16, TG_INT64, TG_INT32, TG_INT16, \
                TG_INT8, TG_UINT8, TG_BOOL                                                 \
        }                                                                                  \
    }

/* Case flags. */
enum {
    KT_STRIDED = 1 << 0,       /* also run with every input non-contiguous (same values) */
    KT_REF_LOOP = 1 << 1,      /* also run the CPU's pointwise reference loop */
    KT_CPU_ONLY = 1 << 2,      /* no other backend (a CPU-specific path) */
    KT_MAY_REFUSE = 1 << 3,    /* a dtype the CPU refuses: every backend refuses it alike */
    KT_FORMS_EXACT = 1 << 4,   /* on the CPU every form equals the functional result bit for bit
                                (a pointwise kernel: the same scalar function in every loop) */
    KT_HALF_IN_FLOAT = 1 << 5, /* on the CPU, float16 and bfloat16 results equal the float32
                                  computation on the converted inputs, rounded once */
};

/* An operator of a list a case sweeps (KT_OPS): its forms. */
typedef struct kt_op {
    const char *name;
    kt_fn fn, out, inplace;
} kt_op;

typedef struct kt_case {
    const char *op;    /* the schema it covers: "leaky_relu.out" (coverage counts it) */
    const char *label; /* "negative_slope 0.2, 33 x 65" */
    kt_fn fn;
    kt_in in[KT_MAX_IN];
    kt_dtypes dtypes;   /* n 0: once, the inputs name their dtypes (or .pairs) */
    const kt_tol *tol;  /* other backends against the CPU; NULL: exact */
    kt_fn out, inplace; /* the out= and in-place forms, when the operator has them */
    unsigned flags;
    int count;                            /* > 1: run for every parameter 0 .. count - 1 */
    const char *(*param_name)(int param); /* names a parameter in messages */
    const char *error;        /* every backend must refuse, with an error containing this */
    const double *const *ref; /* PyTorch's values of result 0, one array per dtype of dtypes */
    const kt_tol *ref_tol;    /* the CPU against ref */
    const kt_pair *pairs;     /* instead of dtypes (KT_PAIRS) */
    int npairs;
    const char *const *also; /* other schemas the case runs through (KT_ALSO), NULL-ended */
    const kt_op *ops;        /* the list kt_sweep runs (KT_OPS) */
} kt_case;
#define KT_ALSO(...) \
    .also = (const char *const[]) { __VA_ARGS__, NULL }
/* A case over a list of operators: the parameter picks one (named after it in messages), the
 * case's function and forms are kt_sweep, kt_sweep_out, kt_sweep_inplace, which run that
 * operator's (a form it lacks is skipped). */
#define KT_OPS(list) .ops = (list), .count = (int)KT_NUMEL(list)
int kt_sweep(tg_tensor *const *x, const kt_arg *a, tg_tensor **y);
int kt_sweep_out(tg_tensor *const *x, const kt_arg *a, tg_tensor **y);
int kt_sweep_inplace(tg_tensor *const *x, const kt_arg *a, tg_tensor **y);

/* A row of a case table, laid out like a call:
 *
 *     KT_CASE("relu.out", "(33, 65)", f_relu, { { KT_RAND(-5, 5, 33, 65) } }, KT_FLOATS,
 *             &kt_tol_libm, .out = f_relu_out, .flags = KT_STRIDED),                       */
#define KT_CASE(...) \
    {                \
        __VA_ARGS__  \
    }

/* The backward operators ops (functions of (grad, self)) broadcast grad and self and promote
 * them to one dtype: on (g, x) each equals, bit for bit, its result on the expanded, promoted,
 * contiguous inputs. */
void kt_assert_broadcasts(const kt_op *ops, int n, tg_tensor *g, tg_tensor *x);

/* Registers a static array of cases from any file linked into the tests (tg_cover.h's way: a
 * descriptor in the `kt_case_tables` linker section, no central list). */
typedef struct kt_case_table {
    const kt_case *cases;
    int64_t n;
} kt_case_table;
#define KT_REGISTER(array) TG_REGISTER_TABLE("kt_case_tables", kt_case_table, array)

/* Every registered case, in link order. */
int kt_num_cases(void);
const kt_case *kt_case_at(int i);
/* Whether a registered case covers the operator `schema` on the CPU (all do) or, cuda, on CUDA
 * (those without KT_CPU_ONLY): the coverage tests count them with TG_COVERS' names. */
bool kt_cases_cover(const char *schema, bool cuda);

/* The runner (tests/values/kt_run.c): case i on the CPU, and on `device` against the CPU. */
void kt_run_cpu(int i);
void kt_run_on(int i, tg_device device);

/* Case tables name op, label, function, inputs, dtypes and tol positionally and the rest by
 * designator; the fields they leave out are zero on purpose. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* Inputs, written { KT_RAND(lo, hi, shape...) } with more fields after when needed (.seed,
 * .special): random values of the case's dtype; KT_RAND_OF(dtype, lo, hi, shape...) of a fixed
 * one; KT_VALUES(array, shape...) a fixture's values in the case's dtype; KT_VALUES_OF(dtype,
 * array, shape...); KT_RAND0_OF(dtype, lo, hi) a zero-dim tensor; KT_HOST(dtype, lo, hi) a
 * zero-dim CPU tensor on every backend. */
#define KT_NARG(...) KT_NARG_(__VA_ARGS__, 5, 4, 3, 2, 1, 0)
#define KT_NARG_(a, b, c, d, e, n, ...) n
#define KT_RAND_OF(dt, lo_, hi_, ...)                                                    \
    .used = true, .ndim = KT_NARG(__VA_ARGS__), .shape = { __VA_ARGS__ }, .dtype = (dt), \
    .lo = (lo_), .hi = (hi_)
#define KT_RAND(lo_, hi_, ...) KT_RAND_OF(KT_DT, lo_, hi_, __VA_ARGS__)
#define KT_VALUES_OF(dt, v, ...)                                                         \
    .used = true, .ndim = KT_NARG(__VA_ARGS__), .shape = { __VA_ARGS__ }, .dtype = (dt), \
    .values = (v)
#define KT_VALUES(v, ...) KT_VALUES_OF(KT_DT, v, __VA_ARGS__)
#define KT_RAND0_OF(dt, lo_, hi_) .used = true, .ndim = 0, .dtype = (dt), .lo = (lo_), .hi = (hi_)
#define KT_HOST(dt, lo_, hi_) KT_RAND0_OF(dt, lo_, hi_), .host = true

#endif

/* gradcheck: analytical gradients (the autograd engine) against finite differences.
 *
 * A function under test maps input tensors to output tensors. gc_gradcheck perturbs every
 * element of every input that requires grad by +-eps (central differences, in float64) to
 * build the numerical Jacobian of every floating output, computes the analytical Jacobian
 * with tg_grad (one one-hot grad_output per output element when the output is small, random
 * vector-Jacobian products otherwise), runs tg_backward once with a random grad_output and
 * compares what it accumulated into the inputs' .grad, and checks that every gradient has its
 * input's shape and dtype. gc_gradgradcheck does the same for the function
 * (inputs, v) -> vjp(inputs, v) computed with create_graph, i.e. second derivatives.
 *
 * Metric (PyTorch's gradcheck): |analytical - numerical| <= atol + rtol * |numerical| for every
 * Jacobian entry, with eps 1e-6, atol 1e-5, rtol 1e-3 by default.
 *
 * The test cases (tests/autograd/test_gradcheck.c) describe their inputs declaratively
 * (gc_input: shape, value domain, memory layout), so broadcast and non-contiguous inputs are
 * one word in the table. */
#ifndef GRADCHECK_H
#define GRADCHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensorgen.h"
#include "tg_cover.h"

#define GC_MAX_INPUTS 8
#define GC_MAX_OUTPUTS 6
#define GC_MAX_DIMS 4

/* Values an input is filled with (uniform, from a fixed LCG seeded per case). */
typedef enum gc_domain {
    GC_REAL,     /* [-1, 1) */
    GC_POS,      /* [0.5, 2): log, sqrt, rsqrt, pow bases, divisors */
    GC_AWAY0,    /* +-[0.5, 1.5): away from the kinks of relu, abs, clamp at 0 */
    GC_UNIT,     /* [-0.9, 0.9) */
    GC_DISTINCT, /* a shuffled arithmetic sequence with gaps of 0.1: max, min, amax without ties */
    GC_INDEX,    /* int64 in [0, hi): class targets, never differentiated */
    GC_MASK,     /* bool, about half true: where's condition, never differentiated */
} gc_domain;

/* How an input is laid out in memory. */
typedef enum gc_layout {
    GC_CONTIG,
    GC_TRANSPOSED, /* the transpose of a contiguous tensor (last two dims swapped in memory) */
    GC_STRIDED,    /* every other element of the last dim of a twice-as-wide tensor */
} gc_layout;

typedef struct gc_input {
    bool used;
    int8_t ndim; /* 0: a zero-dim tensor */
    int64_t shape[GC_MAX_DIMS];
    gc_domain domain;
    gc_layout layout;
    bool constant; /* requires_grad false (not differentiated) */
    int64_t hi;    /* GC_INDEX: values in [0, hi) */
} gc_input;

/* A function under test: fills out[] with new references (at most GC_MAX_OUTPUTS) and returns
 * how many, or -1 after an error (tg_last_error) with nothing left in out[]. */
typedef int (*gc_fn)(tg_tensor *const *in, tg_tensor **out);

/* The same, with a context (what the harness itself calls). */
typedef struct gc_func {
    int (*call)(const void *ctx, tg_tensor *const *in, tg_tensor **out);
    const void *ctx;
} gc_func;

typedef struct gc_opts {
    double eps, atol, rtol; /* 0: PyTorch's defaults 1e-6, 1e-5, 1e-3 */
    int64_t full_max;       /* outputs with at most this many elements get the full
                                     Jacobian, larger ones GC_VJPS random products (0: 128) */
    uint64_t seed;          /* for the random grad_outputs */
} gc_opts;

#define GC_VJPS 4

/* A new tensor of `spec`'s shape, domain and layout: float64 (int64 for GC_INDEX, bool for
 * GC_MASK), requires_grad unless spec->constant or not floating. *seed advances. */
tg_tensor *gc_make_input(const gc_input *spec, uint64_t *seed);
/* The same values (the same seed gives the same tensor) with the same layout on `device`. */
tg_tensor *gc_make_input_on(const gc_input *spec, uint64_t *seed, tg_device device);

/* First-order check of f at in[0..n_in) (inputs requiring grad are differentiated). Returns
 * true, or false with a message naming the output, input and element in msg. Everything it
 * creates is released; the inputs are left as they were (values, no .grad). */
bool gc_gradcheck(gc_func f, tg_tensor *const *in, int n_in, const gc_opts *opts, char *msg,
                  size_t msg_size);

/* Forward-mode check (PyTorch's gradcheck with check_forward_ad): for every input requiring
 * grad in turn, the others plain, f runs inside a dual level on the input made dual with a
 * tangent v (one-hot per element when the input has at most opts->full_max elements, the
 * Jacobian column by column, else GC_VJPS random v), and every floating output's tangent
 * (tg_unpack_dual; none counts as zero, as in PyTorch) is compared with the central difference
 * (f(x + eps v) - f(x - eps v)) / (2 eps), and every output's primal with f's value on the
 * plain inputs. Then, with two or more such inputs, all of them dual at once with random
 * tangents (the sum of the per-input products). Same metric and messages as gc_gradcheck
 * (output, input, element); an operator without a forward formula fails with its error
 * ("forward AD is not implemented for ..."). Everything it creates is released; the inputs are
 * left as they were. Defined in fwgradcheck.c. */
bool gc_fwgradcheck(gc_func f, tg_tensor *const *in, int n_in, const gc_opts *opts, char *msg,
                    size_t msg_size);

/* Second-order check: gc_gradcheck of g(in..., v...) = d(sum_o <v_o, f_o(in)>)/d(in) computed
 * by tg_grad with create_graph, over the inputs and random v (one per floating output). */
bool gc_gradgradcheck(gc_func f, tg_tensor *const *in, int n_in, const gc_opts *opts, char *msg,
                      size_t msg_size);

/* ------------------------------------------------------------------ the case table */

/* One gradcheck case: the operator it covers, what is special about it, the function and its
 * inputs. Tables of cases are registered with GC_REGISTER, one file per operator family
 * (tests/autograd/gc_cases_<family>.c); tests/autograd/test_gradcheck.c runs every registered
 * case and fails when an operator of TG_DIFFERENTIABLE_OP_LIST has none. */
typedef struct gc_case {
    const char *op;    /* schema name covered: "add.Tensor" */
    const char *label; /* "broadcast (3,1) + (1,4), alpha 2" */
    gc_fn fn;
    gc_input in[GC_MAX_INPUTS];
    bool gradgrad;            /* also check second derivatives */
    double eps;               /* 0: the default 1e-6 (float32 outputs need more) */
    const char *expect_error; /* the check must fail with an error containing this */
} gc_case;

/* Registers a static array of cases from any file linked into the tests:
 *
 *     static const gc_case my_cases[] = { { "my_op", "label", f_my_op, { REAL(3, 4) } } };
 *     GC_REGISTER(my_cases);
 *
 * A descriptor of the array lands in the `gc_case_tables` linker section (TG_REGISTER_TABLE,
 * tests/tg_cover.h), which the runner walks. */
typedef struct gc_case_table {
    const gc_case *cases;
    int64_t n;
} gc_case_table;

#define GC_REGISTER(array) TG_REGISTER_TABLE("gc_case_tables", gc_case_table, array)

/* Every registered case, in link order: how many, and the i-th. */
int gc_num_cases(void);
const gc_case *gc_case_at(int i);

/* Case c's function as the function gc_gradcheck and gc_fwgradcheck check (c must outlive it). */
gc_func gc_case_func(const gc_case *c);

/* The inputs case c (the index-th registered one) describes, from a seed fixed by the index, so
 * that every check running the case (gradcheck, fwgradcheck) sees the same tensors; layouts
 * other than GC_CONTIG are checked to be non-contiguous. Returns how many, or -1 with msg set
 * and nothing left in in[]. */
int gc_case_inputs(const gc_case *c, int index, tg_tensor **in, char *msg, size_t msg_size);

/* A warning handler (tg_set_warning_handler) that counts into *(int *)user: cases call
 * operators thousands of times, and a warning (mse_loss with a broadcast target warns like
 * PyTorch) is counted, not printed. */
void gc_count_warning(const char *msg, void *user);

/* A case's function, defined under its name:
 *
 *     GC_FN(f_add) { y[0] = tg_add(x[0], x[1]); return 1; }                                */
#define GC_FN(name) static int name(tg_tensor *const *x, tg_tensor **y)

/* The end of a one-result case: y[0] = r. Returns 1. */
static inline int gc_y1(tg_tensor **y, tg_tensor *r)
{
    y[0] = r;
    return 1;
}

/* The end of a two-result case: y[0] = a, y[1] = b. Returns 2. */
static inline int gc_y2(tg_tensor **y, tg_tensor *a, tg_tensor *b)
{
    y[0] = a;
    y[1] = b;
    return 2;
}

/* Both results of an operator returning a pair (values and indices, r0 and r1, output and
 * total_weight) as y[0] and y[1]. Returns 2. */
static inline int gc_y_vi(tg_tensor **y, tg_values_indices r)
{
    return gc_y2(y, r.values, r.indices);
}
static inline int gc_y_t2(tg_tensor **y, tg_tensors2 r) { return gc_y2(y, r.r0, r.r1); }
static inline int gc_y_otw(tg_tensor **y, tg_output_total_weight r)
{
    return gc_y2(y, r.output, r.total_weight);
}

/* The first two of three results as y[0] and y[1], the third released (a backward whose last
 * gradient is not asked for). Returns 2. */
static inline int gc_y_first2(tg_tensor **y, tg_tensors3 r)
{
    tg_release(r.r2);
    return gc_y2(y, r.r0, r.r1);
}

/* The end of an in-place case: self is the clone of x[0] the operator ran on, r its result (a
 * new reference to self, or NULL); y[0] = r, self's own reference released. Returns 1. */
static inline int gc_inplace_result(tg_tensor *self, tg_tensor *r, tg_tensor **y)
{
    tg_release(self);
    y[0] = r;
    return 1;
}

/* A row of a case table (a braced initializer that clang-format lays out like a call):
 *
 *     GC_CASE("mul.Tensor", "broadcast (3,1) * (1,4)", f_mul, { REAL(3, 1), REAL(1, 4) },
 *             .gradgrad = true),                                                          */
#define GC_CASE(...) \
    {                \
        __VA_ARGS__  \
    }

/* Case tables name op, label, function and inputs positionally and the rest by designator;
 * the fields they leave out are zero on purpose, for every file that includes this header. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* Shapes of the table: REAL(3, 1) is a (3, 1) float64 leaf requiring grad with values in
 * [-1, 1); _T / _S variants are transposed / strided views; CONST is not differentiated;
 * INDEX(hi, shape...) is int64 in [0, hi); MASK is bool; REAL0 is zero-dim. */
#define GC_NARG(...) GC_NARG_(__VA_ARGS__, 4, 3, 2, 1, 0)
#define GC_NARG_(a, b, c, d, n, ...) n
#define GC_IN(dom, lay, ...)                                                                   \
    {                                                                                          \
        .used = true, .ndim = GC_NARG(__VA_ARGS__), .shape = { __VA_ARGS__ }, .domain = (dom), \
        .layout = (lay)                                                                        \
    }
#define REAL(...) GC_IN(GC_REAL, GC_CONTIG, __VA_ARGS__)
#define REAL_T(...) GC_IN(GC_REAL, GC_TRANSPOSED, __VA_ARGS__)
#define REAL_S(...) GC_IN(GC_REAL, GC_STRIDED, __VA_ARGS__)
#define POS(...) GC_IN(GC_POS, GC_CONTIG, __VA_ARGS__)
#define POS_T(...) GC_IN(GC_POS, GC_TRANSPOSED, __VA_ARGS__)
#define POS_S(...) GC_IN(GC_POS, GC_STRIDED, __VA_ARGS__)
#define AWAY0(...) GC_IN(GC_AWAY0, GC_CONTIG, __VA_ARGS__)
#define AWAY0_T(...) GC_IN(GC_AWAY0, GC_TRANSPOSED, __VA_ARGS__)
#define UNIT(...) GC_IN(GC_UNIT, GC_CONTIG, __VA_ARGS__)
#define DISTINCT(...) GC_IN(GC_DISTINCT, GC_CONTIG, __VA_ARGS__)
#define DISTINCT_T(...) GC_IN(GC_DISTINCT, GC_TRANSPOSED, __VA_ARGS__)
#define CONST(...)                                                                               \
    {                                                                                            \
        .used = true, .ndim = GC_NARG(__VA_ARGS__), .shape = { __VA_ARGS__ }, .domain = GC_REAL, \
        .constant = true                                                                         \
    }
#define INDEX(hi_, ...)                                                                           \
    {                                                                                             \
        .used = true, .ndim = GC_NARG(__VA_ARGS__), .shape = { __VA_ARGS__ }, .domain = GC_INDEX, \
        .constant = true, .hi = (hi_)                                                             \
    }
#define MASK(...)                                                                                \
    {                                                                                            \
        .used = true, .ndim = GC_NARG(__VA_ARGS__), .shape = { __VA_ARGS__ }, .domain = GC_MASK, \
        .constant = true                                                                         \
    }
#define REAL0                                      \
    {                                              \
        .used = true, .ndim = 0, .domain = GC_REAL \
    }
#define POS0                                      \
    {                                             \
        .used = true, .ndim = 0, .domain = GC_POS \
    }

#endif

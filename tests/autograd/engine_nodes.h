/* Hand-written backward nodes for the engine's tests, built exactly as generated autograd
 * kernels build theirs (runtime/autograd/autograd.h): node struct with tg_node first, next edges from the
 * differentiable inputs, saved tensors, the op run below autograd, history on the result.
 * The engine is thereby tested without depending on tgen's generated nodes. All static: every
 * test file links into one binary. */
#ifndef ENGINE_NODES_H
#define ENGINE_NODES_H

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "autograd/autograd.h"
#include "core/core.h"
#include "tg_ops.h"

/* ------------------------------------------------------------------ tensors */

static inline tg_tensor *en_vec(const double *v, int64_t n)
{
    float f[64];
    cr_assert(n <= 64);
    for (int64_t i = 0; i < n; i++) f[i] = (float)v[i];
    return tg_tensor_from_data(f, (int64_t[]){ n }, 1, TG_FLOAT32);
}
#define EN_VEC(...)                         \
    en_vec((const double[]){ __VA_ARGS__ }, \
           (int64_t)(sizeof((const double[]){ __VA_ARGS__ }) / sizeof(double)))

static inline tg_tensor *en_leaf(tg_tensor *t) { return tg_tensor_set_requires_grad(t, true); }

static inline void en_expect(tg_tensor *t, const double *want, int64_t n)
{
    cr_assert_not_null(t, "tensor is NULL (error: %s)", tg_last_error() ? tg_last_error() : "-");
    cr_assert_eq(tg_tensor_numel(t), n);
    double got[256];
    cr_assert_eq(tg_tensor_to_doubles(t, got, n), 0);
    for (int64_t i = 0; i < n; i++)
        cr_expect(fabs(got[i] - want[i]) <= 1e-5 * (1 + fabs(want[i])),
                  "element %lld: got %g, want %g", (long long)i, got[i], want[i]);
}
#define EN_EXPECT(t, ...)                           \
    en_expect((t), (const double[]){ __VA_ARGS__ }, \
              (int64_t)(sizeof((const double[]){ __VA_ARGS__ }) / sizeof(double)))

/* Checks t's .grad and drops the reference tg_tensor_grad returned. */
#define EN_EXPECT_GRAD(t, ...)             \
    do {                                   \
        tg_tensor *g_ = tg_tensor_grad(t); \
        EN_EXPECT(g_, __VA_ARGS__);        \
        tg_release(g_);                    \
    } while (0)

static inline void en_expect_error(const char *needle)
{
    const char *e = tg_last_error();
    cr_assert_not_null(e, "expected an error containing \"%s\"", needle);
    cr_expect(strstr(e, needle) != NULL, "error \"%s\" lacks \"%s\"", e, needle);
    tg_clear_error();
}

/* Runs f below autograd (as generated kernels redispatch). */
#define EN_BELOW(expr)                             \
    ({                                             \
        tg_keyset p_ = tg__autograd_below_begin(); \
        __typeof__(expr) r_ = (expr);              \
        tg__autograd_below_end(p_);                \
        r_;                                        \
    })

/* ------------------------------------------------------------------ nodes */

/* A new node of a one-input operator (size bytes, one output, an edge to a), or NULL when a
 * does not require grad. */
static inline tg_node *en_node1(size_t size, const tg_node_vtable *vt, tg_tensor *a)
{
    if (!tg_autograd_any_requires_grad(&a, 1)) return NULL;
    tg_node *n = tg_autograd_node_new(size, vt, 1, 1);
    tg_autograd_node_set_next_edge(n, 0, a);
    return n;
}

/* A new node of a two-input operator (size bytes, one output, edges to a and b), or NULL when
 * neither requires grad. */
static inline tg_node *en_node2(size_t size, const tg_node_vtable *vt, tg_tensor *a, tg_tensor *b)
{
    if (!tg_autograd_any_requires_grad((tg_tensor *[]){ a, b }, 2)) return NULL;
    tg_node *n = tg_autograd_node_new(size, vt, 1, 2);
    tg_autograd_node_set_next_edge(n, 0, a);
    tg_autograd_node_set_next_edge(n, 1, b);
    return n;
}

/* The end of an operator: its result r (computed below autograd) gets node n (NULL: none) as
 * its history, and n's own reference is released. Returns r. */
static inline tg_tensor *en_attach(tg_tensor *r, tg_node *n)
{
    if (n) {
        if (r) tg_autograd_set_history(r, n, 0);
        tg_autograd_node_release(n);
    }
    return r;
}

static inline tg_tensor *en_mul(tg_tensor *a, tg_tensor *b);
static inline tg_tensor *en_add(tg_tensor *a, tg_tensor *b);

/* MulBackward0: saves both inputs; d/da = grad * b, d/db = grad * a. Uses en_mul itself, so
 * a create_graph backward is differentiable again. */
typedef struct {
    tg_node base;
    tg_saved self, other;
} en_mul_node;
static int en_mul_apply(tg_node *n, tg_tensor *const *grads, tg_tensor **out)
{
    en_mul_node *m = (en_mul_node *)n;
    for (int i = 0; i < 2; i++) {
        if (!tg__node_needs_input_grad(n, i)) continue;
        tg_tensor *x = tg_autograd_unpack(i == 0 ? &m->other : &m->self, n);
        if (!x) return -1;
        out[i] = en_mul(grads[0], x);
        tg_release(x);
        if (!out[i]) return -1;
    }
    return 0;
}
static void en_mul_release(tg_node *n)
{
    en_mul_node *m = (en_mul_node *)n;
    tg_autograd_saved_release(&m->self);
    tg_autograd_saved_release(&m->other);
}
static const tg_node_vtable en_mul_vt = { "MulBackward0", en_mul_apply, en_mul_release };

static inline tg_tensor *en_mul(tg_tensor *a, tg_tensor *b)
{
    tg_node *n = en_node2(sizeof(en_mul_node), &en_mul_vt, a, b);
    if (n) {
        tg_autograd_save(&((en_mul_node *)n)->self, a, false, 0);
        tg_autograd_save(&((en_mul_node *)n)->other, b, false, 0);
    }
    return en_attach(EN_BELOW(tg_mul(a, b)), n);
}

/* AddBackward0: saves nothing and returns grad unreduced for both inputs (the engine sums
 * broadcast gradients down, like PyTorch's). */
static int en_add_apply(tg_node *n, tg_tensor *const *grads, tg_tensor **out)
{
    for (int i = 0; i < 2; i++)
        if (tg__node_needs_input_grad(n, i)) out[i] = tg_retain(grads[0]);
    return 0;
}
static const tg_node_vtable en_add_vt = { "AddBackward0", en_add_apply, NULL };

static inline tg_tensor *en_add(tg_tensor *a, tg_tensor *b)
{
    tg_node *n = en_node2(sizeof(tg_node), &en_add_vt, a, b);
    return en_attach(EN_BELOW(tg_add(a, b)), n);
}

/* SumBackward0: saves self's sizes only; d/dself = grad expanded. */
typedef struct {
    tg_node base;
    tg_saved_sizes self_sizes;
} en_sum_node;
static int en_sum_apply(tg_node *n, tg_tensor *const *grads, tg_tensor **out)
{
    en_sum_node *s = (en_sum_node *)n;
    out[0] = EN_BELOW(tg_expand(grads[0], tg__saved_sizes_list(&s->self_sizes)));
    return out[0] ? 0 : -1;
}
static const tg_node_vtable en_sum_vt = { "SumBackward0", en_sum_apply, NULL };

static inline tg_tensor *en_sum(tg_tensor *a)
{
    tg_node *n = en_node1(sizeof(en_sum_node), &en_sum_vt, a);
    if (n) tg__saved_sizes_save(&((en_sum_node *)n)->self_sizes, a);
    return en_attach(EN_BELOW(tg_sum(a)), n);
}

/* ExpBackward0: saves its output (a detached alias); d/dself = grad * result. */
typedef struct {
    tg_node base;
    tg_saved result;
} en_exp_node;
static int en_exp_apply(tg_node *n, tg_tensor *const *grads, tg_tensor **out)
{
    tg_tensor *r = tg_autograd_unpack(&((en_exp_node *)n)->result, n);
    if (!r) return -1;
    out[0] = en_mul(grads[0], r);
    tg_release(r);
    return out[0] ? 0 : -1;
}
static void en_exp_release(tg_node *n) { tg_autograd_saved_release(&((en_exp_node *)n)->result); }
static const tg_node_vtable en_exp_vt = { "ExpBackward0", en_exp_apply, en_exp_release };

static inline tg_tensor *en_exp(tg_tensor *a)
{
    tg_node *n = en_node1(sizeof(en_exp_node), &en_exp_vt, a);
    tg_tensor *r = EN_BELOW(tg_exp(a));
    if (n) {
        if (r) {
            tg_autograd_set_history(r, n, 0);
            tg_autograd_save(&((en_exp_node *)n)->result, r, true, 0);
        }
        tg_autograd_node_release(n);
    }
    return r;
}

/* A generic one-input node whose apply is given: for probes, failures and bad gradients. */
typedef struct {
    tg_node base;
    int (*fn)(tg_node *, tg_tensor *const *, tg_tensor **);
} en_fn_node;
static int en_fn_apply(tg_node *n, tg_tensor *const *g, tg_tensor **out)
{
    return ((en_fn_node *)n)->fn(n, g, out);
}
static const tg_node_vtable en_probe_vt = { "ProbeBackward0", en_fn_apply, NULL };

/* r = a + 0 recorded with the given apply (num_outputs outputs, all sharing a's values). */
static inline tg_tensor *en_unary_fn(tg_tensor *a,
                                     int (*fn)(tg_node *, tg_tensor *const *, tg_tensor **))
{
    tg_node *n = tg_autograd_node_new(sizeof(en_fn_node), &en_probe_vt, 1, 1);
    ((en_fn_node *)n)->fn = fn;
    tg_autograd_node_set_next_edge(n, 0, a);
    tg_tensor *r = EN_BELOW(tg_add_scalar(a, 0.0));
    tg_autograd_set_history(r, n, 0);
    tg_autograd_node_release(n);
    return r;
}

#endif

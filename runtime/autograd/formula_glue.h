/* runtime/autograd: the glue that tgen's compiled derivative formulas and autograd kernels
 * (generated/tg_autograd.c) call: temporaries' release, Tensor[] gradients handed to their
 * edges, sizes and int lists a node keeps in its own allocation. Written by hand so that the
 * template holds only per-operator code (docs/generated-code.md, "Autograd"). Installed (as
 * <tensorgen/autograd/formula_glue.h>): the generated autograd code of an operator library
 * includes it too. Only public functions and autograd.h's are called here.
 *
 * Everything is static inline and marked unused: a spec whose formulas need only some of
 * these still compiles warning-free. Ownership as in autograd.h: a function that takes an
 * owned tensor or list says so. */
#ifndef TG_AUTOGRAD_FORMULA_GLUE_H
#define TG_AUTOGRAD_FORMULA_GLUE_H

#include <math.h> /* <cmath> on numbers in formulas: sqrt(M_PI) ... */
#include <stdlib.h>
#include <string.h>

#include "autograd/autograd.h"

/* The backward of an operator whose derivative entry tgen could not compile (docs/autograd.md,
 * "What is compiled"): fails naming the operator and why, like a missing formula. */
static inline TG__UNUSED int tg__gen_not_generated(const char *op, const char *why)
{
    tg_set_error(NULL,
                 "the derivative for '%s' is not implemented: tgen generates no node for its "
                 "formula (%s).",
                 op, why);
    return -1;
}

/* `t.strides()` as an int list (borrowed from t, like tg__gen_sizes). */
static inline TG__UNUSED tg_int_list tg__gen_strides(const tg_tensor *t)
{
    return (tg_int_list){ .len = tg_tensor_dim(t), .data = tg_tensor_strides(t) };
}

/* An int list of n elements the formula fills (std::vector<int64_t>(n, v), fmap): owned by
 * the formula's temporary and freed with tg__gen_ints_free; { NULL, 0 } with an error when
 * memory runs out (n == 0 gives an empty, non-NULL list). */
static inline TG__UNUSED tg_int_list tg__gen_ints_new(int64_t n)
{
    int64_t *data = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    if (!data) {
        tg_set_error(NULL, "backward: out of memory for an int list of %lld elements",
                     (long long)n);
        return (tg_int_list){ .len = 0, .data = NULL };
    }
    return (tg_int_list){ .len = n > 0 ? n : 0, .data = data };
}

static inline TG__UNUSED void tg__gen_ints_free(tg_int_list l) { free((void *)l.data); }

/* Moves an owned tensor (list) out of a formula's temporary, which is left empty: the value
 * now belongs to whatever it was assigned to. */
static inline TG__UNUSED tg_tensor *tg__gen_take(tg_tensor **t)
{
    tg_tensor *r = *t;
    *t = NULL;
    return r;
}

static inline TG__UNUSED tg_tensor_list tg__gen_take_list(tg_tensor_list *l)
{
    tg_tensor_list r = *l;
    *l = (tg_tensor_list){ NULL, 0 };
    return r;
}

/* Releases a formula's temporary as soon as the call that used it returned. */
#define TG__GEN_DROP(t) (tg_release(t), (t) = NULL)

/* The same for an owned Tensor[] temporary (a call such as split_with_sizes returned it). */
#define TG__GEN_DROP_LIST(t) (tg_tensor_list_release(t), (t) = (tg_tensor_list){ NULL, 0 })

/* An owned copy of a borrowed Tensor[] (grads, a list literal) for a formula's result. */
static inline TG__UNUSED tg_tensor_list tg__gen_list_copy(tg_tensor_list l)
{
    tg_tensor **items = tg_tensor_list_alloc("backward", l.len);
    if (!items) return (tg_tensor_list){ NULL, 0 };
    for (int64_t i = 0; i < l.len; i++) items[i] = tg_retain(l.data[i]);
    return (tg_tensor_list){ items, l.len };
}

/* `xs.size(d)` of a Tensor[] input, saved at *cursor when the op runs: each element's size
 * along d (d counted from the element's own end when negative, which for cat is the result's:
 * the elements it concatenates have its number of dims). A legacy 1-D empty element, which cat
 * skips, gives 0, and so does a d out of range (the op itself reports that error). */
static inline TG__UNUSED tg_int_list tg__gen_keep_list_sizes(tg_tensor_list l, int64_t d,
                                                             char **cursor)
{
    if (l.len == 0) return TG_INTS_EMPTY;
    int64_t *out = (int64_t *)(void *)*cursor;
    for (int64_t i = 0; i < l.len; i++) {
        const int64_t *sizes = tg_tensor_sizes(l.data[i]);
        int64_t nd = tg_tensor_dim(l.data[i]), dd = d < 0 ? d + nd : d;
        bool legacy_empty = nd == 1 && sizes[0] == 0;
        out[i] = legacy_empty || dd < 0 || dd >= nd ? 0 : sizes[dd];
    }
    *cursor += (size_t)l.len * sizeof(int64_t);
    return (tg_int_list){ .len = l.len, .data = out };
}

/* Hands the gradients of a Tensor[] argument's formula (owned list l, or { NULL, 0 } after an
 * error) to the element edges first, first + 1, ...: one per element, or an error naming the
 * node when the formula gave another number. The array is freed. 0 or -1. */
static inline TG__UNUSED int tg__gen_distribute(tg_node *node, int first, tg_tensor_list l,
                                                tg_tensor **out, const char *what)
{
    if (!l.data) return -1;
    int64_t want = node->num_next - first;
    if (l.len != want) {
        tg_set_error(NULL, "Function %s: the formula for '%s' gave %lld gradients for %lld tensors",
                     node->vt->name, what, (long long)l.len, (long long)want);
        tg_tensor_list_release(l);
        return -1;
    }
    int rc = 0;
    for (int64_t j = 0; j < l.len; j++) {
        tg_tensor *g = l.data[j];
        int e = first + (int)j;
        if (rc != 0 || !tg__node_needs_input_grad(node, e)) {
            tg_release(g);
            continue;
        }
        if (!(out[e] = tg_autograd_fit_grad(node, e, g))) rc = -1;
    }
    free((void *)l.data);
    return rc;
}

/* A tensor's sizes as an int list, valid while the tensor lives. */
static inline TG__UNUSED tg_int_list tg__gen_sizes(const tg_tensor *t)
{
    return (tg_int_list){ .len = tg_tensor_dim(t), .data = tg_tensor_sizes(t) };
}

/* sizes[d], d counted from the end when negative; -1 with an error when out of range. */
static inline TG__UNUSED int tg__gen_size(tg_int_list sizes, int64_t d, int64_t *out)
{
    int64_t nd = sizes.len;
    if (nd == 0 || d < -nd || d >= nd) {
        tg_set_error(
            "backward",
            "Dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
            (long long)(nd ? -nd : -1), (long long)(nd ? nd - 1 : 0), (long long)d);
        return -1;
    }
    *out = sizes.data[d < 0 ? d + nd : d];
    return 0;
}

static inline TG__UNUSED int64_t tg__gen_numel(tg_int_list sizes)
{
    int64_t n = 1;
    for (int64_t i = 0; i < sizes.len; i++) n *= sizes.data[i];
    return n;
}

/* Whether any edge from `first` on needs a gradient (the elements of a Tensor[] input). */
static inline TG__UNUSED bool tg__gen_needs_from(const tg_node *n, int first)
{
    for (int i = first; i < n->num_next; i++)
        if (tg__node_needs_input_grad(n, i)) return true;
    return false;
}

/* Only floating outputs get a grad_fn (integral and bool results are not differentiable). */
static inline TG__UNUSED bool tg__gen_differentiable(const tg_tensor *t)
{
    return tg_dtype_is_floating(tg_tensor_dtype(t));
}

/* Int lists and strings a node keeps live in the node's own allocation, after its struct:
 * bytes to reserve, and a copy at *cursor (None stays None, so a node without saved tensors
 * can run backward twice, as in PyTorch). */
static inline TG__UNUSED size_t tg__gen_ints_bytes(tg_int_list l)
{
    return l.data ? (size_t)l.len * sizeof(int64_t) : 0;
}

static inline TG__UNUSED tg_int_list tg__gen_keep_ints(tg_int_list l, char **cursor)
{
    if (!l.data) return l;
    if (l.len == 0) return TG_INTS_EMPTY;
    int64_t *d = (int64_t *)(void *)*cursor;
    memcpy(d, l.data, (size_t)l.len * sizeof(int64_t));
    *cursor += (size_t)l.len * sizeof(int64_t);
    return (tg_int_list){ .len = l.len, .data = d };
}

/* A Tensor[] / Tensor?[] argument a node keeps (index's indices): a malloc'd copy of the
 * array holding a reference to each element (NULL elements stay NULL), given back by
 * tg_tensor_list_release in release_saved. { NULL, 0 } when out of memory (the formula then
 * sees an empty list and fails with the operator's own error). */
static inline TG__UNUSED tg_tensor_list tg__gen_keep_tensors(tg_tensor_list l)
{
    if (!l.data) return l;
    tg_tensor **d = (tg_tensor **)calloc((size_t)(l.len ? l.len : 1), sizeof *d);
    if (!d) return (tg_tensor_list){ NULL, 0 };
    for (int64_t i = 0; i < l.len; i++) d[i] = l.data[i] ? tg_retain(l.data[i]) : NULL;
    return (tg_tensor_list){ d, l.len };
}

static inline TG__UNUSED size_t tg__gen_str_bytes(const char *s) { return s ? strlen(s) + 1 : 0; }

/* `a == b` of two strings (str? may be NULL: equal only to NULL). */
static inline TG__UNUSED bool tg__gen_str_eq(const char *a, const char *b)
{
    return a && b ? strcmp(a, b) == 0 : a == b;
}

static inline TG__UNUSED const char *tg__gen_keep_str(const char *s, char **cursor)
{
    if (!s) return NULL;
    char *d = *cursor;
    size_t n = strlen(s) + 1;
    memcpy(d, s, n);
    *cursor += n;
    return d;
}

/* The engine's operator calls of a spec that lacks the operators they need
 * (templates/tg_autograd_engine_missing.c.in): backward fails naming them. Returns NULL. */
static inline TG__UNUSED tg_tensor *tg__gen_engine_missing(const char *missing)
{
    return tg_set_error("backward",
                        "this library's spec does not declare the operators the autograd engine "
                        "calls: %s",
                        missing);
}

#endif

/* The functional transforms of tg_functional.h: torch.autograd.functional's jvp, vjp,
 * jacobian, hessian, hvp and vhp (PyTorch 1.13), written with the public API: dual levels and
 * tg_make_dual/tg_unpack_dual for forward mode, tg_grad for reverse mode, and a few operators
 * (zeros, fill_, stack, reshape) to build basis vectors and blocks. Not operators: they live
 * with the composites because they call operators, which the runtime never names (DESIGN.md).
 *
 * Ownership: each transform opens a scope around its work, so that f's outputs and every
 * intermediate are freed at its end; what it returns is retained before the scope ends (an
 * "owned" reference) and handed to the caller as a Tensor[] list recorded by the caller's scope
 * (tg_scope_track_list), like an operator's result. On any error the owned references are
 * released and the scope frees the rest: nothing is left behind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "ops/fill.h"
#include "ops/reshape.h"
#include "ops/select.h"
#include "ops/stack.h"
#include "ops/view.h"
#include "ops/zeros.h"
#include "ops/zeros_like.h"
#include "tg_functional.h"

/* ------------------------------------------------------------------ checks */

/* Every tensor of l is non-NULL and of a floating dtype; at least one. 0 or -1. */
static int check_inputs(const char *op, tg_tensor_list l, const char *what)
{
    if (l.len < 1 || !l.data) return tg__fail(op, "expected at least one %s tensor", what);
    for (int64_t i = 0; i < l.len; i++) {
        if (!l.data[i]) return tg__fail(op, "%s %lld is NULL", what, (long long)i);
        if (!tg_dtype_is_floating(tg_tensor_dtype(l.data[i])))
            return tg__fail(
                op, "%s %lld has dtype %s: only floating point tensors can be differentiated", what,
                (long long)i, tg_dtype_name(tg_tensor_dtype(l.data[i])));
    }
    return 0;
}

/* "[2, 3]" into buf. */
static const char *shape_str(const tg_tensor *t, char *buf, size_t n)
{
    size_t k = (size_t)snprintf(buf, n, "[");
    for (int64_t d = 0; d < tg_tensor_dim(t) && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? ", " : "",
                              (long long)tg_tensor_size(t, d));
    if (k < n) snprintf(buf + k, n - k, "]");
    return buf;
}

static bool same_shape(const tg_tensor *a, const tg_tensor *b)
{
    int64_t n = tg_tensor_dim(a);
    return n == tg_tensor_dim(b) &&
           (n == 0 || !memcmp(tg_tensor_sizes(a), tg_tensor_sizes(b), (size_t)n * sizeof(int64_t)));
}

/* PyTorch's _validate_v: v (one per tensor of `other`) of other's shapes. A one-tensor `other`
 * reads as PyTorch's single Tensor, more as a tuple. 0 or -1. */
static int validate_v(const char *op, tg_tensor_list v, tg_tensor *const *other, int64_t n)
{
    if (v.len != n) {
        if (n > 1)
            return tg__fail(op, "v is a tuple of invalid length: should be %lld but got %lld.",
                            (long long)n, (long long)v.len);
        return tg__fail(op, "The given v should contain a single Tensor.");
    }
    for (int64_t i = 0; i < n; i++) {
        char a[256], b[256], pre[64] = "";
        if (!v.data[i]) return tg__fail(op, "v %lld is NULL", (long long)i);
        if (same_shape(v.data[i], other[i])) continue;
        if (n > 1) snprintf(pre, sizeof pre, "Entry %lld in ", (long long)i);
        return tg__fail(op, "%sv has invalid size: should be %s but got %s.", pre,
                        shape_str(other[i], a, sizeof a), shape_str(v.data[i], b, sizeof b));
    }
    return 0;
}

/* An empty v stands for PyTorch's v=None: allowed for one tensor of one element (`what`
 * says which, in PyTorch's message), and then a tensor of ones is the vector. 0 or -1. */
static int v_or_ones(const char *op, tg_tensor_list *v, tg_tensor *const *other, int64_t n,
                     tg_tensor **ones_slot, const char *none_msg)
{
    if (v->len > 0) return validate_v(op, *v, other, n);
    if (n != 1 || tg_tensor_numel(other[0]) != 1) return tg__fail(op, "%s", none_msg);
    tg_tensor *one = tg_zeros_like(other[0]);
    if (!one || !tg_fill_(one, 1.0)) return -1;
    *ones_slot = one;
    *v = (tg_tensor_list){ ones_slot, 1 };
    return 0;
}

/* ------------------------------------------------------------------ calling f */

/* outs[0..n) = f(inputs); n, or -1. The outputs belong to the open scope (tg_functional.h). */
static int call_f(const char *op, tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor **outs)
{
    for (int i = 0; i < TG_FN_MAX_OUTPUTS; i++) outs[i] = NULL;
    int n = f(ctx, inputs, outs, TG_FN_MAX_OUTPUTS);
    if (n < 0) {
        if (!tg__has_error()) tg__error(op, "the user-provided function failed without an error");
        return -1;
    }
    if (n < 1 || n > TG_FN_MAX_OUTPUTS)
        return tg__fail(op,
                        "the user-provided function returned %d outputs: between 1 and %d are "
                        "allowed",
                        n, TG_FN_MAX_OUTPUTS);
    for (int i = 0; i < n; i++) {
        if (outs[i]) continue;
        if (!tg__has_error()) tg__error(op, "output %d of the user-provided function is NULL", i);
        return -1;
    }
    return n;
}

/* A scalar f: one output of one element (PyTorch's messages name the transform). */
static int check_scalar(const char *op, int n, tg_tensor *const *outs)
{
    if (n != 1) return tg__fail(op, "The function given to %s should return a single Tensor", op);
    if (tg_tensor_numel(outs[0]) != 1)
        return tg__fail(op,
                        "The Tensor returned by the function given to %s should contain a single "
                        "element",
                        op);
    return 0;
}

/* PyTorch's _grad_preprocess: with create_graph, an input that requires grad is used through a
 * view (its history kept); otherwise a detached alias, made a leaf that requires grad when a
 * graph is needed (reverse mode). The results belong to the open scope. 0 or -1. */
static int preprocess(tg_tensor_list in, tg_tensor **out, bool create_graph, bool need_graph)
{
    for (int64_t i = 0; i < in.len; i++) {
        tg_tensor *t = in.data[i];
        if (create_graph && tg_tensor_requires_grad(t)) {
            out[i] =
                tg_view(t, (tg_int_list){ .len = tg_tensor_dim(t), .data = tg_tensor_sizes(t) });
        } else {
            out[i] = tg_tensor_detach(t);
            if (out[i] && need_graph) tg_tensor_set_requires_grad(out[i], true);
        }
        if (!out[i]) return -1;
    }
    return 0;
}

/* The inputs of forward mode: with create_graph, an input that requires grad is used through a
 * view (its history kept, as preprocess); otherwise the input itself, since forward mode needs
 * no leaf: the caller runs f with grad mode off instead of detaching, so that the tangents an
 * input carries at enclosing levels stay (a jvp inside a jvp is a second derivative). */
static int forward_inputs(tg_tensor_list in, tg_tensor **out, bool create_graph)
{
    for (int64_t i = 0; i < in.len; i++) {
        tg_tensor *t = in.data[i];
        out[i] =
            create_graph && tg_tensor_requires_grad(t)
                ? tg_view(t, (tg_int_list){ .len = tg_tensor_dim(t), .data = tg_tensor_sizes(t) })
                : t;
        if (!out[i]) return -1;
    }
    return 0;
}

/* ------------------------------------------------------------------ building blocks */

/* A contiguous tensor of like's shape, dtype and device: zeros with a 1 at flat index k. */
static tg_tensor *basis(tg_tensor *like, int64_t k)
{
    tg_tensor *z =
        tg_zeros(((tg_int_list){ .len = tg_tensor_dim(like), .data = tg_tensor_sizes(like) }),
                 .dtype = tg_tensor_dtype(like), .device = tg_tensor_device(like));
    tg_tensor *flat = tg_view(z, TG_INTS(tg_tensor_numel(like)));
    if (!flat || !tg_fill_(tg_select(flat, 0, k), 1.0)) return NULL;
    return z;
}

/* The shape a.shape + b.shape into dims; its length, or -1. */
static int64_t block_shape(const char *op, const tg_tensor *a, const tg_tensor *b, int64_t *dims)
{
    int64_t na = tg_tensor_dim(a), nb = tg_tensor_dim(b);
    if (na + nb > TG_MAX_DIMS)
        return tg__fail(op, "a block of %lld dimensions is needed; at most %d are supported",
                        (long long)(na + nb), TG_MAX_DIMS);
    if (na) memcpy(dims, tg_tensor_sizes(a), (size_t)na * sizeof *dims);
    if (nb) memcpy(dims + na, tg_tensor_sizes(b), (size_t)nb * sizeof *dims);
    return na + nb;
}

/* The block a.shape + b.shape from n slices: `rows` (each of b's shape, one per element of a,
 * stacked first) or `cols` (each of a's shape, one per element of b, stacked last). Empty
 * blocks are zeros of `dtype_of`'s dtype and device. Belongs to the scope; NULL on error. */
static tg_tensor *assemble(const char *op, tg_tensor **slices, int64_t n, bool as_rows,
                           const tg_tensor *a, const tg_tensor *b, tg_tensor *dtype_of)
{
    int64_t dims[TG_MAX_DIMS];
    int64_t nd = block_shape(op, a, b, dims);
    if (nd < 0) return NULL;
    if (n == 0)
        return tg_zeros(((tg_int_list){ .len = nd, .data = dims }),
                        .dtype = tg_tensor_dtype(dtype_of), .device = tg_tensor_device(dtype_of));
    tg_tensor *s = tg_stack(((tg_tensor_list){ slices, n }), .dim = as_rows ? 0 : -1);
    return tg_reshape(s, (tg_int_list){ .len = nd, .data = dims });
}

/* ------------------------------------------------------------------ results */

/* Owned references, released on error. */
typedef struct owned {
    tg_tensor **t;
    int64_t n;
} owned;

static int owned_init(const char *op, owned *o, int64_t n)
{
    o->n = n;
    o->t = calloc((size_t)(n > 0 ? n : 1), sizeof *o->t);
    return o->t ? 0 : tg__fail(op, "out of memory");
}

static void owned_free(owned *o)
{
    for (int64_t i = 0; o->t && i < o->n; i++) tg_release(o->t[i]);
    free(o->t);
    *o = (owned){ NULL, 0 };
}

/* o->t[i] = an owned reference to t, detached when it has history and create_graph is off (a
 * tensor without history keeps the tangents of enclosing levels); 0 or -1. */
static int own(owned *o, int64_t i, tg_tensor *t, bool create_graph)
{
    if (!t) return -1;
    if (!create_graph && tg_tensor_requires_grad(t)) t = tg_tensor_detach(t);
    o->t[i] = tg_retain(t);
    return t ? 0 : -1;
}

/* Ends the transform's scope and, on success, hands out the lists: the next `counts[d]`
 * references of o become dsts[d] (NULL: released), a Tensor[] result recorded by the caller's
 * scope, now innermost again. Every array is allocated before any is handed out, so that a
 * failure leaves nothing behind. Returns rc, or -1. */
static int finish(const char *op, int rc, owned *o, tg_tensor_list **dsts, const int64_t *counts,
                  int ndst)
{
    tg_scope_end();
    tg_tensor **items[4] = { NULL };
    for (int d = 0; rc >= 0 && d < ndst; d++)
        if (dsts[d] && !(items[d] = tg_tensor_list_alloc(op, counts[d]))) rc = -1;
    int64_t first = 0;
    for (int d = 0; d < ndst; first += counts[d], d++) {
        if (rc < 0 || !dsts[d]) {
            free(items[d]);
            continue;
        }
        for (int64_t i = 0; i < counts[d]; i++) {
            items[d][i] = o->t[first + i];
            o->t[first + i] = NULL;
        }
        /* Tracking fails only with a scope open, which then owns the lists before this one. */
        *dsts[d] = tg_scope_track_list((tg_tensor_list){ items[d], counts[d] });
        if (!dsts[d]->data) rc = -1;
    }
    owned_free(o);
    return rc;
}

/* ------------------------------------------------------------------ jvp (forward mode) */

static int jvp_body(tg_fn f, void *ctx, tg_tensor_list primals, tg_tensor_list tangents, owned *o,
                    int *nout, bool create_graph)
{
    tg_tensor *duals[primals.len > 0 ? primals.len : 1], *outs[TG_FN_MAX_OUTPUTS];
    if (forward_inputs(primals, duals, create_graph)) return -1;
    int level = tg_fw_dual_level_enter();
    if (level < 0) return -1;
    bool prev = tg_set_grad_enabled(create_graph && tg_is_grad_enabled());
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < primals.len; i++)
        if (!(duals[i] = tg_make_dual(duals[i], tangents.data[i], level))) rc = -1;
    int n = rc ? -1 : call_f("jvp", f, ctx, (tg_tensor_list){ duals, primals.len }, outs);
    if (n > 0 && owned_init("jvp", o, 2 * (int64_t)n) == 0) {
        for (int i = 0; rc == 0 && i < n; i++) {
            tg_dual d = tg_unpack_dual(outs[i], level);
            tg_tensor *tan = d.primal && !d.tangent ? tg_zeros_like(d.primal) : d.tangent;
            if (own(o, i, d.primal, create_graph) || own(o, n + i, tan, create_graph)) rc = -1;
        }
    } else {
        rc = -1;
    }
    tg_set_grad_enabled(prev);
    if (tg_fw_dual_level_exit(level) && rc == 0) rc = -1;
    *nout = n;
    return rc;
}

int tg_jvp_fn(tg_fn f, void *ctx, tg_tensor_list primals, tg_tensor_list tangents,
              tg_tensor_list *outputs, tg_tensor_list *jvp, tg_functional_opts opts)
{
    if (outputs) *outputs = (tg_tensor_list){ NULL, 0 };
    if (jvp) *jvp = (tg_tensor_list){ NULL, 0 };
    if (!f || !jvp) return tg__fail("jvp", "f and jvp must not be NULL");
    if (check_inputs("jvp", primals, "input")) return -1;
    owned o = { NULL, 0 };
    int n = 0;
    tg_scope_begin();
    tg_tensor *ones = NULL;
    int rc = v_or_ones("jvp", &tangents, primals.data, primals.len, &ones,
                       "The vector v can only be None if the input to the user-provided function "
                       "is a single Tensor with a single element.");
    if (rc == 0) rc = jvp_body(f, ctx, primals, tangents, &o, &n, opts.create_graph);
    tg_tensor_list *dsts[2] = { outputs, jvp };
    return finish("jvp", rc, &o, dsts, (int64_t[]){ n, n }, 2);
}

/* ------------------------------------------------------------------ vjp (reverse mode) */

/* grads[j] = sum_i v[i]^T d outs[i] / d ins[j] (zeros where unused), recorded in the scope.
 * Outputs that do not require grad contribute nothing (PyTorch's _autograd_grad). */
static int vjp_of(tg_tensor *const *outs, tg_tensor *const *v, int nout, tg_tensor *const *ins,
                  int64_t nin, tg_tensor **grads, bool create_graph)
{
    tg_tensor *ro[TG_FN_MAX_OUTPUTS], *rv[TG_FN_MAX_OUTPUTS];
    int m = 0;
    for (int i = 0; i < nout; i++) {
        if (!outs[i] || !tg_tensor_requires_grad(outs[i])) continue;
        ro[m] = outs[i];
        rv[m++] = v[i];
    }
    for (int64_t j = 0; j < nin; j++) grads[j] = NULL;
    if (m > 0 && tg_grad(((tg_tensor_list){ ro, m }), ((tg_tensor_list){ ins, nin }), grads,
                         .grad_outputs = { rv, m }, .retain_graph = true,
                         .create_graph = create_graph, .allow_unused = true))
        return -1;
    for (int64_t j = 0; j < nin; j++)
        if (!grads[j] && !(grads[j] = tg_zeros_like(ins[j]))) return -1;
    return 0;
}

static int vjp_body(tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor_list v, owned *o,
                    int *nout, bool create_graph)
{
    tg_tensor *ins[inputs.len], *outs[TG_FN_MAX_OUTPUTS], *grads[inputs.len], *ones = NULL;
    if (preprocess(inputs, ins, create_graph, true)) return -1;
    tg_tensor_list il = { ins, inputs.len };
    bool prev = tg_set_grad_enabled(true);
    int n = call_f("vjp", f, ctx, il, outs);
    tg_set_grad_enabled(prev);
    *nout = n;
    if (n < 0 || v_or_ones("vjp", &v, outs, n, &ones,
                           "The vector v can only be None if the user-provided function returns a "
                           "single Tensor with a single element."))
        return -1;
    if (owned_init("vjp", o, n + inputs.len)) return -1;
    for (int i = 0; i < n; i++)
        if (own(o, i, outs[i], create_graph)) return -1;
    prev = tg_set_grad_enabled(create_graph || prev);
    int rc = vjp_of(outs, v.data, n, ins, inputs.len, grads, create_graph);
    tg_set_grad_enabled(prev);
    for (int64_t j = 0; rc == 0 && j < inputs.len; j++)
        if (own(o, n + j, grads[j], create_graph)) rc = -1;
    return rc;
}

int tg_vjp_fn(tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor_list v, tg_tensor_list *outputs,
              tg_tensor_list *vjp, tg_functional_opts opts)
{
    if (outputs) *outputs = (tg_tensor_list){ NULL, 0 };
    if (vjp) *vjp = (tg_tensor_list){ NULL, 0 };
    if (!f || !vjp) return tg__fail("vjp", "f and vjp must not be NULL");
    if (check_inputs("vjp", inputs, "input")) return -1;
    owned o = { NULL, 0 };
    int n = 0;
    tg_scope_begin();
    int rc = vjp_body(f, ctx, inputs, v, &o, &n, opts.create_graph);
    tg_tensor_list *dsts[2] = { outputs, vjp };
    return finish("vjp", rc, &o, dsts, (int64_t[]){ n, inputs.len }, 2);
}

/* ------------------------------------------------------------------ jacobian */

/* Reverse mode: blocks[i * nin + j] = d outs[i] / d ins[j], one vector-Jacobian product per
 * element of each output (the graph of outs is kept between them). Recorded in the scope. */
static int reverse_blocks(const char *op, tg_tensor *const *outs, int nout, tg_tensor *const *ins,
                          int64_t nin, tg_tensor **blocks, bool create_graph)
{
    int rc = 0;
    for (int i = 0; rc == 0 && i < nout; i++) {
        int64_t m = tg_tensor_numel(outs[i]);
        tg_tensor **rows = calloc((size_t)(m * nin + 1), sizeof *rows);
        if (!rows) return tg__fail(op, "out of memory");
        tg_tensor *grads[nin];
        for (int64_t k = 0; rc == 0 && k < m; k++) {
            tg_tensor *e = basis(outs[i], k);
            rc = e ? vjp_of(&outs[i], &e, 1, ins, nin, grads, create_graph) : -1;
            for (int64_t j = 0; rc == 0 && j < nin; j++) rows[j * m + k] = grads[j];
        }
        for (int64_t j = 0; rc == 0 && j < nin; j++) {
            blocks[i * nin + j] = assemble(op, rows + j * m, m, true, outs[i], ins[j], ins[j]);
            if (!blocks[i * nin + j]) rc = -1;
        }
        free(rows);
    }
    return rc;
}

/* Forward mode: one jvp per element of each input (that input dual with a basis tangent, the
 * others plain). blocks as reverse_blocks. *nout is f's number of outputs. */
static int forward_blocks(const char *op, tg_fn f, void *ctx, tg_tensor *const *ins, int64_t nin,
                          tg_tensor **blocks, int *nout)
{
    tg_tensor *outs[TG_FN_MAX_OUTPUTS], *shape_of[TG_FN_MAX_OUTPUTS], *args[nin];
    int n = -1, rc = 0;
    for (int64_t j = 0; rc == 0 && j < nin; j++) {
        int64_t m = tg_tensor_numel(ins[j]);
        tg_tensor **cols = calloc((size_t)(m * TG_FN_MAX_OUTPUTS + 1), sizeof *cols);
        if (!cols) return tg__fail(op, "out of memory");
        for (int64_t k = 0; rc == 0 && k < m; k++) {
            int level = tg_fw_dual_level_enter();
            if (level < 0) {
                rc = -1;
                break;
            }
            memcpy(args, ins, (size_t)nin * sizeof *args);
            args[j] = tg_make_dual(ins[j], basis(ins[j], k), level);
            int got = args[j] ? call_f(op, f, ctx, (tg_tensor_list){ args, nin }, outs) : -1;
            if (got > 0 && n >= 0 && got != n)
                got =
                    tg__fail(op, "the user-provided function returned %d outputs, then %d", n, got);
            for (int i = 0; got > 0 && i < got; i++) {
                tg_dual d = tg_unpack_dual(outs[i], level);
                cols[i * m + k] = d.tangent ? d.tangent : tg_zeros_like(outs[i]);
                shape_of[i] = d.primal;
                if (!cols[i * m + k] || !d.primal) got = -1;
            }
            if (tg_fw_dual_level_exit(level) || got < 0) rc = -1;
            n = got;
        }
        if (rc == 0 && m > 0) {
            for (int i = 0; rc == 0 && i < n; i++)
                if (!(blocks[i * nin + j] =
                          assemble(op, cols + i * m, m, false, shape_of[i], ins[j], ins[j])))
                    rc = -1;
        }
        free(cols);
    }
    if (rc == 0 && n < 0) { /* every input is empty: one plain call gives the outputs' shapes */
        n = call_f(op, f, ctx, (tg_tensor_list){ ins, nin }, shape_of);
        if (n < 0) rc = -1;
    }
    for (int64_t j = 0; rc == 0 && j < nin; j++) {
        if (tg_tensor_numel(ins[j]) > 0) continue;
        for (int i = 0; rc == 0 && i < n; i++)
            if (!(blocks[i * nin + j] = assemble(op, NULL, 0, false, shape_of[i], ins[j], ins[j])))
                rc = -1;
    }
    *nout = n;
    return rc;
}

static int jacobian_body(tg_fn f, void *ctx, tg_tensor_list inputs, owned *o, int *nout,
                         tg_jacobian_opts opts)
{
    int64_t nin = inputs.len;
    tg_tensor *ins[nin], *outs[TG_FN_MAX_OUTPUTS];
    tg_tensor **blocks = calloc((size_t)(nin * TG_FN_MAX_OUTPUTS), sizeof *blocks);
    if (!blocks) return tg__fail("jacobian", "out of memory");
    int rc, n = -1;
    if (opts.strategy == TG_FORWARD_MODE) {
        bool prev = tg_set_grad_enabled(opts.create_graph && tg_is_grad_enabled());
        rc = forward_inputs(inputs, ins, opts.create_graph);
        if (rc == 0) rc = forward_blocks("jacobian", f, ctx, ins, nin, blocks, &n);
        tg_set_grad_enabled(prev);
    } else {
        rc = preprocess(inputs, ins, opts.create_graph, true);
        bool prev = tg_set_grad_enabled(true);
        if (rc == 0) rc = n = call_f("jacobian", f, ctx, (tg_tensor_list){ ins, nin }, outs);
        if (rc > 0) rc = reverse_blocks("jacobian", outs, n, ins, nin, blocks, opts.create_graph);
        tg_set_grad_enabled(prev);
    }
    if (rc == 0) rc = owned_init("jacobian", o, n * nin);
    for (int64_t b = 0; rc == 0 && b < n * nin; b++)
        if (own(o, b, blocks[b], opts.create_graph)) rc = -1;
    free(blocks);
    *nout = n;
    return rc;
}

int tg_jacobian_fn(tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor_list *jac,
                   tg_jacobian_opts opts)
{
    if (jac) *jac = (tg_tensor_list){ NULL, 0 };
    if (!f || !jac) return tg__fail("jacobian", "f and jac must not be NULL");
    if (opts.strategy != TG_REVERSE_MODE && opts.strategy != TG_FORWARD_MODE)
        return tg__fail("jacobian", "Expected strategy to be either \"forward-mode\" or "
                                    "\"reverse-mode\".");
    if (check_inputs("jacobian", inputs, "input")) return -1;
    owned o = { NULL, 0 };
    int n = 0;
    tg_scope_begin();
    int rc = jacobian_body(f, ctx, inputs, &o, &n, opts);
    tg_tensor_list *dsts[1] = { jac };
    rc = finish("jacobian", rc, &o, dsts, (int64_t[]){ (int64_t)n * inputs.len }, 1);
    return rc < 0 ? -1 : n;
}

/* ------------------------------------------------------------------ hvp (forward-over-reverse) */

/* One forward-over-reverse product, recorded in the scope: inside a dual level, each input a
 * fresh leaf that requires grad (or, with create_graph, a view of an input that requires grad),
 * made dual with tangent v[i] when v[i] is not NULL; f; its gradient (tg_grad); the gradients'
 * tangents are hv[i] (zeros where there is none). *value is f's primal value. */
static int hvp_once(const char *op, tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor *const *v,
                    tg_tensor **hv, tg_tensor **value, bool create_graph)
{
    int64_t nin = inputs.len;
    tg_tensor *leaves[nin], *args[nin], *grads[nin], *outs[TG_FN_MAX_OUTPUTS];
    if (preprocess(inputs, leaves, create_graph, true)) return -1;
    int level = tg_fw_dual_level_enter();
    if (level < 0) return -1;
    int rc = 0;
    for (int64_t i = 0; rc == 0 && i < nin; i++) {
        args[i] = v[i] ? tg_make_dual(leaves[i], v[i], level) : leaves[i];
        if (!args[i]) rc = -1;
    }
    bool prev = tg_set_grad_enabled(true);
    int n = rc ? -1 : call_f(op, f, ctx, (tg_tensor_list){ args, nin }, outs);
    tg_set_grad_enabled(prev);
    if (n < 0 || check_scalar(op, n, outs)) rc = -1;
    for (int64_t i = 0; i < nin; i++) grads[i] = NULL;
    if (rc == 0 && tg_tensor_requires_grad(outs[0])) {
        prev = tg_set_grad_enabled(create_graph || prev);
        rc = tg_grad(TG_TENSORS(outs[0]), ((tg_tensor_list){ leaves, nin }), grads,
                     .create_graph = create_graph, .allow_unused = true);
        tg_set_grad_enabled(prev);
    }
    for (int64_t i = 0; rc == 0 && i < nin; i++) {
        tg_dual d = grads[i] ? tg_unpack_dual(grads[i], level) : (tg_dual){ NULL, NULL };
        hv[i] = d.tangent ? d.tangent : tg_zeros_like(inputs.data[i]);
        if (!hv[i]) rc = -1;
    }
    if (rc == 0 && value && !(*value = tg_unpack_dual(outs[0], level).primal)) rc = -1;
    if (tg_fw_dual_level_exit(level)) rc = -1;
    return rc;
}

static const char hvp_none_msg[] =
    "The vector v can only be None if the input to the user-provided "
    "function is a single Tensor with a single element.";

static int hvp_body(tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor_list v, owned *o,
                    bool create_graph)
{
    int64_t nin = inputs.len;
    tg_tensor *hv[nin], *value = NULL, *ones = NULL;
    if (v_or_ones("hvp", &v, inputs.data, nin, &ones, hvp_none_msg) ||
        hvp_once("hvp", f, ctx, inputs, v.data, hv, &value, create_graph) ||
        owned_init("hvp", o, 1 + nin) || own(o, 0, value, create_graph))
        return -1;
    for (int64_t i = 0; i < nin; i++)
        if (own(o, 1 + i, hv[i], create_graph)) return -1;
    return 0;
}

/* Hands o->t[0] to *output (recorded by the caller's scope), after finish() handed the rest. */
static int hand_value(int rc, tg_tensor *value, tg_tensor **output)
{
    if (rc < 0) {
        tg_release(value);
        return -1;
    }
    if (output) *output = tg_scope_track(value);
    else tg_release(value);
    return 0;
}

int tg_hvp_fn(tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor_list v, tg_tensor **output,
              tg_tensor_list *hvp, tg_functional_opts opts)
{
    if (output) *output = NULL;
    if (hvp) *hvp = (tg_tensor_list){ NULL, 0 };
    if (!f || !hvp) return tg__fail("hvp", "f and hvp must not be NULL");
    if (check_inputs("hvp", inputs, "input")) return -1;
    owned o = { NULL, 0 };
    tg_scope_begin();
    int rc = hvp_body(f, ctx, inputs, v, &o, opts.create_graph);
    tg_tensor *value = rc == 0 ? o.t[0] : NULL;
    if (rc == 0) o.t[0] = NULL;
    tg_tensor_list *dsts[2] = { NULL, hvp };
    rc = finish("hvp", rc, &o, dsts, (int64_t[]){ 1, inputs.len }, 2);
    return hand_value(rc, value, output);
}

/* ------------------------------------------------------------------ vhp (reverse-over-reverse) */

static int vhp_body(tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor_list v, owned *o,
                    bool create_graph)
{
    int64_t nin = inputs.len;
    tg_tensor *ins[nin], *outs[TG_FN_MAX_OUTPUTS], *g[nin], *vh[nin], *ones = NULL;
    if (v_or_ones("vhp", &v, inputs.data, nin, &ones, hvp_none_msg) ||
        preprocess(inputs, ins, create_graph, true))
        return -1;
    bool prev = tg_set_grad_enabled(true);
    int n = call_f("vhp", f, ctx, (tg_tensor_list){ ins, nin }, outs);
    int rc = n < 0 || check_scalar("vhp", n, outs) ? -1 : 0;
    for (int64_t i = 0; i < nin; i++) g[i] = NULL;
    if (rc == 0 && tg_tensor_requires_grad(outs[0]))
        rc = tg_grad(TG_TENSORS(outs[0]), ((tg_tensor_list){ ins, nin }), g, .create_graph = true,
                     .allow_unused = true);
    /* The second product: only the gradients that exist, each with its input's v. */
    tg_tensor *gs[nin], *vs[nin];
    int m = 0;
    for (int64_t i = 0; rc == 0 && i < nin; i++)
        if (g[i]) {
            gs[m] = g[i];
            vs[m++] = v.data[i];
        }
    if (rc == 0) {
        tg_set_grad_enabled(create_graph || prev);
        rc = vjp_of(gs, vs, m, ins, nin, vh, create_graph);
    }
    tg_set_grad_enabled(prev);
    if (rc || owned_init("vhp", o, 1 + nin) || own(o, 0, outs[0], create_graph)) return -1;
    for (int64_t i = 0; i < nin; i++)
        if (own(o, 1 + i, vh[i], create_graph)) return -1;
    return 0;
}

int tg_vhp_fn(tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor_list v, tg_tensor **output,
              tg_tensor_list *vhp, tg_functional_opts opts)
{
    if (output) *output = NULL;
    if (vhp) *vhp = (tg_tensor_list){ NULL, 0 };
    if (!f || !vhp) return tg__fail("vhp", "f and vhp must not be NULL");
    if (check_inputs("vhp", inputs, "input")) return -1;
    owned o = { NULL, 0 };
    tg_scope_begin();
    int rc = vhp_body(f, ctx, inputs, v, &o, opts.create_graph);
    tg_tensor *value = rc == 0 ? o.t[0] : NULL;
    if (rc == 0) o.t[0] = NULL;
    tg_tensor_list *dsts[2] = { NULL, vhp };
    rc = finish("vhp", rc, &o, dsts, (int64_t[]){ 1, inputs.len }, 2);
    return hand_value(rc, value, output);
}

/* ------------------------------------------------------------------ hessian */

/* Reverse-over-reverse: the gradient with create_graph, then its Jacobian in reverse mode. */
static int hessian_reverse(tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor **blocks,
                           bool create_graph)
{
    int64_t nin = inputs.len;
    tg_tensor *ins[nin], *outs[TG_FN_MAX_OUTPUTS], *g[nin];
    if (preprocess(inputs, ins, create_graph, true)) return -1;
    bool prev = tg_set_grad_enabled(true);
    int n = call_f("hessian", f, ctx, (tg_tensor_list){ ins, nin }, outs);
    int rc = n < 0 || check_scalar("hessian", n, outs) ? -1 : 0;
    for (int64_t i = 0; i < nin; i++) g[i] = NULL;
    if (rc == 0 && tg_tensor_requires_grad(outs[0]))
        rc = tg_grad(TG_TENSORS(outs[0]), ((tg_tensor_list){ ins, nin }), g, .create_graph = true,
                     .allow_unused = true);
    for (int64_t i = 0; rc == 0 && i < nin; i++)
        if (!g[i] && !(g[i] = tg_zeros_like(ins[i]))) rc = -1;
    if (rc == 0) rc = reverse_blocks("hessian", g, (int)nin, ins, nin, blocks, create_graph);
    tg_set_grad_enabled(prev);
    return rc;
}

/* Forward-over-reverse: one hvp per element of each input, with a basis vector for v. */
static int hessian_forward(tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor **blocks,
                           bool create_graph)
{
    int64_t nin = inputs.len;
    tg_tensor *v[nin], *hv[nin];
    int rc = 0;
    for (int64_t j = 0; rc == 0 && j < nin; j++) {
        int64_t m = tg_tensor_numel(inputs.data[j]);
        tg_tensor **cols = calloc((size_t)(m * nin + 1), sizeof *cols);
        if (!cols) return tg__fail("hessian", "out of memory");
        for (int64_t k = 0; rc == 0 && k < m; k++) {
            for (int64_t i = 0; i < nin; i++) v[i] = NULL;
            if (!(v[j] = basis(inputs.data[j], k)) ||
                hvp_once("hessian", f, ctx, inputs, v, hv, NULL, create_graph))
                rc = -1;
            for (int64_t i = 0; rc == 0 && i < nin; i++) cols[i * m + k] = hv[i];
        }
        for (int64_t i = 0; rc == 0 && i < nin; i++) {
            tg_tensor *in_i = inputs.data[i], *in_j = inputs.data[j];
            if (!(blocks[i * nin + j] =
                      assemble("hessian", cols + i * m, m, false, in_i, in_j, in_i)))
                rc = -1;
        }
        free(cols);
    }
    return rc;
}

int tg_hessian_fn(tg_fn f, void *ctx, tg_tensor_list inputs, tg_tensor_list *hess,
                  tg_hessian_opts opts)
{
    if (hess) *hess = (tg_tensor_list){ NULL, 0 };
    if (!f || !hess) return tg__fail("hessian", "f and hess must not be NULL");
    if (opts.outer != TG_REVERSE_MODE && opts.outer != TG_FORWARD_MODE)
        return tg__fail("hessian", "Expected strategy to be either \"forward-mode\" or "
                                   "\"reverse-mode\".");
    if (check_inputs("hessian", inputs, "input")) return -1;
    int64_t nb = inputs.len * inputs.len;
    owned o = { NULL, 0 };
    tg_scope_begin();
    tg_tensor **blocks = calloc((size_t)nb, sizeof *blocks);
    int rc = blocks ? 0 : tg__fail("hessian", "out of memory");
    if (rc == 0)
        rc = opts.outer == TG_FORWARD_MODE
                 ? hessian_forward(f, ctx, inputs, blocks, opts.create_graph)
                 : hessian_reverse(f, ctx, inputs, blocks, opts.create_graph);
    if (rc == 0) rc = owned_init("hessian", &o, nb);
    for (int64_t b = 0; rc == 0 && b < nb; b++)
        if (own(&o, b, blocks[b], opts.create_graph)) rc = -1;
    free(blocks);
    tg_tensor_list *dsts[1] = { hess };
    return finish("hessian", rc, &o, dsts, (int64_t[]){ nb }, 1);
}

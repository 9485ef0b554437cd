/* runtime/autograd: what generated backward nodes and autograd kernels need from the engine:
 * the node's layout, saved tensors, recording. Installed (as <tensorgen/autograd/autograd.h>),
 * because an operator library's generated autograd code uses it too: it is the interface
 * between generated code and libtensorgen.so.0, not an API for hand-written programs. Nothing
 * here exposes a tensor's layout. Never kernels. The public side (tg_backward, tg_grad, hooks,
 * grad_fn inspection, TG_NO_GRAD) is in tg_core.h.
 *
 * The model is PyTorch's. A differentiable op run with grad mode on and an input requiring
 * grad records a node: a struct whose first member is `tg_node`, followed by the values its
 * formulas need. The node's next edges point at the nodes that produced its differentiable
 * inputs (or at a leaf's gradient accumulator); its outputs' grad_fn points at it. Backward
 * walks the graph from the root in dependency order, calling each node's apply.
 *
 * Ownership: a tensor owns a reference to its grad_fn; a node owns references to its next
 * nodes and to its saved tensors. Saved outputs are stored as detached aliases (same storage
 * and version counter, no grad_fn) so that output -> node -> output is not a cycle. */
#ifndef TG_AUTOGRAD_AUTOGRAD_H
#define TG_AUTOGRAD_AUTOGRAD_H

#include "dispatch/dispatch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_node tg_node;

/* The gradient for one input of a node flows to `node`'s input `input_nr` (the forward
 * output number of that node). node == NULL: no gradient is needed for that input. */
typedef struct tg_edge {
    tg_node *node;
    int32_t input_nr;
} tg_edge;

/* Shape, dtype and device of one forward output: lets the engine make zeros for a gradient
 * nobody produced and check the shape of the ones that were. */
typedef struct tg_output_meta {
    bool defined; /* the forward returned this output (an output_mask may leave one NULL) */
    int64_t ndim;
    int64_t sizes[TG_MAX_DIMS];
    tg_dtype dtype;
    tg_device device;
} tg_output_meta;

typedef struct tg_node_vtable {
    const char *name; /* "AddBackward0" */
    /* grads[i] is the gradient w.r.t. forward output i (the engine materialises zeros for an
     * output nothing flowed back to; it is NULL only for an output the forward left undefined,
     * as convolution_backward does for what its output_mask excludes). Fills out[j] (a new reference, or NULL for "no gradient") for every next edge j
     * whose node is set; out[] starts all NULL. Returns 0, or -1 with an error recorded (the
     * engine then releases whatever out[] holds). */
    int (*apply)(tg_node *n, tg_tensor *const *grads, tg_tensor **out);
    /* Drops the saved tensors (after a backward without retain_graph, and when the node
     * dies). Must be idempotent. NULL when the node saves no tensors. */
    void (*release_saved)(tg_node *n);
} tg_node_vtable;

struct tg_node {
    int64_t refcount;
    const tg_node_vtable *vt;
    uint64_t sequence_nr;           /* creation order: later nodes run first among ready ones */
    int32_t num_outputs;            /* forward outputs = gradients this node receives */
    int32_t num_next;               /* differentiable forward inputs = gradients it produces */
    tg_edge *next;                  /* [num_next], allocated with the node */
    tg_output_meta *outputs;        /* [num_outputs], allocated with the node */
    bool saved_released;            /* set by the engine after release_saved */
    uint32_t prof_thread;           /* the profiler's id of the creating thread; 0: not profiled */
    struct tg_hook_list *pre_hooks; /* engine-private */
};

/* ---- nodes ---- */
/* Allocates a node of `size` bytes (>= sizeof(tg_node), zeroed) with room for its edges and
 * output metadata; refcount 1; stamps sequence_nr. NULL with an error on out of memory. */
tg_node *tg_autograd_node_new(size_t size, const tg_node_vtable *vt, int num_outputs, int num_next);
tg_node *tg_autograd_node_retain(tg_node *n);
/* Drops a reference; frees the node and, without recursion, every node only it kept alive. */
void tg_autograd_node_release(tg_node *n);
/* Whether apply must compute the gradient for next edge i. */
static inline bool tg__node_needs_input_grad(const tg_node *n, int i)
{
    return i < n->num_next && n->next[i].node != NULL;
}
/* Sets next edge i from a forward input: its grad_fn and output number, or its leaf
 * accumulator when it is a leaf requiring grad, or nothing. t may be NULL (Tensor?). */
void tg_autograd_node_set_next_edge(tg_node *n, int i, const tg_tensor *t);

/* ---- recording ---- */
/* Grad mode on and some tensor (NULLs skipped) requires grad. */
bool tg_autograd_any_requires_grad(tg_tensor *const *ts, int n);
/* Makes t output `output_nr` of n: t->grad_fn = n (a new reference), requires_grad = true,
 * and records t's metadata in n->outputs[output_nr]. */
void tg_autograd_set_history(tg_tensor *t, tg_node *n, int output_nr);
/* For in-place ops, before running the op: errors when t is a leaf that requires grad ("a
 * leaf Variable that requires grad is being used in an in-place operation.") or a view of a
 * tensor that requires grad (not supported: clear error). Returns 0 or -1. */
int tg_autograd_check_inplace(const char *op, const tg_tensor *t);
/* out= variants do not record: error when an argument has a tangent (PyTorch's "Trying to use
 * forward AD with add_out that does not support it because it is an out= function"), or when
 * grad mode is on and an argument requires grad
 * ("add(): functions with out=... arguments don't support automatic differentiation, but one
 * of the arguments requires grad."). Returns 0 or -1. */
int tg_autograd_check_out(const char *op, tg_tensor *const *ts, int n);

/* Runs the op below autograd: the autograd kernel brackets its redispatch with these. */
static inline tg_keyset tg__autograd_below_begin(void)
{
    return tg_dispatch_set_excluded_keys(tg_dispatch_excluded_keys() |
                                         ((tg_keyset)1 << TG_KEY_AUTOGRAD));
}
static inline void tg__autograd_below_end(tg_keyset prev) { tg_dispatch_set_excluded_keys(prev); }

/* ---- saved tensors (PyTorch's SavedVariable) ---- */
typedef struct tg_saved {
    tg_tensor *data;   /* owned: the input itself, or a detached alias of an output */
    int64_t version;   /* the version counter's value when saved */
    int32_t output_nr; /* for outputs: which output of the owning node */
    bool is_output;
    bool defined; /* something (possibly NULL for Tensor?) was saved */
} tg_saved;

/* Saves t (NULL allowed for Tensor? arguments). For outputs pass is_output = true, after
 * tg_autograd_set_history (an output without history, e.g. integral indices, is kept like an input). */
void tg_autograd_save(tg_saved *s, tg_tensor *t, bool is_output, int output_nr);
/* A new reference to the saved tensor, with its history: an input keeps its own grad_fn; an
 * output gets `owner` back as grad_fn (so create_graph differentiates through it). Errors:
 * the graph was freed ("Trying to backward through the graph a second time (or directly
 * access saved tensors after they have already been freed). ..."), or the tensor was
 * modified in place since ("one of the variables needed for gradient computation has been
 * modified by an inplace operation: [torch.FloatTensor [3]], which is output 0 of
 * AddBackward0, is at version 2; expected version 1 instead. ..."). A saved NULL unpacks to
 * NULL without an error; check s->defined to tell. */
tg_tensor *tg_autograd_unpack(tg_saved *s, tg_node *owner);
void tg_autograd_saved_release(tg_saved *s);

/* A tensor's sizes saved by value when a formula uses only `x.sizes()`. */
typedef struct tg_saved_sizes {
    int64_t ndim;
    int64_t sizes[TG_MAX_DIMS];
} tg_saved_sizes;
static inline void tg__saved_sizes_save(tg_saved_sizes *s, const tg_tensor *t)
{
    const int64_t *sizes = tg_tensor_sizes(t);
    s->ndim = tg_tensor_dim(t);
    for (int64_t i = 0; i < s->ndim; i++) s->sizes[i] = sizes[i];
}
static inline tg_int_list tg__saved_sizes_list(const tg_saved_sizes *s)
{
    return (tg_int_list){ .len = s->ndim, .data = s->ndim ? s->sizes : tg__empty_int_list_storage };
}

/* ---- helpers for formulas ---- */
/* The engine's error for an op with differentiable inputs and no formula, raised at
 * backward: "the derivative for 'foo' is not implemented". */
int tg_autograd_not_implemented(const char *what);

/* The gradient g (owned) for next edge i of a node, fitted to the input it flows to: when that
 * input has no elements and g's shape differs (a legacy 1-D empty input of cat gets a
 * [2, 0, 4] piece of grad), an empty gradient of the input's own shape, which the engine
 * accepts. A new reference (g itself when it fits), or NULL with an error. */
tg_tensor *tg_autograd_fit_grad(const tg_node *node, int i, tg_tensor *g);

/* ---- forward mode (forward.c; tg_core.h has the public side) ----
 * The generated autograd kernel of an operator with a `result:` formula, after running the op,
 * computes its outputs' tangents at every level where an input has one: with the level
 * suspended (the formula's operators see primal values), the inputs' tangents (zeros for an
 * input without one), the compiled formula, then tg__fw_set / tg__fw_set_inplace. */
int tg__fw_levels(void); /* how many dual levels are entered (0: forward mode unused) */
/* Some tensor (NULLs skipped) has a tangent at an entered, unsuspended level. */
bool tg__fw_any(tg_tensor *const *ts, int n);
/* ... at `level`. */
bool tg__fw_any_level(tg_tensor *const *ts, int n, int level);
/* Whether t (any of ts) has a tangent at `level`, suspended or not: what the code computing
 * that level's tangents asks after suspending it. */
bool tg__fw_has(const tg_tensor *t, int level);
bool tg__fw_has_list(tg_tensor *const *ts, int n, int level);
/* Output r as the formulas computing its tangent at `level` read it (`result`): an alias
 * with r's history and its tangents of the other levels, that does not keep r alive (the
 * tangent's own history may save it: no cycle through r). A new reference, or NULL. */
tg_tensor *tg__fw_output_alias(tg_tensor *r, int level);
/* Hides `level`'s tangents on this thread; returns the token tg__fw_resume restores. */
int tg__fw_suspend(int level);
void tg__fw_resume(int token);
/* t's tangent at `level` (a new reference), zeros of t's shape when it has none; NULL for a
 * NULL t (no error) or with an error. */
tg_tensor *tg__fw_tangent_or_zeros(tg_tensor *t, int level);
/* The same for each element (owned list; NULL elements stay NULL); { NULL, 0 } on error. */
tg_tensor_list tg__fw_tangents_or_zeros(tg_tensor_list l, int level);
/* Attaches `tangent` (owned; NULL: the formula failed, returns -1) to output `out` at `level`
 * (converted to out's dtype; a shape other than out's is an error naming op). An integral
 * output gets none. 0 or -1. */
int tg__fw_set(const char *op, tg_tensor *out, tg_tensor *tangent, int level);
/* The same for the self of an in-place op: written into self's tangent in place when it has
 * one (views of self share it); a view without one gets the matching view of its base's
 * tangent (made zeros when the base has none). */
int tg__fw_set_inplace(const char *op, tg_tensor *self, tg_tensor *tangent, int level);
/* The same for each element of a Tensor[] output (tangents owned; NULL elements get none). */
int tg__fw_set_list(const char *op, tg_tensor_list outs, tg_tensor_list tangents, int level);
/* acc + term (acc - term when negate), both owned (acc NULL: term, or -term); NULL with an
 * error when term is NULL (its formula failed) or the sum fails. */
tg_tensor *tg__fw_add_term(tg_tensor *acc, tg_tensor *term, bool negate);
/* "forward AD is not implemented for 'op'" (and why tgen did not compile the formula it has);
 * return -1. */
int tg__fw_not_implemented(const char *op);
int tg__fw_not_compiled(const char *op, const char *why);

#ifdef __cplusplus
}
#endif

#endif

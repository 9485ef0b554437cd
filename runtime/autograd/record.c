/* Recording (record.h): what every generated autograd kernel does around the operator it runs
 * below autograd, driven by its entry's tables. In order, as PyTorch's generated
 * VariableType kernels do it:
 *
 *   begin  when an input requires grad (and grad mode is on): an in-place op's self is
 *          checked, the node made, its edges set and what it keeps of the inputs saved (before
 *          an in-place op changes self); when an input has a tangent, an in-place op's self is
 *          copied for the forward formulas; then the autograd key is excluded.
 *   (the kernel runs the operator)
 *   end    the keys restored; a failed call stops here; the outputs get the node as grad_fn,
 *          then their tangents (forward.c, so that their computation is recorded against that
 *          history), then the node keeps what it needs of the outputs.
 *
 * An operator returning a Tensor[] makes its node after running: it has one output per
 * element, and it is never in place. */
#include "autograd/autograd_private.h"
#include "autograd/engine_ops.h"
#include "autograd/formula_glue.h"
#include "autograd/record.h"

#include <string.h>

/* An in-place op's self: the argument named self (op->self), not always the first (torchgen
 * allows positionals before it: torch_mlu's mask_softmax_dropout_bprop_). */
const tg_ag_input *tg__ag_self_input(const tg_ag_op *op)
{
    const tg_ag_entry *e = op->entry;
    for (int i = 0; i < e->ninputs; i++)
        if (e->inputs[i].arg == op->self) return e->inputs[i].list ? NULL : &e->inputs[i];
    return NULL;
}

static tg_tensor *self_of(const tg_ag_op *op, void *frame)
{
    const tg_ag_input *in = tg__ag_self_input(op);
    return in ? tg__ag_tensor_at(frame, in->at) : NULL;
}

static bool list_result(const tg_ag_entry *e)
{
    return e->noutputs == 1 && e->outputs[0].kind == TG_AG_OUT_LIST;
}

/* Whether test(tensors, n) holds for some input of the call: a tensor or a TensorList. */
static bool any_input(const tg_ag_entry *e, void *frame, bool (*test)(tg_tensor *const *, int))
{
    for (int i = 0; i < e->ninputs; i++) {
        tg_tensor *one;
        int n;
        tg_tensor *const *ts = tg__ag_input_tensors(frame, &e->inputs[i], &one, &n);
        if (test(ts, n)) return true;
    }
    return false;
}

static bool any_requires_grad(const tg_ag_entry *e, void *frame)
{
    return any_input(e, frame, tg_autograd_any_requires_grad);
}

/* Whether some input has a tangent at an entered, unsuspended level. */
static bool any_tangent(const tg_ag_entry *e, void *frame)
{
    return tg__fw_levels() && any_input(e, frame, tg__fw_any);
}

/* ------------------------------------------------------------------ nodes that fail */

/* The node of an operator without a derivative entry ("NotImplemented"), or of an entry tgen
 * generated no node for (named after the entry; `why` says why). */
typedef struct ni_node {
    tg_node base;
    const char *row; /* the operator's row name: "argmax" */
    const char *why;
} ni_node;

static int not_implemented_apply(tg_node *n, tg_tensor *const *grads, tg_tensor **out)
{
    (void)grads;
    (void)out;
    return tg_autograd_not_implemented(((ni_node *)n)->row);
}

int tg__autograd_apply_not_generated(tg_node *n, tg_tensor *const *grads, tg_tensor **out)
{
    (void)grads;
    (void)out;
    return tg__gen_not_generated(((ni_node *)n)->row, ((ni_node *)n)->why);
}

static const tg_node_vtable not_implemented_vtable = { "NotImplemented", not_implemented_apply,
                                                       NULL };

static bool fails_at_backward(const tg_ag_entry *e) { return !e->vt || e->why; }

/* ------------------------------------------------------------------ edges and saves */

/* The node's next edges: the entry's, or every tensor argument's (elements of a list each). */
static int count_edges(const tg_ag_entry *e, void *frame)
{
    if (!fails_at_backward(e))
        return e->nedges +
               (e->list_edge >= 0 ? (int)tg__ag_list_at(frame, e->inputs[e->list_edge].at).len : 0);
    int n = 0;
    for (int i = 0; i < e->ninputs; i++)
        n += e->inputs[i].list ? (int)tg__ag_list_at(frame, e->inputs[i].at).len : 1;
    return n;
}

static void set_list_edges(tg_node *node, int first, tg_tensor_list l)
{
    for (int64_t k = 0; k < l.len; k++)
        tg_autograd_node_set_next_edge(node, first + (int)k, l.data[k]);
}

static void set_edges(const tg_ag_entry *e, void *frame, tg_node *node)
{
    if (fails_at_backward(e)) {
        int next = 0;
        for (int i = 0; i < e->ninputs; i++) {
            const tg_ag_input *in = &e->inputs[i];
            if (in->list) {
                tg_tensor_list l = tg__ag_list_at(frame, in->at);
                set_list_edges(node, next, l);
                next += (int)l.len;
            } else {
                tg_autograd_node_set_next_edge(node, next++, tg__ag_tensor_at(frame, in->at));
            }
        }
        return;
    }
    for (int k = 0; k < e->nedges; k++)
        tg_autograd_node_set_next_edge(node, k, tg__ag_tensor_at(frame, e->inputs[e->edges[k]].at));
    if (e->list_edge >= 0)
        set_list_edges(node, e->nedges, tg__ag_list_at(frame, e->inputs[e->list_edge].at));
}

/* Bytes the node keeps after its struct for the inputs' int lists and strings. */
static size_t extra_bytes(const tg_ag_entry *e, void *frame)
{
    size_t n = 0;
    for (int i = 0; i < e->nsaves; i++) {
        const tg_ag_save *s = &e->saves[i];
        if (s->output) continue;
        if (s->kind == TG_AG_SAVE_INTS)
            n += tg__gen_ints_bytes(*(tg_int_list *)tg__ag_field(frame, s->from));
        else if (s->kind == TG_AG_SAVE_LIST_SIZES)
            n += (size_t)tg__ag_list_at(frame, s->from).len * sizeof(int64_t);
        else if (s->kind == TG_AG_SAVE_STR)
            n += tg__gen_str_bytes(*(const char **)tg__ag_field(frame, s->from));
    }
    return n;
}

/* Saves one value into the node. `src` points at it: in the frame, or in the result (output
 * `index`). `cursor` walks the bytes after the node's struct. With `copy`, a tensor is saved
 * as a recorded copy: an in-place op's self as it was. 0, or -1 (the copy failed). */
static int save_one(const tg_ag_save *s, tg_node *node, void *src, int index, void *frame,
                    char **cursor, bool copy)
{
    void *to = tg__ag_field(node, s->to);
    /* src holds a tg_tensor * for the kinds that save a tensor or its properties, read in
     * their cases only: for the others it is another type, perhaps 4-byte aligned. */
    switch ((tg_ag_save_kind)s->kind) {
    case TG_AG_SAVE_TENSOR: {
        tg_tensor *t = tg__ag_tensor_at(src, 0);
        if (!copy) {
            tg_autograd_save(to, t, s->output, s->output ? index : 0);
        } else {
            if (!(t = tg__autograd_clone(t))) return -1;
            tg_autograd_save(to, t, false, 0);
            tg_release(t);
        }
        break;
    }
    case TG_AG_SAVE_DEFINED: *(bool *)to = tg__ag_tensor_at(src, 0) != NULL; break;
    case TG_AG_SAVE_SIZES: tg__saved_sizes_save(to, tg__ag_tensor_at(src, 0)); break;
    case TG_AG_SAVE_DIM: *(int64_t *)to = tg_tensor_dim(tg__ag_tensor_at(src, 0)); break;
    case TG_AG_SAVE_NUMEL: *(int64_t *)to = tg_tensor_numel(tg__ag_tensor_at(src, 0)); break;
    case TG_AG_SAVE_DTYPE: *(tg_dtype *)to = tg_tensor_dtype(tg__ag_tensor_at(src, 0)); break;
    case TG_AG_SAVE_DEVICE: *(tg_device *)to = tg_tensor_device(tg__ag_tensor_at(src, 0)); break;
    case TG_AG_SAVE_VALUE: memcpy(to, src, s->size); break;
    case TG_AG_SAVE_INTS:
        *(tg_int_list *)to = tg__gen_keep_ints(*(tg_int_list *)src, cursor);
        break;
    case TG_AG_SAVE_TENSORS:
        *(tg_tensor_list *)to = tg__gen_keep_tensors(*(tg_tensor_list *)src);
        break;
    case TG_AG_SAVE_STR: *(const char **)to = tg__gen_keep_str(*(const char **)src, cursor); break;
    case TG_AG_SAVE_LIST_SIZES:
        *(tg_int_list *)to = tg__gen_keep_list_sizes(*(tg_tensor_list *)src, s->dim(frame), cursor);
        break;
    }
    return 0;
}

/* ------------------------------------------------------------------ begin and end */

/* The node, its edges and what it keeps of the inputs. 0 or -1. */
static int make_node(tg_ag_call *c, int noutputs)
{
    const tg_ag_entry *e = c->op->entry;
    bool fails = fails_at_backward(e);
    size_t size = fails ? sizeof(ni_node) : e->node_size + extra_bytes(e, c->frame);
    c->node = tg_autograd_node_new(size, e->vt ? e->vt : &not_implemented_vtable, noutputs,
                                   count_edges(e, c->frame));
    if (!c->node) return -1;
    set_edges(e, c->frame, c->node);
    if (fails) {
        ((ni_node *)c->node)->row = c->op->row;
        ((ni_node *)c->node)->why = e->why;
        return 0;
    }
    char *cursor = tg__ag_field(c->node, e->node_size);
    for (int i = 0; i < e->nsaves; i++) {
        const tg_ag_save *s = &e->saves[i];
        /* An in-place op's formulas need self as it was: a copy made before the op. */
        const tg_ag_input *self = c->op->inplace ? tg__ag_self_input(c->op) : NULL;
        bool copy = self && !s->output && s->kind == TG_AG_SAVE_TENSOR && s->from == self->at;
        if (!s->output &&
            save_one(s, c->node, tg__ag_field(c->frame, s->from), 0, c->frame, &cursor, copy)) {
            tg_autograd_node_release(c->node);
            c->node = NULL;
            return -1;
        }
    }
    return 0;
}

int tg__autograd_begin(tg_ag_call *c, const tg_ag_op *op, void *frame)
{
    const tg_ag_entry *e = op->entry;
    *c = (tg_ag_call){ .op = op, .frame = frame };
    c->grad = any_requires_grad(e, frame);
    c->fw = any_tangent(e, frame);
    if (c->grad) {
        if (op->inplace && tg_autograd_check_inplace(op->name, self_of(op, frame))) return -1;
        if (!list_result(e) && make_node(c, e->noutputs)) return -1;
    }
    if (c->fw && op->inplace && e->terms && !(c->self0 = tg__autograd_clone(self_of(op, frame)))) {
        tg_autograd_node_release(c->node);
        return -1;
    }
    c->prev = tg__autograd_below_begin();
    c->begun = true;
    return 0;
}

static tg_tensor *output_tensor(const tg_ag_output *o, void *result)
{
    return o->kind == TG_AG_OUT_TENSOR ? tg__ag_tensor_at(result, o->at) : NULL;
}

/* The call failed: every Tensor output is NULL (an operator with an output mask leaves those
 * it was not asked for undefined), or, without one, its Tensor[] is. */
static bool call_failed(const tg_ag_entry *e, void *result)
{
    bool any_tensor = false;
    for (int i = 0; i < e->noutputs; i++) {
        const tg_ag_output *o = &e->outputs[i];
        if (o->kind != TG_AG_OUT_TENSOR) continue;
        if (tg__ag_tensor_at(result, o->at)) return false;
        any_tensor = true;
    }
    return any_tensor || !tg__ag_list_at(result, e->outputs[0].at).data;
}

static void release_result(const tg_ag_entry *e, void *result)
{
    for (int i = 0; i < e->noutputs; i++) {
        const tg_ag_output *o = &e->outputs[i];
        if (o->kind == TG_AG_OUT_TENSOR) tg_release(tg__ag_tensor_at(result, o->at));
        else if (o->kind == TG_AG_OUT_LIST) tg_tensor_list_release(tg__ag_list_at(result, o->at));
    }
    memset(result, 0, e->result_size);
}

static void set_history(const tg_ag_entry *e, tg_node *node, void *result)
{
    if (list_result(e)) {
        tg_tensor_list l = tg__ag_list_at(result, e->outputs[0].at);
        for (int64_t k = 0; (e->outputs[0].differentiable || fails_at_backward(e)) && k < l.len;
             k++)
            if (l.data[k] && tg__gen_differentiable(l.data[k]))
                tg_autograd_set_history(l.data[k], node, (int)k);
        return;
    }
    /* A node that fails at backward takes every output: output_differentiability is the
     * entry's, which it does not implement. */
    bool all = fails_at_backward(e);
    for (int i = 0; i < e->noutputs; i++) {
        tg_tensor *t = output_tensor(&e->outputs[i], result);
        if ((all || e->outputs[i].differentiable) && t && tg__gen_differentiable(t))
            tg_autograd_set_history(t, node, i);
    }
}

static void save_outputs(const tg_ag_entry *e, tg_node *node, void *result)
{
    for (int i = 0; i < e->nsaves; i++) {
        const tg_ag_save *s = &e->saves[i];
        if (s->output)
            save_one(s, node, tg__ag_field(result, e->outputs[s->from].at), s->from, NULL, NULL,
                     false);
    }
}

int tg__autograd_end(tg_ag_call *c, void *result)
{
    if (!c->begun) return -1;
    tg__autograd_below_end(c->prev);
    const tg_ag_entry *e = c->op->entry;
    int rc = call_failed(e, result) ? -1 : 0;
    if (rc == 0 && c->grad && list_result(e))
        rc = make_node(c, (int)tg__ag_list_at(result, e->outputs[0].at).len);
    if (rc == 0 && c->grad) set_history(e, c->node, result);
    if (rc == 0 && c->fw) rc = tg__fw_run(c, result);
    if (rc == 0 && c->grad && !fails_at_backward(e)) save_outputs(e, c->node, result);
    if (rc) release_result(e, result);
    tg_release(c->self0);
    tg_autograd_node_release(c->node);
    return rc;
}

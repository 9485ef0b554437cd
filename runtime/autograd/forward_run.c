/* Forward mode of one operator call (record.h, tg__fw_run): after the operator ran and its
 * outputs got their history, the outputs' tangents at every dual level where an input has
 * one. At level L, with L suspended (the formulas' operators see primal values and the
 * tangents of the other levels, which is what nests levels into higher derivatives) and the
 * caller's scope suspended:
 *
 *   - the frame's output fields hold aliases of the outputs (their history, not keeping them
 *     alive: the tangent's own history may save them), and an in-place op's self reads as it
 *     was before the op;
 *   - for each output, the terms whose tangents are present run, each reading the inputs'
 *     tangents it needs (zeros for an input without one; each read once per level), and their
 *     sum is attached to the output (tg__fw_set; in place for an in-place op's self);
 *   - what the level loaded is released and the frame restored.
 *
 * An entry without compiled terms fails when an output could carry a tangent. */
#include "autograd/autograd_private.h"
#include "autograd/formula_glue.h"
#include "autograd/record.h"

#include <string.h>

static const tg_ag_input *input_of(const tg_ag_entry *e, int arg)
{
    for (int i = 0; i < e->ninputs; i++)
        if (e->inputs[i].arg == arg) return &e->inputs[i];
    return NULL;
}

/* The operator's own arguments: what the frame held before the level swapped self. */
typedef struct level_ctx {
    const tg_ag_call *c;
    void *result;
    int level;
    tg_tensor *self; /* an in-place op's self (the frame holds its copy while terms run) */
} level_ctx;

static tg_tensor *arg_tensor(const level_ctx *x, const tg_ag_input *in)
{
    if (x->self && in->arg == 0) return x->self;
    return tg__ag_tensor_at(x->c->frame, in->at);
}

static bool has_tangent(const level_ctx *x, const tg_ag_input *in)
{
    if (in->list) {
        tg_tensor_list l = tg__ag_list_at(x->c->frame, in->at);
        return tg__fw_has_list(l.data, (int)l.len, x->level);
    }
    return tg__fw_has(arg_tensor(x, in), x->level);
}

/* Loads input `in`'s tangent into the frame, once. 0 or -1. */
static int load_tangent(const level_ctx *x, const tg_ag_input *in)
{
    void *slot = tg__ag_field(x->c->frame, in->tangent);
    if (in->list) {
        tg_tensor_list *t = slot;
        if (t->data) return 0;
        *t = tg__fw_tangents_or_zeros(*(tg_tensor_list *)tg__ag_field(x->c->frame, in->at),
                                      x->level);
        return t->data ? 0 : -1;
    }
    tg_tensor **t = slot, *v = arg_tensor(x, in);
    if (*t || !v) return 0;
    return (*t = tg__fw_tangent_or_zeros(v, x->level)) ? 0 : -1;
}

/* Whether term `t` runs, loading its tangents when it does; -1 when a load failed. */
static int term_ready(const level_ctx *x, const tg_fw_term *t)
{
    const tg_ag_entry *e = x->c->op->entry;
    bool run = t->tangents == 0;
    for (uint64_t bits = t->tangents; !run && bits; bits &= bits - 1)
        run = has_tangent(x, input_of(e, __builtin_ctzll(bits)));
    if (!run) return 0;
    for (uint64_t bits = t->tangents; bits; bits &= bits - 1)
        if (load_tangent(x, input_of(e, __builtin_ctzll(bits)))) return -1;
    return 1;
}

/* Runs the terms of output o from terms[*k] on; *k ends past them. 0 or -1. */
static int output_tangent(const level_ctx *x, int *k)
{
    const tg_ag_op *op = x->c->op;
    const tg_ag_entry *e = op->entry;
    const tg_fw_term *first = &e->terms[*k];
    const tg_ag_output *o = &e->outputs[first->output];
    int end = *k;
    while (end < e->nterms && e->terms[end].output == first->output) end++;
    *k = end;
    void *value = tg__ag_field(x->result, o->at);
    if (o->kind == TG_AG_OUT_LIST) { /* one term giving every element's tangent */
        int ready = term_ready(x, first);
        if (ready <= 0) return ready;
        return tg__fw_set_list(op->name, *(tg_tensor_list *)value, first->fn_list(x->c->frame),
                               x->level);
    }
    tg_tensor *out = *(tg_tensor **)value;
    if (!out || !tg__gen_differentiable(out)) return 0;
    tg_tensor *sum = NULL;
    for (const tg_fw_term *t = first; t < &e->terms[end]; t++) {
        int ready = term_ready(x, t);
        if (ready < 0 || (ready && !(sum = tg__fw_add_term(sum, t->fn(x->c->frame), t->negate)))) {
            tg_release(sum);
            return -1;
        }
    }
    if (!sum) return 0;
    return op->inplace ? tg__fw_set_inplace(op->name, out, sum, x->level)
                       : tg__fw_set(op->name, out, sum, x->level);
}

/* The frame's output fields as the formulas read them at this level. 0 or -1. */
static int alias_outputs(const level_ctx *x)
{
    const tg_ag_entry *e = x->c->op->entry;
    for (int i = 0; i < e->noutputs; i++) {
        const tg_ag_output *o = &e->outputs[i];
        if (o->alias == TG_AG_NONE) continue;
        void *value = tg__ag_field(x->result, o->at), *slot = tg__ag_field(x->c->frame, o->alias);
        if (o->kind != TG_AG_OUT_TENSOR) {
            memcpy(slot, value, o->size);
            continue;
        }
        tg_tensor *r = *(tg_tensor **)value;
        if (r && !(*(tg_tensor **)slot = tg__fw_output_alias(r, x->level))) return -1;
    }
    return 0;
}

/* Releases what the level loaded into the frame and clears it for the next level. */
static void clear_level(const level_ctx *x)
{
    const tg_ag_entry *e = x->c->op->entry;
    void *frame = x->c->frame;
    for (int i = 0; i < e->ninputs; i++) {
        void *slot = tg__ag_field(frame, e->inputs[i].tangent);
        if (e->inputs[i].list) {
            tg_tensor_list_release(*(tg_tensor_list *)slot);
            *(tg_tensor_list *)slot = (tg_tensor_list){ NULL, 0 };
        } else {
            tg_release(*(tg_tensor **)slot);
            *(tg_tensor **)slot = NULL;
        }
    }
    for (int i = 0; i < e->noutputs; i++) {
        const tg_ag_output *o = &e->outputs[i];
        if (o->alias == TG_AG_NONE || o->kind != TG_AG_OUT_TENSOR) continue;
        tg_release(*(tg_tensor **)tg__ag_field(frame, o->alias));
        *(tg_tensor **)tg__ag_field(frame, o->alias) = NULL;
    }
}

static int run_level(const tg_ag_call *c, void *result, int level)
{
    level_ctx x = { c, result, level, NULL };
    tg_tensor **self_slot = NULL;
    if (c->self0) { /* the formulas read self as it was (PyTorch's original_self) */
        self_slot = tg__ag_field(c->frame, tg__ag_self_input(c->op)->at);
        x.self = *self_slot;
        *self_slot = c->self0;
    }
    int rc = alias_outputs(&x);
    for (int k = 0; rc == 0 && k < c->op->entry->nterms;) rc = output_tangent(&x, &k);
    clear_level(&x);
    if (self_slot) *self_slot = x.self;
    return rc;
}

static bool any_level(const tg_ag_entry *e, void *frame, int level)
{
    for (int i = 0; i < e->ninputs; i++) {
        tg_tensor *one;
        int n;
        tg_tensor *const *ts = tg__ag_input_tensors(frame, &e->inputs[i], &one, &n);
        if (tg__fw_any_level(ts, n, level)) return true;
    }
    return false;
}

/* Whether a differentiable output could carry a tangent (is floating). */
static bool floating_output(const tg_ag_entry *e, void *result)
{
    for (int i = 0; i < e->noutputs; i++) {
        const tg_ag_output *o = &e->outputs[i];
        void *v = tg__ag_field(result, o->at);
        if (!o->differentiable) continue;
        if (o->kind == TG_AG_OUT_TENSOR && *(tg_tensor **)v &&
            tg__gen_differentiable(*(tg_tensor **)v))
            return true;
        if (o->kind == TG_AG_OUT_LIST && ((tg_tensor_list *)v)->len > 0 &&
            tg__gen_differentiable(((tg_tensor_list *)v)->data[0]))
            return true;
    }
    return false;
}

int tg__fw_run(const tg_ag_call *c, void *result)
{
    const tg_ag_entry *e = c->op->entry;
    if (!e->terms) {
        if (!floating_output(e, result)) return 0; /* argmax: no tangent to give */
        return e->fw_why ? tg__fw_not_compiled(c->op->row, e->fw_why)
                         : tg__fw_not_implemented(c->op->row);
    }
    for (int level = 0; level < tg__fw_levels(); level++) {
        if (!any_level(e, c->frame, level)) continue;
        int fs = tg__fw_suspend(level), sc = tg_scope_suspend();
        int rc = run_level(c, result, level);
        tg_scope_resume(sc);
        tg__fw_resume(fs);
        if (rc) return -1;
    }
    return 0;
}

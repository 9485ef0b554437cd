/* Saved tensors (PyTorch's SavedVariable): what a node keeps of its inputs and outputs for
 * its formulas, with the version check that catches in-place edits made after saving, and
 * the "graph already freed" check. Also saved int lists and detached aliases.
 *
 * An input is saved as a reference to the tensor itself (it keeps its own history). An
 * output is saved as a detached alias: same storage and version counter, no grad_fn, and no
 * reference to the output tensor, because output -> grad_fn -> node -> saved would be a
 * reference cycle. On unpack an output gets its owner back as grad_fn (only when grad mode
 * is on, i.e. create_graph: otherwise history is irrelevant and the alias is returned). */
#include "autograd/autograd_private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char ERR_BACKWARD_TWICE[] =
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.";

/* ------------------------------------------------------------------ aliases */

tg_tensor *tg__detached_alias(tg_tensor *t)
{
    return tg__make_view(t, t->sizes, t->strides, t->ndim, t->storage_offset);
}

/* A detached alias of output t that does not keep t alive (see the top comment). */
static tg_tensor *output_alias(tg_tensor *t)
{
    tg_tensor *v = tg__alias_without_owner(t);
    if (v) return v;
    /* Rare (an out= tensor later used in place): save a copy. In-place edits of t after
     * this are then not detected, but the gradient uses the values as they were. */
    if (t->device.type == TG_CPU) {
        tg_tensor *c = tg__empty("autograd", t->sizes, t->ndim, t->dtype, t->device);
        if (c && tg__copy_into("autograd", c, t) != 0) {
            tg_release(c);
            return NULL;
        }
        return c;
    }
    return tg__detached_alias(t); /* keeps t alive: leaks the graph */
}

char *tg__tensor_type_str(char *buf, size_t cap, const tg_tensor *t)
{
    char shape[256];
    snprintf(buf, cap, "[torch.%s%sTensor %s]", t->device.type == TG_CUDA ? "cuda." : "",
             tg__dtype_torch_name(t->dtype), tg__shape_str(shape, sizeof shape, t->sizes, t->ndim));
    return buf;
}

/* ------------------------------------------------------------------ saved tensors */

void tg_autograd_save(tg_saved *s, tg_tensor *t, bool is_output, int output_nr)
{
    /* An output without history (not differentiable: integral indices, or recorded with
     * grad mode off) cannot be in a cycle with this node and must not get the node as its
     * grad_fn on unpack: it is kept like an input. */
    is_output = is_output && t && t->requires_grad;
    *s = (tg_saved){ NULL, 0, output_nr, is_output, t != NULL };
    if (!t) return;
    s->data = is_output ? output_alias(t) : tg_retain(t);
    /* Forward over reverse: the alias keeps the output's tangents (detached: no cycle). */
    if (is_output && s->data && t->fw_dual && tg__fw_copy_detached(s->data, t)) {
        tg_release(s->data);
        s->data = NULL;
    }
    /* On OOM data stays NULL while defined is set: unpack then reports an error. A copy made
     * by output_alias has its own counter: compare against that one. */
    if (s->data) s->version = tg__version(s->data);
}

static void version_error(const tg_saved *s, tg_node *owner)
{
    char ty[320], where[160] = "";
    const tg_tensor *t = s->data;
    if (s->is_output && owner) {
        snprintf(where, sizeof where, ", which is output %d of %s,", (int)s->output_nr,
                 owner->vt->name);
    } else if (t->autograd && t->autograd->grad_fn) {
        snprintf(where, sizeof where, ", which is output %d of %s,", (int)t->autograd->output_nr,
                 t->autograd->grad_fn->vt->name);
    }
    tg__error(NULL,
              "one of the variables needed for gradient computation has been modified "
              "by an inplace operation: %s%s is at version %lld; expected version %lld "
              "instead. Hint: the tensor was modified in place after it was saved for "
              "backward; clone() it before the in-place operation, or use the "
              "out-of-place operation.",
              tg__tensor_type_str(ty, sizeof ty, t), where, (long long)tg__version(t),
              (long long)s->version);
}

tg_tensor *tg_autograd_unpack(tg_saved *s, tg_node *owner)
{
    if (!s->defined) return NULL;
    if (!s->data || (owner && owner->saved_released))
        return tg__error(NULL, "%s", ERR_BACKWARD_TWICE);
    if (tg__version(s->data) != s->version) {
        version_error(s, owner);
        return NULL;
    }
    if (!s->is_output || !owner || !tg__grad_enabled_tls) return tg_retain(s->data);
    /* create_graph: the output with its history, so the backward is differentiable. */
    tg_tensor *v = output_alias(s->data);
    if (v && s->data->fw_dual && tg__fw_copy_detached(v, s->data)) {
        tg_release(v);
        return NULL;
    }
    if (!v) return NULL;
    struct tg_autograd_meta *m = tg__autograd_meta_get(v);
    if (!m) {
        tg_release(v);
        return NULL;
    }
    m->grad_fn = tg_autograd_node_retain(owner);
    m->output_nr = s->output_nr;
    v->requires_grad = true;
    return v;
}

void tg_autograd_saved_release(tg_saved *s)
{
    tg_tensor *t = s->data;
    s->data = NULL;
    tg_release(t);
}

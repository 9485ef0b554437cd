/* Private to runtime/autograd (meta.c, node.c, saved.c, engine.c): the tensor's autograd
 * meta, hook lists and the AccumulateGrad node. Generated code sees only autograd.h. */
#ifndef TG_AUTOGRAD_AUTOGRAD_PRIVATE_H
#define TG_AUTOGRAD_AUTOGRAD_PRIVATE_H

#include "autograd/autograd.h"
#include "autograd/record.h"
#include "core/rt_private.h"

/* One hook, in a singly linked list kept in registration order. On a node (pre_hooks) it
 * applies to the gradient of the node's forward output `input_nr`; in a leaf's meta it
 * applies to the leaf's gradient. A retain_grad entry has fn == NULL and `retain` set: the
 * tensor whose .grad receives the gradient. It is a weak pointer: the tensor removes its
 * entry when it dies (meta.c's autograd_meta_free). */
struct tg_hook_list {
    struct tg_hook_list *next;
    tg_grad_hook fn;
    void *ctx;
    tg_tensor *retain;
    int32_t input_nr;
};

/* What autograd knows about one tensor; allocated on first need, freed with the tensor. */
struct tg_autograd_meta {
    tg_tensor *grad;  /* owned; .grad */
    tg_node *grad_fn; /* owned; NULL for leaves */
    /* Weak: the leaf's AccumulateGrad node, which holds a reference to the leaf. The node
     * clears this pointer (under `lock`) when it dies; readers upgrade it under `lock`. */
    tg_node *grad_accumulator;
    struct tg_hook_list *hooks; /* owned; leaf tensor hooks (non-leaf ones live on grad_fn) */
    struct tg__fw_grads *fw;    /* owned; forward-mode tangents per level (forward.c) */
    int32_t output_nr;          /* which output of grad_fn this tensor is */
    bool retains_grad;          /* has a retain entry on grad_fn's pre_hooks */
    uint8_t lock;               /* spinlock over grad, grad_accumulator and hooks */
};

/* The spin-wait hint of the CPU (x86 pause, Arm yield; nothing elsewhere). */
static inline void tg__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || defined(__arm__)
    __asm__ volatile("yield");
#endif
}

static inline void tg__meta_lock(struct tg_autograd_meta *m)
{
    while (__atomic_exchange_n(&m->lock, 1, __ATOMIC_ACQUIRE))
        while (__atomic_load_n(&m->lock, __ATOMIC_RELAXED)) tg__cpu_relax();
}
static inline void tg__meta_unlock(struct tg_autograd_meta *m)
{
    __atomic_store_n(&m->lock, 0, __ATOMIC_RELEASE);
}

/* forward.c: frees a meta's tangents. */
void tg__fw_grads_free(struct tg__fw_grads *g);
/* Gives dst (a saved output's detached alias) src's live tangents as detached aliases, with
 * theirs, recursively: a backward formula reading the output sees its tangents (forward over
 * reverse), and the saved value holds no history that could lead back to its node. 0 or -1. */
int tg__fw_copy_detached(tg_tensor *dst, const tg_tensor *src);

/* meta.c: t's meta, created (zeroed) when missing; NULL + error on OOM. */
struct tg_autograd_meta *tg__autograd_meta_get(tg_tensor *t);
/* meta.c: the accumulated .grad of a meta (a new reference or NULL). */
tg_tensor *tg__autograd_meta_grad(const struct tg_autograd_meta *m);

/* node.c */
/* Small blocks for nodes and metas from a per-thread cache (malloc when it is empty);
 * NULL on OOM (no error recorded). */
void *tg__ag_block_alloc(size_t nbytes);
void tg__ag_block_free(void *p);
/* The AccumulateGrad node of a leaf: holds the leaf; its apply accumulates into .grad. */
typedef struct tg__accumulate_node {
    tg_node base;
    tg_tensor *variable; /* owned */
} tg__accumulate_node;
extern const tg_node_vtable tg__accumulate_vtable;
/* engine.c: AccumulateGrad's apply (the engine's accumulation into .grad). */
int tg__accumulate_apply(tg_node *n, tg_tensor *const *grads, tg_tensor **out);
static inline bool tg__node_is_accumulate(const tg_node *n)
{
    return n->vt == &tg__accumulate_vtable;
}
/* A new reference to leaf t's AccumulateGrad node (made on first use); NULL + error on OOM. */
tg_node *tg__grad_accumulator(tg_tensor *t);
/* Frees a hook list. */
void tg__hook_list_free(struct tg_hook_list *h);
/* Appends a hook entry to *list; 0 or -1 + error. */
int tg__hook_list_append(struct tg_hook_list **list, tg_grad_hook fn, void *ctx, tg_tensor *retain,
                         int32_t input_nr);
/* Removes the retain_grad entry for t from *list, if present. */
void tg__hook_list_remove_retain(struct tg_hook_list **list, const tg_tensor *t);

/* saved.c: a detached alias of t (same storage and version counter, no history)
 * that does not keep t itself alive. */
tg_tensor *tg__detached_alias(tg_tensor *t);
/* "[torch.FloatTensor [3]]"-style description of t for messages. */
char *tg__tensor_type_str(char *buf, size_t cap, const tg_tensor *t);

/* record.c, forward_run.c, apply.c: a generated frame, node or result read at a byte offset of
 * its descriptor (record.h). */
static inline void *tg__ag_field(void *base, uint16_t off) { return (char *)base + off; }
static inline tg_tensor *tg__ag_tensor_at(void *base, uint16_t off)
{
    return *(tg_tensor **)tg__ag_field(base, off);
}
/* A Tensor[]?'s None (TG_NO_TENSORS) reads as the empty list: no edges, no tangents. */
static inline tg_tensor_list tg__ag_list_at(void *base, uint16_t off)
{
    tg_tensor_list l = *(tg_tensor_list *)tg__ag_field(base, off);
    return tg_is_none_tensors(l) ? (tg_tensor_list){ NULL, 0 } : l;
}
/* Input `in` of a frame as n tensors: a TensorList's elements, or the one Tensor (through
 * *one, which must outlive the use). */
static inline tg_tensor *const *tg__ag_input_tensors(void *frame, const tg_ag_input *in,
                                                     tg_tensor **one, int *n)
{
    if (in->list) {
        tg_tensor_list l = tg__ag_list_at(frame, in->at);
        *n = (int)l.len;
        return l.data;
    }
    *one = tg__ag_tensor_at(frame, in->at);
    *n = 1;
    return one;
}

#endif

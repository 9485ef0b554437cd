/* What the files of nn/ share and its users do not see: a module's registered entries. nn/
 * uses the library's public API only (tensorgen.h). */
#ifndef TG_NN_PRIVATE_H
#define TG_NN_PRIVATE_H

/* The public headers without the operators' umbrella (tg_ops.h, which changes with every new
 * operator): each file includes the generated ops/<op>.h of the operators it calls, so adding
 * an operator recompiles none of nn/ (make check-rebuild-cost). */
#include "tg_core.h"
#include "tg_io.h"
#include "tg_nn.h"

typedef enum tg__slot_kind {
    TG__SLOT_PARAMETER,
    TG__SLOT_BUFFER,          /* persistent: in the state dict */
    TG__SLOT_BUFFER_TRANSIENT /* register_buffer(..., persistent=False) */
} tg__slot_kind;

/* A registered tensor: its name in the module, and the field of the layer's struct that holds
 * it (one owned reference). */
struct tg__module_slot {
    char *name;
    tg_tensor **slot;
    tg__slot_kind kind;
};

struct tg__module_child {
    char *name;
    tg_module *module; /* owned */
};

/* A block whose operator results belong to the code in it, not to a scope the caller may have
 * open: nn/ keeps what it makes there (parameters, optimizer state) or releases it itself.
 * Grad mode is off inside (nothing made there is part of a graph). Do not leave the block
 * with return, break or goto. */
#define TG__NN_OWN                                               \
    for (int tg__own_tok = tg_scope_suspend(), tg__own_once = 1, \
             tg__own_grad = tg_set_grad_enabled(false);          \
         tg__own_once;                                           \
         tg__own_once = 0, tg_set_grad_enabled(tg__own_grad), tg_scope_resume(tg__own_tok))

/* A new CPU tensor (default dtype) of `shape`, uniform in [-bound, bound] or N(0, std) (the
 * layers' default initialisations), owned by the caller; NULL with an error. */
tg_tensor *tg__nn_uniform(tg_int_list shape, double bound);
tg_tensor *tg__nn_normal(tg_int_list shape, double std);
/* A new CPU tensor (default dtype) filled with value, owned by the caller. */
tg_tensor *tg__nn_full(tg_int_list shape, double value);

/* GPT's causal self-attention between its projections: qkv (B, T, 3E), q, k and v stacked,
 * -> (B, T, E), with heads heads (nn/layers/attention.c). In the caller's scope. */
tg_tensor *tg__nn_causal_heads(tg_tensor *qkv, int64_t heads, double dropout_p);

/* tg_module_apply from a given path (the recursion). */
int tg__nn_apply(tg_module *m, const char *path, tg_module_fn fn, void *ctx);

/* "a.b" joined, or "b" when prefix is empty: a malloc'd string, NULL on out of memory. */
char *tg__nn_join(const char *prefix, const char *name);

/* Shape "[2, 3]" into buf (for messages). */
const char *tg__nn_shape_str(const tg_tensor *t, char *buf, size_t cap);

#endif

/* runtime/autograd: what a generated autograd kernel hands to the runtime. The protocol of
 * recording (reverse mode: the node, its edges, what it saves, the outputs' history) and of
 * forward mode (the tangents of the outputs at every dual level) is written once, in
 * record.c and forward.c; per derivative entry tgen emits only data: a frame struct holding
 * the call's arguments (and, for forward mode, their tangents and outputs), and a constant
 * tg_ag_entry saying where in the frame each piece is (docs/generated-code.md, "Autograd").
 * Installed with autograd.h: an operator library's generated code uses it too.
 *
 * A recording kernel is then
 *
 *     tg_tensor *tg__autograd_kernel_mul(tg_tensor *self, tg_tensor *other)
 *     {
 *         static const tg_ag_op tg_op = { "mul", "mul.Tensor", &MulBackward0_entry, false };
 *         tg__frame_MulBackward0 tg_x = { .self = self, .other = other };
 *         tg_ag_call tg_c;
 *         tg_tensor *tg_r = tg__autograd_begin(&tg_c, &tg_op, &tg_x) ? NULL : tg_mul(self, other);
 *         tg__autograd_end(&tg_c, &tg_r);   // tg_mul ran below autograd
 *         return tg_r;
 *     }
 *
 * Offsets are offsetof() of the frame, the node or the kernel's result; TG_AG_NONE where
 * there is none. */
#ifndef TG_AUTOGRAD_RECORD_H
#define TG_AUTOGRAD_RECORD_H

#include "autograd/autograd.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TG_AG_NONE 0xffffu

/* A Tensor, Tensor? or Tensor[] / Tensor?[] argument of the frame. */
typedef struct tg_ag_input {
    uint16_t at;      /* the argument: tg_tensor * (NULL for None) or tg_tensor_list */
    uint16_t tangent; /* its tangent field, of the same type */
    uint8_t arg;      /* its position in the schema (the bit of tg_fw_term.tangents) */
    bool list;
} tg_ag_input;

/* One value a node keeps, from the frame (before the op runs) or from an output (after). The
 * same table serves an entry's functional and in-place operators. */
typedef enum tg_ag_save_kind {
    TG_AG_SAVE_TENSOR,     /* tg_saved; an output is kept as a detached alias, and an in-place
                             * op's self as it was (a copy, recorded) */
    TG_AG_SAVE_DEFINED,    /* bool: the Tensor? is not None */
    TG_AG_SAVE_SIZES,      /* tg_saved_sizes */
    TG_AG_SAVE_DIM,        /* int64_t */
    TG_AG_SAVE_NUMEL,      /* int64_t */
    TG_AG_SAVE_DTYPE,      /* tg_dtype */
    TG_AG_SAVE_DEVICE,     /* tg_device */
    TG_AG_SAVE_VALUE,      /* `size` bytes of the argument as it is: a number, an optional */
    TG_AG_SAVE_INTS,       /* tg_int_list, copied after the node's struct */
    TG_AG_SAVE_TENSORS,    /* tg_tensor_list, a copy holding a reference to each element */
    TG_AG_SAVE_STR,        /* const char *, copied after the node's struct */
    TG_AG_SAVE_LIST_SIZES, /* tg_int_list, after the struct: each element's size along dim() */
} tg_ag_save_kind;

typedef struct tg_ag_save {
    uint8_t kind;                      /* tg_ag_save_kind */
    bool output;                       /* `from` is an output's index, else the frame's offset */
    uint16_t from;                     /* the value */
    uint16_t to;                       /* the node's field */
    uint16_t size;                     /* TG_AG_SAVE_VALUE */
    int64_t (*dim)(const void *frame); /* TG_AG_SAVE_LIST_SIZES: the dim, from the arguments */
} tg_ag_save;

typedef enum tg_ag_output_kind {
    TG_AG_OUT_TENSOR, /* tg_tensor * */
    TG_AG_OUT_LIST,   /* tg_tensor_list: the node gets one output per element */
    TG_AG_OUT_OTHER,  /* a number: no history, no tangent */
} tg_ag_output_kind;

typedef struct tg_ag_output {
    uint16_t at;         /* in the kernel's result (0 for a single Tensor or Tensor[]) */
    uint16_t alias;      /* the frame's field forward formulas read it from, or TG_AG_NONE */
    uint16_t size;       /* bytes of its C type (a number's, copied into the frame) */
    uint8_t kind;        /* tg_ag_output_kind */
    bool differentiable; /* output_differentiability */
} tg_ag_output;

/* A term of a forward formula (the formula split at its top-level + and -): the tangent of
 * output `output` is the sum of its terms that run; a term runs when one of the arguments
 * whose tangents it reads has one (it reads zeros for the others), or always when it reads
 * none. A Tensor[] output has one term, fn_list, giving every element's tangent. */
typedef struct tg_fw_term {
    uint8_t output;
    bool negate;
    uint64_t tangents; /* bit i: argument i's tangent */
    tg_tensor *(*fn)(void *frame);
    tg_tensor_list (*fn_list)(void *frame);
} tg_fw_term;

/* A derivative entry, as every operator recording it sees it. */
typedef struct tg_ag_entry {
    /* The node: its vtable and struct size. vt NULL: a node that fails at backward with the
     * derivative "not implemented" (an operator with no entry); `why` set: a node named
     * vt->name that fails saying why tgen generated none (an entry it cannot compile). Both
     * have an edge for every tensor argument and save nothing. */
    const tg_node_vtable *vt;
    size_t node_size;
    const char *why;
    const tg_ag_input *inputs; /* every tensor argument, in schema order */
    int ninputs;
    /* The next edges: inputs[edges[k]] for k < nedges, then, when list_edge >= 0, one per
     * element of inputs[list_edge]. */
    const uint8_t *edges;
    int nedges, list_edge;
    const tg_ag_save *saves; /* the inputs' in order, then the outputs' */
    int nsaves;
    const tg_ag_output *outputs;
    int noutputs;
    size_t result_size;      /* the kernel's result, zeroed when the call fails */
    const tg_fw_term *terms; /* forward mode; NULL: none compiled */
    int nterms;
    const char *fw_why; /* no term: why tgen compiled none (NULL: no `result:` formula) */
} tg_ag_entry;

/* An operator recording an entry: its own for a functional one, its functional sibling's for
 * an in-place one. */
typedef struct tg_ag_op {
    const char *name; /* "add_", in errors */
    const char *row;  /* "add_.Tensor", in "not implemented" errors */
    const tg_ag_entry *entry;
    bool inplace;
    /* An in-place op's `self`: its position in the schema, which is 0 but for an op with
     * positionals before self (torch_mlu's `f_(Tensor input, Tensor(a!) self, ...)`). */
    uint8_t self;
} tg_ag_op;

/* An in-place op's `self` among its entry's inputs, or NULL (not a plain tensor input). */
const tg_ag_input *tg__ag_self_input(const tg_ag_op *op);

/* One call's state between begin and end (on the kernel's stack). */
typedef struct tg_ag_call {
    const tg_ag_op *op;
    void *frame;
    tg_node *node;    /* recording (reverse mode) */
    tg_tensor *self0; /* an in-place op's self as it was, for forward formulas */
    tg_keyset prev;   /* the excluded keys to restore */
    bool grad, fw;    /* reverse mode records; some input has a tangent */
    bool begun;       /* begin succeeded: end has work to do */
} tg_ag_call;

/* Before the operator runs below autograd: checks, the node with its edges and what it saves
 * of the inputs; then excludes the autograd key. 0, or -1 with an error (nothing to undo). */
int tg__autograd_begin(tg_ag_call *c, const tg_ag_op *op, void *frame);
/* After: restores the keys; gives the outputs in *result (the kernel's return value) their
 * history, their tangents and the node what it saves of them. When the operator failed (every
 * output NULL) or this fails, *result is released and zeroed. 0 or -1; -1 at once, with
 * *result untouched, when begin failed (the kernel then never ran the operator). */
int tg__autograd_end(tg_ag_call *c, void *result);

/* forward.c: the outputs' tangents at every level where an input has one. 0 or -1. */
int tg__fw_run(const tg_ag_call *c, void *result);

/* ---- backward: a node's formulas (apply.c) ----
 * A generated node's type lists its formulas in file order; tg__autograd_apply runs each
 * whose edges need a gradient. A formula for one input gives that edge's gradient (ONE); one
 * for a Tensor[] input gives a gradient per element edge, from `edge` on (LIST); a joint
 * formula, or one that may give no gradient, fills out[] itself and returns a status
 * (STATUS); a `not_implemented("...")` formula fails with its message. */
typedef enum tg_ag_formula_kind {
    TG_AGF_ONE,
    TG_AGF_LIST,
    TG_AGF_STATUS,
    TG_AGF_NOT_IMPL,
} tg_ag_formula_kind;

typedef struct tg_ag_formula {
    uint8_t kind;     /* tg_ag_formula_kind */
    int16_t edge;     /* ONE: the edge it gives; LIST: the first element edge */
    uint64_t needs;   /* bit e: runs when edge e needs a gradient */
    int16_t from;     /* ... or when an edge from `from` on does (the elements of a Tensor[]); -1 */
    const char *what; /* LIST: the formula's keys; NOT_IMPL: its message */
    union {
        tg_tensor *(*one)(tg_node *n, tg_tensor *const *grads);
        tg_tensor_list (*list)(tg_node *n, tg_tensor *const *grads);
        int (*status)(tg_node *n, tg_tensor *const *grads, tg_tensor **out);
    } fn;
} tg_ag_formula;

/* A generated node's type: its vtable (apply tg__autograd_apply; release_saved
 * tg__autograd_release_saved, or NULL when it saves no tensor), its formulas and what it
 * saves (the entry's saves, whose tensors release_saved drops). */
typedef struct tg_ag_node_type {
    tg_node_vtable vt;
    const tg_ag_formula *formulas;
    int nformulas;
    const tg_ag_save *saves;
    int nsaves;
} tg_ag_node_type;

/* The apply and release_saved of a generated node (its vtable is a tg_ag_node_type's), and the
 * apply of a node that fails because tgen generated none (tg_ag_entry.why). */
void tg__autograd_release_saved(tg_node *n);
int tg__autograd_apply(tg_node *n, tg_tensor *const *grads, tg_tensor **out);
int tg__autograd_apply_not_generated(tg_node *n, tg_tensor *const *grads, tg_tensor **out);

#ifdef __cplusplus
}
#endif

#endif

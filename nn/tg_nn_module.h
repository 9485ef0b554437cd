/* tensorgen nn: modules, the parameter tree above the operators (PyTorch's torch.nn.Module).
 * Include <tensorgen.h> rather than this file.
 *
 * A module is a struct that starts with a tg_module, a type (its name, its size, its forward
 * function) and the tensors and submodules it registers by name. Writing a layer is a struct
 * and two functions:
 *
 *     typedef struct scale {
 *         tg_module base;          // first member: a scale* is a tg_module*
 *         tg_tensor *weight;       // (C): registered below, owned by the module
 *     } scale;
 *
 *     static tg_tensor *scale_forward(tg_module *m, tg_tensor *x)
 *     {
 *         return tg_mul(x, ((scale *)m)->weight);       // the caller's scope owns the result
 *     }
 *     static const tg_module_type scale_type = { .name = "Scale", .size = sizeof(scale),
 *                                                .forward = scale_forward };
 *
 *     tg_module *scale_new(int64_t c)
 *     {
 *         scale *s = tg_module_new(&scale_type);
 *         if (!s) return NULL;
 *         s->weight = tg_ones(TG_INTS(c));
 *         return tg_module_register_parameter(&s->base, "weight", &s->weight);  // NULL: freed
 *     }
 *
 * Ownership: a module owns the tensors in its registered slots (one reference each) and its
 * registered submodules; tg_module_free frees the whole tree. Functions that read a module
 * (tg_module_forward, the layers' forwards) return new references recorded in the caller's
 * scope, like any operator. A slot (tg_tensor **) stays where the layer's struct has it:
 * tg_module_to, loading a state dict and the optimizers replace or update what it holds, so a
 * forward function reads its tensors through its struct each time.
 *
 * Errors follow the library's rules: NULL or -1 with tg_last_error() naming the call
 * ("Linear: ..."), and nothing half-done (a failed tg_module_to leaves the module as it was). */
#ifndef TG_NN_MODULE_H
#define TG_NN_MODULE_H

#include "tg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_module tg_module;

/* What kind of module: its name (Python's class name: "Linear"), the size of its struct and its
 * forward function (NULL for containers without one, e.g. ModuleList). Optional: `describe`
 * writes PyTorch's extra_repr ("in_features=2, out_features=64, bias=True") for printing;
 * `fini` frees what the struct holds besides its registered tensors and submodules. */
typedef struct tg_module_type {
    const char *name;
    size_t size;
    tg_tensor *(*forward)(tg_module *m, tg_tensor *x);
    void (*describe)(const tg_module *m, char *buf, size_t cap);
    void (*fini)(tg_module *m);
} tg_module_type;

typedef struct tg__module_slot tg__module_slot;
typedef struct tg__module_child tg__module_child;

/* The head of every module's struct. Read it through the functions below. */
struct tg_module {
    const tg_module_type *type;
    bool training; /* tg_module_train / tg_module_eval */
    tg__module_slot *slots;
    int n_slots, cap_slots;
    tg__module_child *children;
    int n_children, cap_children;
};

/* A zeroed struct of type->size bytes whose head is set up (training mode), or NULL with an
 * error. Returned as void * so that `scale *s = tg_module_new(&scale_type)` needs no cast. */
void *tg_module_new(const tg_module_type *type);
/* Frees the module, its registered tensors (one reference each) and submodules. NULL: no-op. */
void tg_module_free(tg_module *m);

/* Registers *slot (a field of the layer's struct holding an owned reference) as parameter
 * `name`; the tensor is made to require grad. An absent parameter (bias=False) is simply not
 * registered: its field stays NULL. Returns m, or on error (*slot NULL because the call that
 * made it failed, a duplicate or invalid name) releases *slot, frees m and returns NULL, so
 * that a constructor can chain registrations and end with `return tg_module_register_...`. */
tg_module *tg_module_register_parameter(tg_module *m, const char *name, tg_tensor **slot);
/* The same for a buffer (running statistics): no grad; `persistent` buffers are in the state
 * dict (PyTorch's register_buffer(..., persistent=...)). */
tg_module *tg_module_register_buffer(tg_module *m, const char *name, tg_tensor **slot,
                                     bool persistent);
/* Registers `child` (owned by m from now on) under `name` ("0", "attn"). Returns m; on error
 * (child NULL: its constructor failed) frees m and returns NULL. */
tg_module *tg_module_register_module(tg_module *m, const char *name, tg_module *child);

/* The type's forward on x (a new reference recorded in the caller's scope), or NULL. */
tg_tensor *tg_module_forward(tg_module *m, tg_tensor *x);

/* ---- the tree ---- */
/* A named tensor of a module tree: its dotted name ("layer1.0.conv1.weight"), its slot, and
 * whether it is a buffer. */
typedef struct tg_named_tensor {
    const char *name;
    tg_tensor **slot;
    bool is_buffer;
} tg_named_tensor;
/* A list of them, owned by the caller: tg_named_tensors_free. */
typedef struct tg_named_tensors {
    tg_named_tensor *data;
    int64_t len;
} tg_named_tensors;
void tg_named_tensors_free(tg_named_tensors *l);

/* What a walk lists: parameters, buffers (all, or only the persistent ones) or both, in
 * PyTorch's order (a module's own parameters, then its buffers, then each submodule in order
 * of registration); a tensor held in two slots (tied weights) once unless .keep_duplicates. */
typedef struct tg_module_walk_opts {
    bool parameters;      /* default true */
    bool buffers;         /* default false */
    bool persistent_only; /* buffers: only those a state dict holds */
    bool keep_duplicates; /* list a tied tensor under each of its names */
    const char *prefix;   /* prepended with a dot: "model" gives "model.fc.weight" */
} tg_module_walk_opts;
int tg_module_named_tensors_fn(tg_module *m, tg_named_tensors *out, tg_module_walk_opts opts);
/* named_parameters(): tg_module_named_tensors(m, &l); named_buffers():
 * tg_module_named_tensors(m, &l, .parameters = false, .buffers = true). */
#define tg_module_named_tensors(m, out, ...) \
    tg_module_named_tensors_fn((m), (out), (tg_module_walk_opts){ .parameters = true, __VA_ARGS__ })

/* Submodules: the number registered directly, the i-th with its name; a submodule by dotted
 * path ("transformer.h.0.attn"; "" is m itself), or NULL with an error. */
int tg_module_num_children(const tg_module *m);
tg_module *tg_module_child(const tg_module *m, int i, const char **name);
tg_module *tg_module_get(tg_module *m, const char *path);
/* A parameter or buffer by dotted name (borrowed: valid while the module holds it), or NULL
 * with an error; absent (None) parameters are NULL without an error. */
tg_tensor *tg_module_get_tensor(tg_module *m, const char *name);
/* The slot of a parameter or buffer by dotted name, or NULL with an error. */
tg_tensor **tg_module_get_slot(tg_module *m, const char *name);
/* A module's type name ("Linear"). */
const char *tg_module_type_name(const tg_module *m);

/* ---- state of the tree ---- */
/* Training or evaluation mode for m and every submodule (Dropout, BatchNorm read it). */
void tg_module_train(tg_module *m, bool training);
#define tg_module_eval(m) tg_module_train((m), false)
/* Every parameter's .grad set to None (PyTorch's zero_grad(set_to_none=True)). */
void tg_module_zero_grad(tg_module *m);
/* requires_grad of every parameter (freezing: false). */
void tg_module_requires_grad_(tg_module *m, bool requires_grad);
/* The number of elements of the parameters (each tied tensor once); `trainable_only` counts
 * those that require grad. */
int64_t tg_module_num_parameters(tg_module *m, bool trainable_only);

/* Moves every parameter and buffer to `device` and converts the floating ones to `dtype`
 * (PyTorch's module.to(device, dtype): integer buffers keep their dtype); gradients move too.
 * Tied tensors stay tied. All or nothing: on an error (a device that does not exist) the module
 * is unchanged. 0 or -1. */
typedef struct tg_module_to_opts {
    tg_device device; /* TG_DEVICE_UNSET (the default): stay */
    tg_dtype dtype;   /* TG_DTYPE_NONE (the default): keep */
} tg_module_to_opts;
int tg_module_to_fn(tg_module *m, tg_module_to_opts opts);
#define tg_module_to(m, ...)                                                    \
    tg_module_to_fn((m), (tg_module_to_opts){ .device = { TG_DEVICE_NONE, -1 }, \
                                              .dtype = TG_DTYPE_NONE,           \
                                              __VA_ARGS__ })

/* Calls fn on every submodule and then on m (PyTorch's module.apply: children first), with
 * its dotted path; stops at the first non-zero return and returns it. Initialisers use it. */
typedef int (*tg_module_fn)(tg_module *m, const char *path, void *ctx);
int tg_module_apply(tg_module *m, tg_module_fn fn, void *ctx);

/* PyTorch's repr of the tree ("Sequential(\n  (0): Linear(in_features=2, ...") into a malloc'd
 * string the caller frees (layers without an extra description print their name). */
char *tg_module_to_string(tg_module *m);

#ifdef __cplusplus
}
#endif
#endif

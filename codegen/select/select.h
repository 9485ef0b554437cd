/* Selective builds (docs/generated-code.md, "Selective builds"): a list of operators, read from
 * a kernel-library file (ExecuTorch's form: `- op: add.out` with `kernels:`, `- func:` custom
 * operators with `kernels:`) or from a plain list of names, one per line; its closure over the
 * core spec (what the selected operators call); and the reduced model tgen generates from.
 *
 * Prefix tgk_ (kernel library / selection). Everything lives in the arena given, like the
 * model it refers to. */
#ifndef TGEN_SELECT_H
#define TGEN_SELECT_H

#include "spec/model.h"

/* One `kernels:` item: the kernel serving some dtypes and dim orders of an operator. */
typedef struct tgk_kernel {
    tgm_loc loc;        /* where kernel_name's text starts */
    const char *name;   /* "torch::executor::add_out", as written */
    const char *symbol; /* its C symbol by the rule: "torch__executor__add_out" (tgk_symbol) */
    bool any;           /* `arg_meta: null`: every dtype and dim order */
} tgk_kernel;

/* One entry of the list. */
typedef struct tgk_entry {
    tgm_loc loc;          /* where the operator's name starts */
    const char *name;     /* "add.out" (an `aten::` prefix dropped) */
    bool is_func;         /* declared with `- func:` (else `- op:` or a plain line) */
    const tgm_func *core; /* the core operator it selects; NULL for a custom operator */
    tgm_func *custom;     /* `- func:` of an operator the core spec lacks, parsed */
    tgk_kernel *kernels;
    int nkernels;
} tgk_entry;

typedef struct tgk_list {
    const char *path;
    bool yaml; /* the kernel-library form (a .yaml/.yml file), else a plain list */
    tgk_entry *entries;
    int n, cap;
    int nmeta;    /* kernels with an arg_meta mapping (dtype / dim-order specific) */
    int naliases; /* type_alias and dim_order_alias definitions */
    /* Native fields the form allows and tensorgen does not act on here (`tags`, `variants`,
     * `dispatch`, ...), each with its count: accepted as data, reported once. */
    const char *data_fields[12];
    int data_counts[12];
    int ndata;
} tgk_list;

/* Reads `path`: a kernel-library YAML file when its name ends in .yaml or .yml, else a plain
 * list (one operator name per line; blank lines and `#` comments skipped; `aten::` optional).
 * Reports malformed entries; returns the number of errors. Names are not resolved yet. */
int tgk_read(tgm_arena *a, const char *path, tgk_list *out);

/* Resolves each entry against the core model: an unknown core name is an error naming the
 * nearest overload; a `- func:` of a core name must have the core's schema; the custom
 * operators (`- func:` the core lacks) are validated per namespace. Returns the errors. */
int tgk_resolve(const tgm_model *core, tgk_list *l);

/* The C symbol of a qualified kernel name: each `::` becomes `__` (`torch::executor::add_out`
 * -> `torch__executor__add_out`). C++ names never contain `__`, so the rule is one-to-one. */
const char *tgk_symbol(tgm_arena *a, const char *qualified);

/* The closure of a selection over model m (validated): the selected core operators, and
 * everything they need, until nothing is added:
 *   - the entries the spec ties them to: structured delegate, functional sibling, the
 *     in-place entry an autogen'ed functional runs, the Tensor overload of a Scalar overload,
 *     and every entry sharing one of their written kernels (its symbol depends on them);
 *   - with derivatives: the operators their formulas call (and, as roots, the operators the
 *     autograd engine calls: zeros, sum, add, ...);
 *   - with `objects` (the output of `nm -o` over the candidate objects: the runtime's, always
 *     linked, and the kernels', linked when needed): the objects defining the kernels the
 *     selected entries register, transitively through their undefined symbols, like a linker
 *     resolving an archive; an undefined symbol that is an operator's public function
 *     (`tg_matmul`, `tg_sum_fn`: a composite kernel's call) selects that operator.
 * keep[i] (m->nfuncs of them) is set for each entry of the closure; *objs gets the objects to
 * link, in nm's order (NULL without `objects`). Returns the number of errors. */
typedef struct tgk_closure {
    bool *keep;
    int nkept;
    const char **objs;
    int nobjs;
    int nfrom_objects; /* operators only the objects' symbols brought in */
} tgk_closure;
int tgk_close(const tgm_model *m, const tgk_list *l, bool with_derivatives, const char *objects,
              tgk_closure *out);

/* A model holding only the entries keep[] marks (and the derivative entries of those), for
 * tge_emit_all. It shares m's records and arena. */
tgm_model tgk_reduced_model(const tgm_model *m, const bool *keep);

#endif

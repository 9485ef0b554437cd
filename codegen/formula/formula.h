/* Derivative formulas: from text to C.
 *
 *   formula_lex.c, formula_parse.c   text -> tgm_expr (model.h), syntax only; used both by
 *                                     `tgen --check` (which only counts what parses) and by
 *                                     the checker
 *   formula_check.c                  the checker's core: tgm_expr -> tgf_node, names resolved
 *                                     against the entry's schema, every node typed, errors
 *                                     pointing into the formula; it asks its plug-ins
 *                                     (formula_check.h, formula_plugins.h) for the rest:
 *   formula_forms.c                    the C++ forms of PyTorch's formulas, one row each with
 *                                       its typing and its C lowering
 *   formula_ops.c                      the operators, desugared into calls
 *   formula_resolve.c                  calls resolved against the spec's overloads and the
 *                                       autograd vocabulary
 *   formula_forward.c                  the names of forward-mode (`result:`) formulas, and
 *                                       checking them
 *   formula_names.c                  lookups: operators by name, which types a parameter accepts
 *   formula_vocab.c                  the autograd vocabulary (--autograd-functions): functions
 *                                     formulas call that are not operators
 *   formula_renames.c                the vocabulary's functions under the older names PyTorch
 *                                     gave them (1.5's index_select_backward, ...)
 *   formula_deriv.c                  whole entries: edges, what a node saves, node names
 *   formula_c.c                      tgf_node -> C statements (SSA temporaries, releases)
 *   emit_autograd.c                  node structs, apply functions, autograd kernels
 *
 * The formula language is documented in docs/generated-code.md ("Autograd") and
 * docs/autograd.md ("The formula language": the vocabulary, the C++ forms). */
#ifndef TGEN_FORMULA_H
#define TGEN_FORMULA_H

#include "api/api.h"
#include "spec/model.h"

/* ------------------------------------------------------------------ syntax (lex, parse) */

/* How deep a formula may nest (parentheses, calls, lists, operators, `?:`, unary chains):
 * the parser, checker and emitters recurse once per level, so an unbounded formula would
 * overflow the stack; deeper ones are a syntax error at the node that goes past it. */
#define TGF_MAX_DEPTH 256

typedef struct tgf_syntax_error {
    size_t offset; /* byte of the formula text the error points at */
    char msg[256];
} tgf_syntax_error;

typedef enum tgf_tok_kind {
    TGF_TOK_EOF,
    TGF_TOK_IDENT,
    TGF_TOK_INT,
    TGF_TOK_FLOAT,
    TGF_TOK_STR,
    TGF_TOK_PUNCT,
} tgf_tok_kind;

typedef struct tgf_token {
    tgf_tok_kind kind;
    size_t offset, len; /* in the formula text */
    int64_t i;          /* INT */
    double f;           /* FLOAT */
    const char *text;   /* IDENT: the identifier; STR: the decoded string; PUNCT: "==" */
} tgf_token;

typedef struct tgf_lexer {
    tgm_arena *arena;
    const char *src;
    size_t pos;
} tgf_lexer;

/* The next token; false with *err set on a character or literal the language does not have. */
bool tgf_lex(tgf_lexer *l, tgf_token *t, tgf_syntax_error *err);

/* Parses f->text into f->expr (arena nodes). Prints nothing: returns false with *err set, so
 * that `tgen --check` can count failures and the checker can report them with a location. */
bool tgf_parse_formula(tgm_arena *a, tgm_formula *f, tgf_syntax_error *err);
/* The position of byte `offset` of a formula's text in its file. */
tgm_loc tgf_loc(const tgm_formula *f, size_t offset);

/* ------------------------------------------------------------------ checked formulas */

typedef enum tgf_node_kind {
    TGF_LIT,      /* a literal: `c` is its C text (int, double, bool, string) */
    TGF_GRAD,     /* grads[index], borrowed */
    TGF_GRADS,    /* grads: every output's gradient as a Tensor[], borrowed */
    TGF_INPUT,    /* forward input `index` (schema argument index), a saved value */
    TGF_OUTPUT,   /* forward output `index`, a saved tensor */
    TGF_META,     /* `meta` of tensor args[0]; SIZE has the dim in args[1]; on a
                               * Tensor[] input (only size(d), an int[]) `index` is its
                               * tgf_deriv.list_sizes entry */
    TGF_CALL,     /* callee(args...), trailing defaulted parameters omitted */
    TGF_COP,      /* C operator `c` on scalars: args[0] (unary) or args[0..1] */
    TGF_COND,     /* args[0] ? args[1] : args[2], only the chosen branch runs */
    TGF_LIST,     /* {args...}: an int list or a tensor list (see type) */
    TGF_NOT_IMPL, /* not_implemented("reason"): `c` is the reason */
    TGF_HELPER,   /* a call of an autograd vocabulary function (callee, from the
                               * --autograd-functions file): C `tg__grad_<name>`, name in `c` */
    TGF_BUILTIN,  /* a C++ construct with built-in typing (formula_forms.c): a tensor
                               * method such as defined() or options(), an optional's value,
                               * std::get<index>, a template constructed, a constant; `c` names
                               * it, `form` says how formula_c.c compiles it (NULL: it does
                               * not). */
} tgf_node_kind;

/* Types of values that exist only inside formulas (C++ types without a schema type), after
 * the schema kinds. */
enum {
    TGF_KIND_OPTIONS = TGA_KIND_COUNT, /* TensorOptions: x.options(); passed for the dtype,
                                        * layout, device, pin_memory parameters at once */
    TGF_KIND_NONE,                     /* std::nullopt: any optional parameter takes it */
    TGF_KIND_LAMBDA,                   /* [](int64_t i){ ... }: only fmap's argument */
};

typedef enum tgf_meta {
    TGF_SIZES,
    TGF_SIZE,
    TGF_DIM,
    TGF_NUMEL,
    TGF_SCALAR_TYPE,
    TGF_DEVICE
} tgf_meta;

/* A C++ form of PyTorch's formulas: its typing and its C lowering (formula_forms.h). */
typedef struct tgf_form tgf_form;

typedef struct tgf_node {
    tgf_node_kind kind;
    /* The schema kind, a TGF_KIND_* value, or TGA_UNSUPPORTED for a value of a type without a
     * C mapping yet (bool[N] masks, Tensor?[], ...): such values make the formula "not yet
     * checkable" (tgf_derivs.unchecked) instead of an error. */
    tga_kind type; /* the value's type; TGA_UNSUPPORTED for a tuple (ntuple > 0) */
    int ntuple;    /* a call with several Tensor returns: how many */
    const tgm_expr *src;
    const char *c;
    int index;
    tgf_meta meta;
    const tga_op *callee;
    const tgf_form *form; /* TGF_BUILTIN: its form, or NULL */
    struct tgf_node **args;
    int nargs;
} tgf_node;

/* How a formula uses a forward input or output (bits), which decides what a node saves. */
enum {
    TGF_USE_TENSOR = 1 << 0, /* the tensor itself: tg_saved */
    TGF_USE_SIZES = 1 << 1,  /* only through sizes()/size(d): tg_saved_sizes */
    TGF_USE_DIM = 1 << 2,    /* dim(): int64_t */
    TGF_USE_NUMEL = 1 << 3,  /* numel(): int64_t */
    TGF_USE_DTYPE = 1 << 4,  /* scalar_type(): tg_dtype */
    TGF_USE_VALUE = 1 << 5,  /* a non-tensor argument, saved by value */
    TGF_USE_DEVICE = 1 << 6, /* device(): tg_device (gradients go back to the input's device) */
};

typedef struct tgf_formula {
    const tgm_formula *src;
    tgf_node *root; /* type Tensor, a tuple of nvars tensors, or TGF_NOT_IMPL */
    int *edges;     /* [src->nvars]: the next edge of each variable; -1 for the
                               * elements of a Tensor[] (see tgf_deriv.list_arg) */
} tgf_formula;

/* `xs.size(d)` of a Tensor[] input xs: each element's size along d, saved by value when the
 * op runs (d is an int literal or argument, so it is known then). */
typedef struct tgf_list_size {
    int arg;             /* the Tensor[] argument */
    const tgf_node *dim; /* literals, int arguments and C operators on them */
} tgf_list_size;

#define TGF_MAX_LIST_SIZES 8

/* A forward-mode (`result:`) formula, checked: the tangent of output `output` as a sum of
 * terms (the formula split at its top-level + and -; auto_element_wise and auto_linear
 * expanded), so that the generated code skips at run time a term whose tangents are all absent.
 * Each term is a Tensor (a Tensor[] for a Tensor[] output) and `tangents` lists the tensor
 * arguments whose tangent it reads (bit i: argument i; a term reading none always runs). */
typedef struct tgf_fw_term {
    tgf_node *root;
    bool negate;
    uint64_t tangents;
} tgf_fw_term;

typedef struct tgf_fw_formula {
    const tgm_formula *src;
    int output;
    tgf_fw_term *terms;
    int nterms;
    const char *limit; /* why tgen does not compile it (the kernel then reports forward AD as
                        * not implemented, with this reason); NULL when it does */
} tgf_fw_formula;

typedef struct tgf_deriv {
    const tgm_derivative *dv;
    const tga_op *op;      /* the entry's (functional) operator */
    const char *node_name; /* "AddBackward0" */
    tgf_formula *formulas;
    int nformulas;
    int nedges;
    int *edge_arg; /* [nedges]: the schema argument index of each next edge */
    int list_arg;  /* the Tensor[] argument with a formula (type Tensor[], one
                               * gradient per element) or not_implemented: its elements get
                               * the edges after the nedges fixed ones; -1 */
    tgf_list_size list_sizes[TGF_MAX_LIST_SIZES];
    int nlist_sizes;
    bool list_output;      /* the op returns one Tensor[]: a node output per element */
    unsigned *input_uses;  /* [op->nargs]: TGF_USE_* */
    unsigned *output_uses; /* [op->nrets] */
    bool *output_diff;     /* [op->nrets]: output_differentiability (Tensor returns only) */
    bool uses_grads;       /* some formula reads grad / grads[i] */
    /* PyTorch numbers the gradients of the differentiable outputs only: grads[k] (and `grad`,
     * k = 0) is the gradient of schema output diff_outputs[k], k < ndiff (docs/autograd.md). */
    int *diff_outputs;
    int ndiff;
    /* Why tgen generates no node for this entry (past the limits of generated nodes, a formula
     * not yet checkable or using a construct the C emitter does not compile): the operator's
     * autograd kernel records a node whose backward fails with this reason; NULL when the
     * entry compiles (docs/autograd.md, "What is compiled"). */
    const char *limit;
    tgf_fw_formula *fw; /* the forward formulas (tgf_check_forward), one per output key */
    int nfw;
} tgf_deriv;

typedef struct tgf_derivs {
    tgf_deriv *d;
    int n;
    const tgf_deriv **by_op; /* [ops->n]: the entry whose node an op records (functional and
                               * in-place ops), or NULL */
    int unchecked;   /* formulas without errors that pass or use a value of a type without a C
                    * mapping (counted, not errors: they become checkable with the type) */
    int skipped;     /* entries skipped because their own operator has no C view */
    int gen_limited; /* (not for_gen) entries past the limits of the nodes tgen generates:
                      * out= or mutable operators, non-tensor returns, gradients of Tensor[]
                      * arguments in joint formulas or of two Tensor[] arguments, Tensor[]
                      * arguments saved whole; their formulas are type-checked all the same */
    const struct tgf_vocab *vocab; /* the autograd vocabulary the formulas were checked with */
    int *renamed; /* [tgf_renames_count()]: calls resolved by each row of formula_renames.c */
} tgf_derivs;

/* Parses and type-checks every formula of the model against `ops`, names the nodes and works
 * out what each saves. Errors are `file:line:col: error:` into the formula; returns their
 * number. */
int tgf_check_all(const tgm_model *m, const tga_ops *ops, tgm_arena *a, bool for_gen,
                  tgf_derivs *out);

/* `tgen --check --strict`: builds the C view and checks every formula; returns the errors.
 * *unchecked, *skipped and *gen_limited (may be NULL) get tgf_derivs' counts. With for_gen
 * (`--check --gen-limits`) everything --gen would refuse is an error too (tgf_gen_limits). */
/* Type-checks the forward-mode (`result:`) formulas of the entries tgf_check_all checked
 * (formula_forward.c); *nformulas gets how many there are, ds->unchecked counts those not yet
 * checkable too. Returns the errors. */
int tgf_check_forward(tgf_derivs *ds, const tga_ops *ops, tgm_arena *a, int *nformulas);
/* The C function `fn` computing one term of a forward formula of d from the forward context
 * `n` (type ctx_type: every argument by its name, `<arg>_t` tangents, the outputs as `result`
 * or `result<i>`): `static tg_tensor *fn(ctx_type *n)` (tg_tensor_list for a Tensor[] term),
 * a new reference or NULL with an error; temporaries released on every path. */
const char *tgf_compile_forward(tgm_arena *a, const tgf_deriv *d, const tgf_node *root,
                                const char *fn, const char *ctx_type, const char *comment);

/* (tgf_check_model: *renamed, may be NULL, gets tgf_renames_note's text, in m->arena.) */
int tgf_check_model(const tgm_model *m, bool for_gen, int *unchecked, int *skipped,
                    int *gen_limited, const char **renamed);
/* What type-checks but --gen cannot generate yet: formulas using values of types without a C
 * mapping, and constructs the C emitter does not compile (tgf_c_unsupported). Reports each as
 * an error into the formula; returns their number. for_gen checking reports the limits of
 * generated nodes (tgf_derivs.gen_limited) itself. */
int tgf_gen_limits(const tgf_derivs *ds);
/* --gen: sets tgf_deriv.limit of every entry tgen cannot compile (checked without for_gen, so
 * that the limits of generated nodes are reasons rather than errors), so that its operators
 * record a node whose backward fails with the reason instead. */
void tgf_mark_limits(tgf_derivs *ds, tgm_arena *a);

/* ------------------------------------------------------------------ the autograd vocabulary */

/* The functions formulas may call besides operators (formula_vocab.c; docs/autograd.md):
 * entries of the --autograd-functions file, in the schema language, as tga_ops whose `cname`
 * is the C function (tg__grad_<name>). */
typedef struct tgf_vocab {
    tga_op *ops;
    int n;
    tgm_name_map *by_name; /* name (without overload) -> tga_op_group */
    const char *path;      /* the last file read; NULL when there is none */
} tgf_vocab;

/* Reads and checks the vocabulary files, in the order given: a later file's entries are tried
 * first and replace an earlier file's of the same `name.overload` (none: an empty vocabulary).
 * Errors are reported with file:line:col; returns their number. */
#define TGF_MAX_VOCAB_FILES 8
int tgf_vocab_load(tgm_arena *a, const char *const *paths, int npaths, tgf_vocab *out);
/* The entries named `name`, in file order; returns how many (up to max). */
int tgf_vocab_find(const tgf_vocab *v, const char *name, const tga_op **found, int max);
/* The C prototype of a vocabulary function: "tg_tensor *tg__grad_maybe_multiply(tg_tensor *t,
 * double s)"; NULL when one of its types has no C mapping yet. */
const char *tgf_vocab_prototype(tgm_arena *a, const tga_op *op);
bool tgf_vocab_prototype_ok(const tga_op *op); /* whether it has one */
/* Helpers under the names older PyTorch releases gave them (formula_renames.c): the row of
 * `old_name` (`at::` dropped), or -1; its new name; how many rows there are; and --check's note
 * of the rows used ("index_select_backward 7 (now value_selecting_reduction_backward)", NULL
 * when none was). */
int tgf_rename_find(const char *old_name);
const char *tgf_rename_target(int row);
int tgf_renames_count(void);
const char *tgf_renames_note(tgm_arena *a, const int *uses);

/* The vocabulary file tgen reads when --autograd-functions is not given: autograd_functions.yaml
 * beside the derivatives file, else the project's specs/autograd_functions.yaml found from
 * tgen's own path (argv0: <dir>/../specs/), else none (NULL). */
const char *tgf_vocab_default_path(tgm_arena *a, const char *derivatives, const char *argv0);

/* formula_names.c: operator lookup and the node naming rule. */
/* "AddBackward" + N: CamelCase of the base name (leading underscores dropped). */
const char *tgf_node_base_name(tgm_arena *a, const char *base);
/* The functional, non-out ops named `name` ("add", or "add_" for the in-place ones), in spec
 * order; `at::` is dropped. Returns how many (up to max). */
int tgf_find_ops(const tga_ops *ops, const char *name, const tga_op **found, int max);
/* Whether a value of type `have` can be passed for a parameter of kind `want`. */
bool tgf_accepts(tga_kind want, tga_kind have);
/* "Tensor", "int[]", "Tensor?" ...: a kind as the schema language writes it, for messages. */
const char *tgf_kind_text(tga_kind k);
/* The kind of an optional's value (Tensor? -> Tensor, int[]? -> int[] ...); TGA_UNSUPPORTED
 * when k is no optional that formulas take apart (*opt, opt.value()). */
tga_kind tgf_optional_value(tga_kind k);
/* The optional of values of kind k (std::optional<T>(x)), the inverse; TGA_UNSUPPORTED. */
tga_kind tgf_optional_of(tga_kind k);
/* Whether parameter p is one of the TensorOptions parameters after a dtype (layout, device,
 * pin_memory): C++'s ATen API takes one TensorOptions (x.options()) for all four. */
bool tgf_options_part(const tga_arg *p);
/* C++'s implicit TensorOptions(MemoryFormat): `zeros_like(t, at::MemoryFormat::Preserve)` passes
 * a MemoryFormat where op's parameter pi starts the group that stands for a TensorOptions
 * (dtype, layout, device, pin_memory), which keeps its defaults, and the memory format goes to
 * the `MemoryFormat? memory_format` parameter right after the group (ATen merges the two so).
 * Returns that parameter's index, or -1 when arg is not such a MemoryFormat. */
int tgf_memory_format_options(const tga_op *op, int pi, const tgf_node *arg);
/* Whether n is `{}`, an empty list, which C++ also takes for a Tensor (undefined) or any
 * optional (std::nullopt) parameter: `_convolution_double_backward(ggI, ggW, {}, ...)`. */
bool tgf_empty_braces(const tgf_node *n);

/* ------------------------------------------------------------------ C (formula_c.c) */

/* The first node of a checked formula that the C emitter cannot compile yet (a C++ form without
 * a lowering for it, values of formula-only or unmapped types), or NULL. */
const tgf_node *tgf_c_unsupported(const tgf_node *n);

/* The C function `fn` computing formula f of d from the node `n` (type `node_type`) and the
 * output gradients: `static tg_tensor *fn(node_type *n, tg_tensor *const *grads)` returning a
 * new reference or NULL with an error recorded (for a Tensor[] argument `static tg_tensor_list
 * fn(...)` returning an owned list, or { NULL, 0 }); for a joint formula `static int fn(node_type *n,
 * tg_tensor *const *grads, tg_tensor **out)` filling out[e] for each needed edge e, returning
 * 0 or -1. Every temporary is released on every path. */
const char *tgf_compile(tgm_arena *a, const tgf_deriv *d, const tgf_formula *f, const char *fn,
                        const char *node_type);
/* Whether formula f (one Tensor input) may give an undefined tensor (Tensor?: `c ? g : Tensor()`,
 * an optional input): it then compiles like a joint formula, `static int fn(n, grads, out)`
 * storing out[edge] (NULL for "no gradient") and returning 0 or -1. */
bool tgf_formula_may_be_undefined(const tgf_formula *f);
/* The C name of a node field: "self", "self_sizes", "result", "other_scalar_type" (use is one
 * TGF_USE_* bit; 0 gives the bare name, e.g. for "<name>_defined"). */
const char *tgf_saved_field(tgm_arena *a, const tgf_deriv *d, bool output, int index, unsigned use);
/* The node field of list_sizes[k]: "tensors_size_0". */
const char *tgf_list_size_field(tgm_arena *a, const tgf_deriv *d, int k);

#endif

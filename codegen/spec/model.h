/* The data model of tgen: what the spec files say, parsed once and validated once.
 *
 * Every record carries the file position it came from so that later stages (validation,
 * emission, formula checking) can report `file:line:col: error: ...` without re-parsing.
 * Records are immutable after validate(); all memory is owned by one arena (tg_arena) that is
 * freed as a whole, so no record has its own destructor. Target-language (C) types do not
 * appear here: api_*.c derives C names and signatures from these records. */
#ifndef TGEN_MODEL_H
#define TGEN_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/arena.h" /* tgm_arena: every allocation of the model lives there */
#include "base/diag.h"  /* tgm_loc, tgm_error, tgm_note */

/* Where a YAML scalar's text came from. A quoted or folded scalar's text differs from the bytes
 * in the file (quotes, escapes, joined lines), so `loc.col + offset` is wrong for it; a span
 * lets tgm_text_loc map an offset in the text back to the file. NULL for plain one-line
 * scalars and synthesised text, where `loc.col + offset` is exact. */
typedef struct tgm_span tgm_span;
/* The position of byte `offset` of `text`, whose first character is at `start`. */
tgm_loc tgm_text_loc(tgm_loc start, const tgm_span *span, const char *text, size_t offset);

/* ---- types of the schema language ---- */
typedef enum tgm_base {
    TGM_TENSOR,
    TGM_INT,
    TGM_SYMINT,
    TGM_FLOAT,
    TGM_BOOL,
    TGM_STR,
    TGM_SCALAR,
    TGM_SCALAR_TYPE,
    TGM_LAYOUT,
    TGM_DEVICE,
    TGM_MEMORY_FORMAT,
    TGM_GENERATOR,
    TGM_DIMNAME,
    TGM_STORAGE,
    TGM_STREAM,
    TGM_QSCHEME,
    TGM_CONST_QUANTIZER_PTR,
    TGM_SYMFLOAT,
    TGM_DEVICE_INDEX, /* a device's index (PyTorch's int8 DeviceIndex) */
    TGM_SYMBOOL,
    TGM_BASE_COUNT
} tgm_base;

/* An alias annotation: `(a)`, `(a!)`, `(a -> *)`, `(b!)`. */
typedef struct tgm_alias {
    const char *set;   /* "a"; NULL when the type has no annotation */
    bool is_write;     /* the `!` */
    const char *after; /* "*" in `(a -> *)`, else NULL */
} tgm_alias;

/* `Tensor(a!)?[]` etc. Optional and list wrap the base in the order the schema writes them:
 * `Tensor?[]` is a list of optional tensors (elem_optional), `int[]?` an optional list. */
typedef struct tgm_type {
    tgm_base base;
    bool elem_optional; /* `T?` (for non-lists), or `T?[]` (optional elements of a list) */
    bool is_list;       /* `T[]` or `T[N]` */
    int list_size;      /* N of `T[N]`, 0 when absent */
    bool list_optional; /* `T[]?` / `T[N]?` */
    tgm_alias alias;    /* on Tensor only */
} tgm_type;

/* A default value as written in the schema, kept as text plus its kind. */
typedef enum tgm_default_kind {
    TGM_DEF_NONE_GIVEN, /* no default */
    TGM_DEF_NONE,       /* None */
    TGM_DEF_INT,
    TGM_DEF_FLOAT,
    TGM_DEF_BOOL,
    TGM_DEF_STR,
    TGM_DEF_INT_LIST, /* [0, 1] or a bare int used for an int[N] (broadcast) */
    TGM_DEF_FLOAT_LIST,
    TGM_DEF_BOOL_LIST, /* [True, False] */
    TGM_DEF_IDENT,     /* a named constant such as Mean, long, contiguous_format */
} tgm_default_kind;

typedef struct tgm_default {
    tgm_default_kind kind;
    const char *text;     /* exactly as written, e.g. "1", "[0,1]", "Mean", "'none'" */
    int64_t i;            /* TGM_DEF_INT / TGM_DEF_BOOL (0/1) */
    double f;             /* TGM_DEF_FLOAT */
    const int64_t *ints;  /* TGM_DEF_INT_LIST / BOOL_LIST values */
    const double *floats; /* TGM_DEF_FLOAT_LIST values */
    const char *str;      /* TGM_DEF_STR: the string without quotes, escapes decoded;
                               * TGM_DEF_IDENT: the identifier (same as text) */
    int n;                /* list length */
} tgm_default;

typedef struct tgm_arg {
    tgm_loc loc;
    const char *name;
    tgm_type type;
    tgm_default def;
    bool kwarg_only; /* after `*` */
    bool is_out;     /* kwarg-only, write-aliased Tensor: an out= argument */
} tgm_arg;

typedef struct tgm_return {
    tgm_loc loc;
    const char *name; /* NULL when unnamed */
    tgm_type type;
} tgm_return;

/* A parsed schema: `add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor`. */
typedef struct tgm_schema {
    tgm_loc loc;          /* position of the schema string's first character */
    const char *text;     /* the schema string exactly as written */
    const char *ns;       /* "myops" for `myops::nms(...)`; NULL when the name has no namespace */
    const char *base;     /* "add" (without trailing underscore, without dunders kept: see below) */
    const char *overload; /* "Tensor"; "" when none */
    const char *full_name; /* "add.Tensor" or "add" */
    bool inplace;          /* the name ends in `_` (add_), dunder names excluded */
    bool dunder;           /* __iand__ etc.; base keeps the full dunder name */
    tgm_arg *args;
    int nargs;
    tgm_return *rets;
    int nrets;
    const tgm_span *span; /* for tgm_text_loc; NULL when text is plain or synthesised */
} tgm_schema;

/* Schema kind, derived once by validate(). */
typedef enum tgm_kind {
    TGM_KIND_FUNCTIONAL,
    TGM_KIND_INPLACE,
    TGM_KIND_OUT,
    TGM_KIND_MUTABLE,
    TGM_KIND_SCRATCH
} tgm_kind;

/* Dispatch keys. The first five are compiled (the three Composite keys as one kernel serving
 * every backend); any other key is kept as written (TGM_KEY_OTHER, `key_name`), reported by
 * --check's summary and given no code. */
typedef enum tgm_key {
    TGM_KEY_CPU,
    TGM_KEY_CUDA,
    TGM_KEY_COMPOSITE_IMPLICIT,
    TGM_KEY_COMPOSITE_EXPLICIT,
    TGM_KEY_COMPOSITE_EXPLICIT_NONFUNCTIONAL,
    TGM_KEY_OTHER /* a key tensorgen does not compile: SparseCPU, Meta, MPS, ... */
} tgm_key;

typedef struct tgm_dispatch_entry {
    tgm_loc loc;
    tgm_key key;
    const char *key_name; /* as written, one key (comma-joined keys are split) */
    const char *kernel;   /* the kernel name, e.g. "add_out" */
    /* The kernel's C symbol given whole, not made from `kernel` by the prefix rule: a kernel
     * library's kernel_name under its own rule (select/select.h, tgk_symbol). Else NULL. */
    const char *symbol;
} tgm_dispatch_entry;

/* One line of `ufunc_inner_loop:` (`Generic: add (AllAndComplex, BFloat16, Half)`). tensorgen
 * extends the name (docs/spec.md, "Pointwise operators"): `family.name` names the header the
 * function is in, and an operator with several results lists one name per result. */
typedef struct tgm_ufunc_loop {
    tgm_loc loc;
    const char *key;    /* Generic, ScalarOnly, CPUScalar, CPUVector, CUDAFunctor, ... */
    const char *name;   /* "add", "unary.exp": the first name as written */
    const char **names; /* every name ("activation_lm.log_sigmoid", ...), nnames of them */
    int nnames;
    const char *dtypes; /* "AllAndComplex, BFloat16, Half" (text inside the parentheses) */
    tgm_loc dtypes_loc; /* where that text starts */
} tgm_ufunc_loop;

/* One `- func:` entry of native_functions.yaml. */
typedef struct tgm_func {
    tgm_loc loc; /* position of the `- func:` line */
    tgm_schema schema;
    tgm_kind kind;
    bool variant_function, variant_method; /* `variants:`; default: function only */
    tgm_dispatch_entry *dispatch;
    int ndispatch;
    bool has_dispatch;               /* a `dispatch:` field was present; the parser adds no default
                               * entry (no dispatch and no delegate means CompositeImplicit-
                               * Autograd with the C name as kernel: the emitters' rule) */
    bool structured;                 /* structured: True (an out= kernel that others delegate to) */
    const char *structured_delegate; /* "add.out" or NULL */
    tgm_loc structured_delegate_loc;
    const char *structured_inherits;
    const char **autogen;
    int nautogen; /* "add.Scalar_out", ... */
    tgm_loc autogen_loc;
    const tgm_loc *autogen_locs; /* where each name of `autogen:` is (nautogen of them) */
    const char **tags;
    const tgm_loc *tag_locs; /* where each of the ntags tags is */
    int ntags;
    const char *c_name; /* tensorgen extension `c_name:` overriding the C function name */
    const char *scalar_overload_of; /* tensorgen extension: "eq.Tensor", the overload whose
                                         * Tensor arguments this one takes as Scalars; its kernel
                                         * is generated (docs/spec.md) */
    tgm_loc scalar_overload_of_loc;
    const char *doc; /* tensorgen extension `doc:` one-paragraph description */
    bool manual_cpp_binding;
    /* Fields PyTorch uses that tgen keeps but does not act on (yet). */
    const char *python_module; /* nn, linalg, special, fft, sparse, nested or NULL */
    const char *device_check;  /* NoCheck / ExactSame, NULL when absent */
    bool device_guard;         /* default true */
    const char **cpp_no_default_args;
    int ncpp_no_default_args;
    tgm_ufunc_loop *ufunc_inner_loop;
    int nufunc_inner_loop;
    const char *ufunc_meta; /* tensorgen extension `ufunc_meta:` the iteration builder of a
                             * pointwise operator (docs/spec.md); NULL: the default */
    tgm_loc ufunc_meta_loc;
    /* Filled by validate(): the entries this one is tied to. */
    struct tgm_func *delegate;        /* target of structured_delegate */
    struct tgm_func *functional;      /* for inplace/out variants: the functional sibling */
    struct tgm_func *tensor_overload; /* the target of scalar_overload_of */
    bool is_autogen;               /* synthesised from another entry's `autogen:` (see autogen.c):
                               * no dispatch, function variant only, schema.text canonical,
                               * loc = the name inside `autogen:` */
    struct tgm_func *autogen_from; /* the entry whose autogen list produced this one */
    bool invalid; /* validate() reported an error on this entry alone: nothing is derived from
                   * it (autogen), since its schema may lack what derivation relies on */
    /* --base: the base's operator this entry restates with the same schema (a backend's
     * `official:` entry naming PyTorch's): not the file's own operator (spec/base.c). */
    const struct tgm_func *base;
} tgm_func;

/* ---- formula expressions (codegen/formula_parse.c) ----
 * The syntax tree of one derivative formula, as written: no names are resolved here (that is
 * formula_check.c's job, against the schemas). Every node records the bytes of the formula
 * text it spans, so that any later stage can point an error at it with tgm_text_loc. */
typedef enum tgm_expr_kind {
    TGM_EXPR_INT,    /* 2, 0x10: `i` */
    TGM_EXPR_FLOAT,  /* 0.5, 1e-5: `f` */
    TGM_EXPR_BOOL,   /* true/false (also True/False): `b` */
    TGM_EXPR_STR,    /* "floor": `str` (escapes decoded) */
    TGM_EXPR_NAME,   /* grad, self, result, at::zeros (qualified names keep `::`) */
    TGM_EXPR_CALL,   /* name(args...) */
    TGM_EXPR_METHOD, /* args[0].name(args[1...]) */
    TGM_EXPR_INDEX,  /* args[0][args[1]] */
    TGM_EXPR_LIST,   /* {args...} */
    TGM_EXPR_UNARY,  /* op args[0] */
    TGM_EXPR_BINARY, /* args[0] op args[1] */
    TGM_EXPR_COND,   /* args[0] ? args[1] : args[2] */
    /* C++ forms of PyTorch's formulas (docs/autograd.md): */
    TGM_EXPR_GET,  /* std::get<i>(args[0]) */
    TGM_EXPR_CTOR, /* name<targs>(args...): std::tuple<Tensor, Tensor>(), std::vector<int64_t>(n, 0),
                      * std::optional<Tensor>(t) (a class template constructed) */
    TGM_EXPR_LAMBDA, /* [](str name){ return args[0]; }: one parameter `name` of type `str` */
} tgm_expr_kind;

typedef enum tgm_expr_op {
    TGM_EOP_NONE,
    TGM_EOP_ADD,
    TGM_EOP_SUB,
    TGM_EOP_MUL,
    TGM_EOP_DIV,
    TGM_EOP_EQ,
    TGM_EOP_NE,
    TGM_EOP_LT,
    TGM_EOP_LE,
    TGM_EOP_GT,
    TGM_EOP_GE,
    TGM_EOP_AND,
    TGM_EOP_OR,
    TGM_EOP_NEG,
    TGM_EOP_PLUS,
    TGM_EOP_NOT,
    TGM_EOP_DEREF,  /* *opt: the value of an optional */
    TGM_EOP_BITAND, /* a & b (element-wise on bool tensors) */
    TGM_EOP_BITOR,  /* a | b */
} tgm_expr_op;

typedef struct tgm_expr {
    tgm_expr_kind kind;
    tgm_expr_op op;     /* UNARY / BINARY */
    size_t offset, len; /* the node's bytes in the formula text */
    size_t name_offset; /* NAME / CALL / METHOD: where `name` starts */
    const char *name;   /* NAME / CALL / METHOD */
    int64_t i;
    double f;
    bool b;
    const char *str;
    struct tgm_expr **args;
    int nargs;
    const char **targs; /* GET / CTOR: the template arguments as written ("0"; "Tensor") */
    int ntargs;
    bool arrow; /* METHOD called through `->` (a member of an optional: bias->sizes()) */
    int height; /* nodes on the longest path down to a leaf (1 for a leaf); the parser keeps it
                 * at most TGF_MAX_DEPTH, so the later stages may recurse on the tree */
} tgm_expr;

/* ---- derivatives.yaml ---- */
typedef struct tgm_formula {
    tgm_loc loc;      /* position of the formula text's first character */
    const char *vars; /* the key as written: "self", "self, other", "result" */
    const char **var_names;
    int nvars;            /* split and trimmed */
    tgm_loc vars_loc;     /* position of the key (`self, other:`) */
    const char *text;     /* the formula, as written */
    tgm_expr *expr;       /* parsed formula; NULL until tgf_parse_formula succeeds */
    const tgm_span *span; /* for tgm_text_loc(loc, span, text, offset) */
} tgm_formula;

typedef struct tgm_derivative {
    tgm_loc loc;           /* position of `- name:` */
    const char *name_text; /* the schema as written under `name:` */
    tgm_loc name_loc;
    tgm_schema schema; /* parsed */
    tgm_func *func;    /* the matching native function (set by validate) */
    tgm_formula *formulas;
    int nformulas; /* per differentiable input / joint key */
    tgm_formula *result_formulas;
    int nresult; /* `result:` forward-mode formulas (type-checked by --check --strict only) */
    const char **non_differentiable;
    int nnondiff; /* inputs whose formula is `non_differentiable` */
    bool *output_differentiability;
    int noutput_diff;
    /* PyTorch allows a C++ condition instead of True/False (`["!dtype || ..."]`): its text,
     * or NULL for a plain bool; same length as output_differentiability (those entries: true). */
    const char **output_differentiability_cond;
    tgm_loc output_differentiability_loc;
    const char *dispatch_note; /* derivatives `dispatch:`: the formulas above are its `Default:`
                                 * ones; this names the other keys ("AutogradNestedTensor") */
} tgm_derivative;

/* The whole model: both files. */
/* What tgen was asked to choose from the files and what it read without compiling it, for
 * --check's summary (spec/parse_sections.c, spec/namespaces.c, spec/data_fields.c). */
typedef struct tgm_reading {
    const char *torch_version;    /* --torch-version: the PyTorch version a sectioned file's
                                * entries are chosen for; NULL: each file's newest */
    const char *only_ns;          /* --only-namespace: the namespace whose entries are taken from a
                                * file that mixes several; NULL: none (one namespace a file) */
    const char *version_used;     /* the version chosen (the last sectioned file's) */
    bool versioned;               /* a file read had `all_version:` */
    int version_skipped;          /* entries whose versions exclude version_used */
    int restated;                 /* `symint:` / `autograd:` entries restating a definition */
    int ns_skipped;               /* entries of other namespaces than only_ns */
    const char *base;             /* --base: the spec the file extends; NULL: none */
    int base_restated;            /* entries restating an operator of the base (tgm_func.base) */
    const char *ns_skipped_names; /* "aten 4, et_copy 2" */
    int *data_fields;             /* per field of data_fields.c's table: entries that have it */
} tgm_reading;

typedef struct tgm_model {
    tgm_arena *arena;
    /* The operator library generated (`--namespace`): its operators' namespace and the prefix
     * of its C names; NULL for tensorgen's own spec (namespace aten, prefix tg). */
    const char *ns;
    tgm_func **funcs;
    int nfuncs; /* in file order; autogen'ed entries appended */
    /* An operator library's view of tensorgen's own operators (`--import`, the interface file
     * tgen writes for tensorgen, tensorgen_api.yaml): formulas may call them, nothing is
     * generated for them, and their C names are fixed (`c_name:`). NULL for tensorgen's own
     * spec. */
    tgm_func **imports;
    int nimports;
    /* --base: m->imports are the operators of the spec the checked file extends (PyTorch's
     * native_functions.yaml for a backend's file; spec/base.c), not tensorgen's: formulas may
     * call them and entries may restate them, but they are not the file's. */
    bool imports_base;
    tgm_derivative **derivs;
    int nderivs;
    struct tgm_name_map *func_index; /* full_name -> func; built by tgm_validate */
    /* The runtime's file-scope `tg_` identifiers without the prefix ("item", "_version") ->
     * the tgm_loc of their declaration; NULL without --runtime (runtime_names.c). Operator C
     * names avoid them. */
    struct tgm_name_map *runtime_names;
    /* tags.yaml's tags -> the tgm_loc of their definition; NULL without a tags file, when any
     * tag is accepted. */
    struct tgm_name_map *tags;
    /* The autograd vocabulary files the formula checker reads (formula.h, tgf_vocab), in the
     * order given (a later file's entries override an earlier one's); none: no vocabulary. */
    const char *const *autograd_functions;
    int nautograd_functions;
    tgm_reading reading; /* what the readers chose, skipped or took as data */
} tgm_model;

/* Parsing: returns the number of errors reported (0 on success). On error the model may be
 * partially filled and must not be emitted. */
int tgm_parse_native_functions(tgm_model *m, const char *path);
int tgm_parse_derivatives(tgm_model *m, const char *path);
/* tensorgen's operator interface file (tensorgen_api.yaml) into m->imports: entries with
 * `func:`, `variants:` and `c_name:` (required). */
int tgm_parse_imports(tgm_model *m, const char *path);
/* --base (spec/base.c): the spec the file extends into m->imports (m->imports_base), read
 * before the file; then, once the file is read, each of its entries naming a base operator
 * must restate it with the same schema (tgm_func.base), else an error at the entry. */
int tgm_parse_base(tgm_model *m, const char *path);
int tgm_match_base(tgm_model *m);
/* The autograd vocabulary file (spec/parse_vocab.c): its entries' schemas, checked (none writes
 * an argument, is in place or returns nothing; no name twice), as an arena array in *out. */
int tgm_parse_vocab(tgm_arena *a, const char *path, tgm_func ***out, int *n);
/* tags.yaml (PyTorch's list of the tags entries may carry): fills m->tags. */
int tgm_parse_tags(tgm_model *m, const char *path);
/* Reads the names the runtime's headers in `dir` declare into m->runtime_names. Returns the
 * number of errors (an unreadable directory or file). */
int tgm_read_runtime_names(tgm_model *m, const char *dir);
/* Parse one schema string. `loc` is the position of its first character; columns of errors
 * inside the string are offset from it. Returns 0 on success. */
int tgm_parse_schema(tgm_arena *a, const char *text, tgm_loc loc, tgm_schema *out);
/* Cross-entry validation: kinds, duplicate overloads, delegate/autogen targets, derivative
 * names with no matching schema, variants consistency. Returns the number of errors. */
int tgm_validate(tgm_model *m);

/* --check's summary lines for m->reading: the fields read as data, the entries of other
 * versions or namespaces skipped, the restating entries (nothing when there are none). */
void tgm_print_reading(const tgm_model *m);

tgm_func *tgm_find_func(const tgm_model *m, const char *full_name); /* NULL when absent */
/* What an unknown operator name probably meant (spec/suggest.c): the overloads of the models
 * added are the candidates; tgm_suggest_overload gives the nearest overload, or NULL when none
 * is near. */
typedef struct tgm_suggestions tgm_suggestions;
tgm_suggestions *tgm_suggestions_new(tgm_arena *a);
void tgm_suggestions_add(tgm_suggestions *s, const tgm_model *m);
const char *tgm_suggest_overload(const tgm_suggestions *s, const char *name);
/* Whether `ns` can name an operator library: it is a C prefix too, so lower case, no trailing
 * `_` (ns__ops is the table), and neither tensorgen's `aten` nor `tg` (namespaces.c). */
bool tgm_valid_namespace(const char *ns);
/* The schema in canonical form (`add.out(Tensor self, *, Scalar alpha=1, Tensor(a!) out) ->
 * Tensor(a!)`); synthesised (autogen) schemas get their `text` from this. */
char *tgm_schema_format(tgm_arena *a, const tgm_schema *s);
const char *tgm_base_name(tgm_base b); /* "Tensor", "int", ... as written in schemas */
/* Whether a return carries alias set `set` (`Tensor(a!)` returned by `-> Tensor(a!)`): the
 * written arguments of an in-place entry that its functional variant need not add as results. */
bool tgm_schema_returns_alias(const tgm_schema *s, const char *set);
/* The index of the argument named `name`, or -1. */
int tgm_schema_arg_index(const tgm_schema *s, const char *name);
/* The index of `self`, the positional argument of that name, as torchgen finds it (it need
 * not be first: torch_mlu's `f_(Tensor input, Tensor(a!) self, ...)` has a pre-self
 * positional), or -1. An in-place entry writes and returns it. */
int tgm_schema_self_index(const tgm_schema *s);
/* The output a derivatives.yaml name stands for: `result` (one output), `result0`, `result1`,
 * ... (several), or a return's own name; -1 when none. */
int tgm_schema_output_index(const tgm_schema *s, const char *name);

#endif

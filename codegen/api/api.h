/* The C view of the model: names, types and kernel assignments of every operator, derived
 * from the model by pure functions (api_names.c, api_types.c, api_ops.c) and shared by the
 * emitters. docs/generated-code.md is the contract these functions implement. */
#ifndef TGEN_API_H
#define TGEN_API_H

#include "spec/model.h"
/* The schema type table, shared with the runtime (pure data, no declarations). */
#include "../../runtime/dispatch/schema_types.h"

/* ------------------------------------------------------------------ names (api_names.c) */

/* The prefix of a library's C names: "tg" for tensorgen's own spec, the namespace of an
 * operator library generated with --namespace ("myops": myops_nms, myops__cpu_nms, MYOPS_OP_NMS,
 * myops_ops.h; docs/extending.md). */
const char *tga_prefix(const tgm_model *m);
/* The operator's C name without the prefix: `c_name:` or the naming rule ("add_scalar"). */
const char *tga_cname(tgm_arena *a, const tgm_func *f);
/* Every operator's C name (names[i] for m->funcs[i]): the rule's short name, moved to a
 * longer one where it clashes with another operator's or the runtime's (docs/c-api.md). */
void tga_assign_cnames(tgm_arena *a, const tgm_model *m, const char **names);
/* The operator's name in error messages: the schema name without its overload ("add_"), with
 * its library's namespace ("myops::nms"). */
const char *tga_opname(tgm_arena *a, const tgm_func *f);
/* "TG_OP_ADD_SCALAR" (prefix "tg"). */
const char *tga_enum_name(tgm_arena *a, const char *prefix, const char *cname);
/* A schema identifier usable as a C identifier: C keywords get a trailing underscore. */
const char *tga_ident(tgm_arena *a, const char *name);
/* The symbol of a kernel named `kernel` under a dispatch key ("tg__cpu_add_out" with prefix
 * "tg"); NULL for a key the project does not compile. */
const char *tga_kernel_symbol(tgm_arena *a, const char *prefix, tgm_key key, const char *kernel);
/* `at::native::foo` -> "foo", `legacy::cpu::foo` -> "legacy_cpu_foo" (docs/spec.md). */
const char *tga_kernel_c_name(tgm_arena *a, const char *kernel);
/* "cpu", "cuda", "composite": the symbol prefix of a key. */
const char *tga_key_prefix(tgm_key key);
/* The result struct of several returns: "tg_values_indices", or "tg_tensorsN" when unnamed
 * (prefix "tg"); results other than Tensor add their type to the name (see api_names.c). */
const char *tga_result_struct_name(tgm_arena *a, const char *prefix, const tgm_schema *s);

/* ------------------------------------------------------------------ types (api_types.c) */

/* Every schema type an emitted operator may use, after optional/list wrapping: TGA_TENSOR,
 * TGA_OPT_INT, ..., one per row of the type table the runtime shares with tgen (compiled in:
 * runtime/dispatch/schema_types.h, TG_SCHEMA_KINDS), in its order. */
typedef enum tga_kind {
    TGA_UNSUPPORTED,
#define TGA__KIND(kind, ...) TGA_##kind,
    TG_SCHEMA_KINDS(TGA__KIND)
#undef TGA__KIND
        TGA_KIND_COUNT
} tga_kind;

/* A kind's row of the type table (see schema_types.h for what each field means). */
typedef struct tga_kind_info {
    const char *spellings; /* "int SymInt DeviceIndex" */
    const char *ctype;     /* "int64_t" */
    const char *suffix;    /* "int": tg__box_int, tg__unbox_int, ... */
    const char *form;      /* "value", "opt_same", "written", ... */
    const char *tag;       /* "TG_IV_INT" */
    const char *none;      /* "TG_NONE_INT", "TG_DTYPE_NONE", "" */
    const char *some;      /* "{ true, %s }", "%s", "" */
    const char *error;     /* a result's error value, "" when it cannot be a result */
} tga_kind_info;
const tga_kind_info *tga_kind_row(tga_kind k); /* NULL for TGA_UNSUPPORTED */
/* The member of tg_ivalue's union that holds the kind's tag ("i", "ints"). */
const char *tga_kind_member(tga_kind k);
/* The kind's first spelling, for messages ("int", "Scalar?", "Tensor?[]"). */
const char *tga_kind_text(tgm_arena *a, tga_kind k);
/* An optional kind (its form is opt_*): None is a value of it (its `none`). */
bool tga_kind_is_optional(tga_kind k);
/* A kind an operator may return (its row gives an error value). */
bool tga_kind_is_result(tga_kind k);

tga_kind tga_type_kind(const tgm_type *t);
/* The C type: "tg_tensor *", "tg_int_list", ... (NULL for TGA_UNSUPPORTED). */
const char *tga_ctype(tga_kind k);
/* A declaration "tg_tensor *self" / "int64_t dim" (pointer stars hug the name). */
const char *tga_cdecl(tgm_arena *a, tga_kind k, const char *name);
/* The suffix of the boxed-value helpers generated code calls for a kind: `tg__unbox_<suffix>`
 * reads one argument from the stack, `tg__box_<suffix>` pushes one, `tg__push_<suffix>` pushes
 * a result (runtime/dispatch/op_glue.h and the generated tg_boxing.h). */
const char *tga_box_suffix(tga_kind k);
/* The schema type as written, for messages: "Tensor?[]", "int[2]". */
const char *tga_type_text(tgm_arena *a, const tgm_type *t);
/* The initializer of a schema default for an argument of kind k, for an options struct
 * field; NULL (with *why set) when the default cannot be expressed. A non-empty int list
 * default points at the static array `list_storage`, whose values ("0, 1") go to
 * *list_values (NULL otherwise). */
const char *tga_default_expr(tgm_arena *a, tga_kind k, const tgm_type *t, const tgm_default *d,
                             const char *list_storage, const char **list_values, const char **why);
/* "#define TG_REDUCTION_MEAN 1 ..." : the constants that int defaults name (`reduction=Mean`). */
const char *tga_int_constants(tgm_arena *a);
bool tga_kind_is_tensor(tga_kind k); /* Tensor, Tensor?, Tensor[], Tensor?[], Tensor[]?: keys */
/* The element type of a list kind's static default array ("int64_t", "double", "bool"), NULL
 * for a kind whose defaults need no array. */
const char *tga_list_elem_ctype(tga_kind k);
/* An out= argument (kwarg-only, write-aliased Tensor). */
bool tga_is_out_arg(const tgm_arg *a);

/* ------------------------------------------------------------------ operators (api_ops.c) */

typedef struct tga_arg {
    const tgm_arg *arg;
    const char *name; /* C identifier */
    tga_kind kind;
    const char *default_expr;   /* initializer of its options field; NULL without a default */
    const char *default_array;  /* static storage of a non-empty list default, or NULL; its
                                 * elements are tga_list_elem_ctype(kind) */
    const char *default_values; /* its values, "0, 1" */
} tga_arg;

typedef struct tga_ret {
    const char *name; /* field name in a result struct */
    tga_kind kind;    /* TGA_TENSOR, TGA_TENSOR_LIST, TGA_INT, TGA_DOUBLE, TGA_BOOL, TGA_DTYPE,
                       * TGA_QSCHEME; TGA_INT_LIST alone */
} tga_ret;

/* Key-set slots of a kernel in its operator's row (bit k = tg_dispatch_key k). */
enum { TGA_SLOT_CPU = 1 << 0, TGA_SLOT_CUDA = 1 << 1, TGA_SLOT_AUTOGRAD = 1 << 8 };

typedef enum tga_origin {
    TGA_KERNEL_WRITTEN,    /* named in dispatch: (or the implicit composite rule) */
    TGA_KERNEL_STRUCTURED, /* glue: functional / in-place entry of a structured kernel */
    TGA_KERNEL_AUTOGEN,    /* glue: autogen'ed out= entry calling the functional kernel */
    TGA_KERNEL_SCALAR,     /* glue: a `scalar_overload_of:` entry wrapping its Scalars and
                                * calling its Tensor overload's public function */
    TGA_KERNEL_AUTOGRAD,   /* generated autograd kernel (tg_autograd.c), see tga_autograd */
    TGA_KERNEL_FUNCTIONAL, /* glue: an autogen'ed functional entry clones the arguments its
                                * in-place / mutable entry writes and calls that entry's kernel
                                * on the clones */
    TGA_KERNEL_MISSING,    /* generated stub for a backend the entry has no kernel for: it
                                * fails with "'op' is not implemented for CPU (reason)" */
} tga_origin;

/* What an operator's generated autograd kernel does (api_autograd.c; docs/generated-code.md,
 * "Autograd"). Only with a derivatives file; ops that get none keep whatever their written
 * kernels put in the autograd slot (CompositeImplicitAutograd) or leave it empty. */
typedef enum tga_autograd {
    TGA_AUTOGRAD_NONE,
    TGA_AUTOGRAD_RECORD,   /* has a derivative entry (its own, or its functional sibling's
                                * for an in-place op): records that node */
    TGA_AUTOGRAD_OUT,      /* out=: refuses arguments that require grad */
    TGA_AUTOGRAD_NOT_IMPL, /* differentiable-looking, no formula: records a node whose
                                * backward fails naming the operator */
} tga_autograd;

typedef struct tga_kernel {
    const char *symbol; /* "tg__cpu_add_out", "tg__structured_cpu_add" */
    tgm_key key;        /* the dispatch key it was written for */
    int slots;          /* TGA_SLOT_* where the row holds it */
    bool cuda_only;     /* compiled only with TG_WITH_CUDA */
    tga_origin origin;
    const char *target;    /* glue: the kernel it calls */
    const char *call_args; /* glue: the arguments it passes to `target`; a missing kernel's
                            * stub: why it is missing */
    tgm_loc loc;
} tga_kernel;

typedef struct tga_op tga_op;
struct tga_op {
    const tgm_func *f;
    int index;              /* position in the op enum */
    const char *prefix;     /* its library's prefix: "tg", "myops" */
    const char *cname;      /* "add" */
    const char *opname;     /* "add" (error messages), "myops::nms" */
    const char *row_name;   /* its row's name: "add.Tensor", "myops::nms" */
    const char *enum_name;  /* "TG_OP_ADD" */
    const char *fn_name;    /* the C function: "tg_add_fn" with defaults, else "tg_add" */
    const char *opts_name;  /* "tg_add_opts"; NULL without defaulted arguments */
    const char *kfn_type;   /* kernel pointer typedef: "tg__kfn_add" */
    const char *boxed_name; /* boxed caller: "tg__boxed_add" */
    tga_arg *args;
    int nargs;
    int ndefaulted;
    tga_ret *rets;
    int nrets;              /* 0 for `-> ()`: the functions return an int status (0 or -1) */
    const char *ret_ctype;  /* "tg_tensor *", "tg_values_indices", "int64_t", "int" for `()` */
    const char *ret_struct; /* the result struct's name when nrets > 1, else NULL */
    const char *ksig;       /* the kernel type without names, for consistency checks */
    tga_kernel *kernels;
    int nkernels;
    const tga_op *delegate;        /* structured_delegate target */
    const tga_op *functional;      /* autogen: the functional entry whose kernels it wraps */
    const tga_op *mutating;        /* autogen'ed functional entry: the in-place / mutable entry
                                    * whose kernels it runs on clones */
    const tga_op *tensor_overload; /* scalar_overload_of: the overload its glue calls */
    tga_autograd autograd;         /* its generated autograd kernel, if any */
    const tgm_derivative *deriv;   /* TGA_AUTOGRAD_RECORD: the entry whose node it records */
};

/* The ops sharing one base name (`add` for add.Tensor, add_.Tensor, add.out...), in model
 * order: the formula checker's overload candidates. */
typedef struct tga_op_group {
    const tga_op **ops;
    int n;
} tga_op_group;

typedef struct tga_ops {
    tga_op *ops;
    int n;
    const char *prefix;    /* the library's: tga_prefix */
    tgm_name_map *by_base; /* schema base name (without an in-place `_`) -> tga_op_group */
    tgm_name_map *by_name; /* full name (`add.out`) -> tga_op; names are unique once validated */
    /* An operator library's view of tensorgen's operators (m->imports), which formulas may
     * call where the library has no operator of the same base name; with --base, the
     * operators of the base (m->imports_base), which formulas may call beside the file's own
     * of the same base name. NULL for tensorgen's own spec. */
    const struct tga_ops *imports;
    bool is_base; /* these are a base's operators (--base), not tensorgen's (--import) */
} tga_ops;

/* Builds the C view of every operator of the model, in model order, and of its imports.
 * Reports unsupported types, name collisions, missing kernels and bad delegates through
 * tgm_error; returns the number of errors (the view is complete enough to keep going either
 * way). */
int tga_build_ops(const tgm_model *m, tgm_arena *a, tga_ops *out);
/* The C view of schema argument sa before its default: its identifier and kind (tga_build_ops
 * and the autograd vocabulary, formula_vocab.c, then give it its default each their own way). */
tga_arg tga_arg_view(tgm_arena *a, const tgm_arg *sa);

/* Helpers over an op. */
/* Whether the op has a Device argument (factories pick their backend from it). */
const tga_arg *tga_device_arg(const tga_op *op);
/* The schema text on one line (line breaks and tabs as spaces), for string literals. */
const char *tga_schema_line(tgm_arena *a, const tgm_func *f);
/* The same, safe inside a C comment (tgs_c_comment). */
const char *tga_schema_comment(tgm_arena *a, const tgm_func *f);

/* ------------------------------------------------------------------ pointwise (api_ufunc.c) */

/* The compute kinds of a scalar function (docs/spec.md, "Pointwise operators"): float16,
 * bfloat16 and float32 compute in float (`_f32`), float64 in double (`_f64`), the integers and
 * bool in int64_t (`_i64`). */
enum { TGA_UFUNC_F32 = 1, TGA_UFUNC_F64 = 2, TGA_UFUNC_I64 = 4 };

/* A function named in `ufunc_inner_loop:`: `family.name`, or `name` (its own family). */
typedef struct tga_ufunc_fn {
    const char *family; /* the header: kernels/common/ufunc/<family>.h (vector forms:
                         * kernels/cpu/vec/<family>.h) */
    const char *name;   /* the functions <prefix>__pw_<name>_f32 ... (vector forms:
                         * <prefix>__vec_<name>_f32) */
} tga_ufunc_fn;

/* An operator whose CPU and CUDA kernels tgen generates from its scalar functions. */
typedef struct tga_ufunc {
    const tga_op *op;
    const char *family;      /* its first scalar function's: the generated files it goes in */
    const tga_ufunc_fn *fns; /* one scalar function per result */
    int nfns;
    unsigned kinds;          /* TGA_UFUNC_*: the compute kinds the scalar functions exist for */
    const tga_ufunc_fn *vec; /* `CPUVector:`, or NULL */
    unsigned vec_kinds;      /* TGA_UFUNC_F32 / F64: the vector forms that exist */
    const char *meta;        /* its meta function: <prefix>__ufunc_meta_<meta> */
    bool bool_result;        /* the scalar functions return bool (`ufunc_meta: comparison`) */
    const tga_arg *ins[3];   /* the tensor inputs, schema order */
    int nin;
    const tga_arg *out;       /* the out= argument, or NULL */
    const tga_arg *params[6]; /* the other arguments, schema order: the scalar functions'
                               * parameters after the inputs */
    int nparams;
    const char *cpu, *cuda; /* the kernels to generate (symbols), NULL where none */
} tga_ufunc;

/* The pointwise operators among ops (an entry with `ufunc_inner_loop:` and a CPU or CUDA
 * kernel), in op order, into *out; reports what cannot be generated at the entry. Returns
 * the count. */
int tga_build_ufuncs(tgm_arena *a, const tga_ops *ops, tga_ufunc **out);

/* ------------------------------------------------------------------ signatures (api_sig.c) */

/* "tg_tensor *name" / "int64_t name": a declaration of `name` with the C type `ctype` (pointer
 * stars hug the name). */
const char *tga_var_decl(tgm_arena *a, const char *ctype, const char *name);
/* "tg_tensor *self, tg_tensor *other, double alpha": every argument, schema order ("void"
 * without any): the parameters of kernels, glue and boxed fallbacks. */
const char *tga_kernel_params(tgm_arena *a, const tga_op *op);
/* "tg_tensor *tg__cpu_add_out(tg_tensor *self, ...)": `name` declared with op's kernel type. */
const char *tga_kernel_decl(tgm_arena *a, const tga_op *op, const char *name);
/* The positional parameters of the public function ("tg_tensor *self, tg_tensor *other"). */
const char *tga_positional_params(tgm_arena *a, const tga_op *op);
/* "tg_tensor *tg_add_fn(tg_tensor *self, tg_tensor *other, tg_add_opts opts)". */
const char *tga_public_prototype(tgm_arena *a, const tga_op *op);
/* "typedef struct tg_add_opts { double alpha; ... } tg_add_opts;", each field with its default
 * in a comment, for an op with defaulted arguments ("" else). */
const char *tga_opts_struct(tgm_arena *a, const tga_op *op);
/* The value a public function or kernel returns on error: "NULL", "(tg_values_indices){ 0 }". */
const char *tga_error_value(tgm_arena *a, const tga_op *op);
/* A call of the public function with the C expression args[i] for argument i (all of them,
 * schema order), defaulted ones through the options struct:
 * "tg_add_fn(self, w, (tg_add_opts){ .alpha = alpha })". */
const char *tga_public_call(tgm_arena *a, const tga_op *op, const char *const *args);

#endif

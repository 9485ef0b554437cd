/* The formula checker's core (formula_check.c) and what its plug-ins see of it.
 *
 * The core types what the formula language itself has: literals, the entry's names (grad,
 * grads[i], the arguments, the outputs), tensor metadata (x.sizes(), x.size(d) ...), list
 * literals, indexing. For everything else it asks its plug-ins, in the order of the checker's
 * table (tgf_checker.plugins), through the hooks of tgf_plugin; the entry checkers assemble the
 * tables (formula_deriv.c for backward formulas, formula_forward.c for forward ones) from the
 * plug-ins of formula_plugins.h. Plug-ins call the core (tgf_check_expr for their operands,
 * tgf_fail, the node constructors), never each other; the core names none of them. */
#ifndef TGEN_FORMULA_CHECK_H
#define TGEN_FORMULA_CHECK_H

#include "formula/formula.h"

typedef struct tgf_plugin tgf_plugin;

typedef struct tgf_checker {
    tgm_arena *a;
    const tga_ops *ops;
    const tgf_plugin *const *plugins; /* asked in order; NULL-terminated */
    tgf_deriv *d;                     /* the entry being checked */
    const tgm_formula *f;             /* the formula being checked (error locations) */
    bool failed;                      /* this formula already has its error */
    int errors;
    const tgf_vocab *vocab; /* the autograd vocabulary (formula_vocab.c) */
    int *renamed;           /* calls resolved by each row of formula_renames.c (tgf_derivs) */
    bool unchecked;         /* this formula passes or uses a value of a type without a C mapping */
    const char *lambda_param; /* inside fmap's lambda: its parameter's name */
    int nunchecked;           /* formulas not yet checkable (tgf_derivs.unchecked) */
    int nskipped;             /* entries whose operator has no C view */
    bool for_gen;             /* checking for --gen: the limits of generated nodes are errors */
    bool gen_limited;         /* the entry being checked is past those limits (--check only) */
    int ngen_limited;         /* entries past them (tgf_derivs.gen_limited) */
    bool forward;             /* checking forward-mode formulas (formula_forward.c) */
    bool quiet;               /* tgf_fail records its message in quiet_msg instead */
    const char *quiet_msg;
} tgf_checker;

/* What a plug-in adds to the checker: any of these hooks (NULL: none). Each returns the node it
 * made, or NULL: after an error (c->failed) or, with c->failed false, when the construct is not
 * one of its own, and the core asks the next plug-in (then goes on itself). */
struct tgf_plugin {
    /* A name that is no argument, output or gradient of the entry (M_PI, std::nullopt,
     * <arg>_t of forward formulas). */
    tgf_node *(*name)(tgf_checker *c, const tgm_expr *e);
    /* A call `f(...)`, asked before its arguments are checked (Tensor(), fmap(xs, lambda)). */
    tgf_node *(*call)(tgf_checker *c, const tgm_expr *e);
    /* The call `name(args)` (args checked), of a function, a method that is an operator, or an
     * operator of the language desugared (`a * b` is mul(a, b)); reports at name_at. */
    tgf_node *(*resolve)(tgf_checker *c, const tgm_expr *src, size_t name_at, const char *name,
                         tgf_node **args, int nargs);
    /* A method that is neither metadata nor an operator: args[0] is the checked receiver. */
    tgf_node *(*method)(tgf_checker *c, const tgm_expr *e, tgf_node **args);
    /* std::get<i>(t) and T<...>(args) (TGM_EXPR_GET, TGM_EXPR_CTOR). */
    tgf_node *(*construct)(tgf_checker *c, const tgm_expr *e);
    /* Unary and binary operators, `?:` (TGM_EXPR_UNARY, _BINARY, _COND). */
    tgf_node *(*operators)(tgf_checker *c, const tgm_expr *e);
    /* The form of a node that the core or another plug-in builds from the syntax ("[]", "{}",
     * "->", "*", "!"), which says how it compiles to C; NULL when not its own. */
    const tgf_form *(*form)(const char *syntax);
};

/* Marks the entry being checked as past the limits of generated nodes (--check only), `why`
 * completing "tgen generates no node for its formulas: ..." (the first reason is kept). */
void tgf_limit(tgf_checker *c, const char *why);
/* Reports `file:line:col: error:` at byte `offset` of the formula, once per formula. */
void tgf_fail(tgf_checker *c, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

tgf_node *tgf_check_expr(tgf_checker *c, const tgm_expr *e);
/* The call `name(args)`, resolved by the plug-ins' resolve hooks (the first overload of an
 * operator or vocabulary function that accepts the arguments); reports at name_at. */
tgf_node *tgf_resolve_call(tgf_checker *c, const tgm_expr *src, size_t name_at, const char *name,
                           tgf_node **args, int nargs);

/* A new node of the checked tree, and its arguments (copied). */
tgf_node *tgf_node_new(tgf_checker *c, tgf_node_kind kind, tga_kind type, const tgm_expr *src);
void tgf_node_set_args(tgf_checker *c, tgf_node *n, tgf_node **args, int nargs);
tgf_node *tgf_cop(tgf_checker *c, const tgm_expr *src, const char *op, tga_kind type, tgf_node *l,
                  tgf_node *r);
tgf_node *tgf_lit(tgf_checker *c, const tgm_expr *src, tga_kind type, const char *text);
tgf_node *tgf_cond(tgf_checker *c, const tgm_expr *src, tga_kind type, tgf_node **args);
/* A TGF_BUILTIN node named `what` (its `c`) of form `form` (NULL: one the C emitter does not
 * compile); a value of a type without a C mapping makes the formula not yet checkable. */
tgf_node *tgf_builtin_node(tgf_checker *c, const tgm_expr *src, const tgf_form *form,
                           const char *what, int type, tgf_node **args, int nargs);
/* The form the plug-ins give the syntax `syntax` ("[]" ...), or NULL. */
const tgf_form *tgf_find_form(const tgf_checker *c, const char *syntax);

bool tgf_is_tensor(const tgf_node *n); /* Tensor or Tensor? */
bool tgf_is_number(const tgf_node *n); /* int or Scalar */
const char *tgf_type_text(const tgf_node *n);

#endif

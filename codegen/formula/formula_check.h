/* Shared by the checker's files (formula_check.c: names, calls, methods; formula_ops.c: the
 * operators; formula_deriv.c: whole derivative entries). */
#ifndef TGEN_FORMULA_CHECK_H
#define TGEN_FORMULA_CHECK_H

#include "formula/formula.h"

typedef struct tgf_checker {
    tgm_arena *a;
    const tga_ops *ops;
    tgf_deriv *d;         /* the entry being checked */
    const tgm_formula *f; /* the formula being checked (error locations) */
    bool failed;          /* this formula already has its error */
    int errors;
    const tgf_vocab *vocab; /* the autograd vocabulary (formula_vocab.c) */
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

/* Marks the entry being checked as past the limits of generated nodes (--check only), `why`
 * completing "tgen generates no node for its formulas: ..." (the first reason is kept). */
void tgf_limit(tgf_checker *c, const char *why);
/* Reports `file:line:col: error:` at byte `offset` of the formula, once per formula. */
void tgf_fail(tgf_checker *c, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* formula_forward.c: `<arg>_p`, `<arg>_t`, `original_self_p` ... of forward formulas; NULL
 * (c->failed false) when the name is none of them. */
tgf_node *tgf_forward_name(tgf_checker *c, const tgm_expr *e);

tgf_node *tgf_check_expr(tgf_checker *c, const tgm_expr *e);
tgf_node *tgf_check_operator(tgf_checker *c, const tgm_expr *e); /* UNARY, BINARY, COND */
/* A new node of the checked tree, and its arguments (copied). */
tgf_node *tgf_node_new(tgf_checker *c, tgf_node_kind kind, tga_kind type, const tgm_expr *src);
void tgf_node_set_args(tgf_checker *c, tgf_node *n, tgf_node **args, int nargs);
/* formula_resolve.c: the call `name(args)`, resolved to the first overload of an operator or
 * a vocabulary function that accepts them; reports at name_at. */
tgf_node *tgf_resolve_call(tgf_checker *c, const tgm_expr *src, size_t name_at, const char *name,
                           tgf_node **args, int nargs);
tgf_node *tgf_cop(tgf_checker *c, const tgm_expr *src, const char *op, tga_kind type, tgf_node *l,
                  tgf_node *r);
tgf_node *tgf_lit(tgf_checker *c, const tgm_expr *src, tga_kind type, const char *text);
tgf_node *tgf_cond(tgf_checker *c, const tgm_expr *src, tga_kind type, tgf_node **args);

/* formula_builtin.c: the C++ constructs of PyTorch's formulas, with built-in typing. Each
 * returns the node, or NULL: after an error (c->failed) or, with c->failed false, when the
 * construct is not one of its own (the caller goes on resolving it). */
tgf_node *tgf_builtin_name(tgf_checker *c, const tgm_expr *e);
tgf_node *tgf_builtin_call(tgf_checker *c, const tgm_expr *e);
/* A method of a value that is not an operator: args[0] is the checked receiver. */
tgf_node *tgf_builtin_method(tgf_checker *c, const tgm_expr *e, tgf_node **args);
tgf_node *tgf_builtin_template(tgf_checker *c, const tgm_expr *e); /* GET, CTOR */
tgf_node *tgf_builtin_node(tgf_checker *c, const tgm_expr *src, const char *what, int type,
                           tgf_node **args, int nargs);

bool tgf_is_tensor(const tgf_node *n); /* Tensor or Tensor? */
bool tgf_is_number(const tgf_node *n); /* int or Scalar */
const char *tgf_type_text(const tgf_node *n);

#endif

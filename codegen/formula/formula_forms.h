/* A C++ form of PyTorch's formulas (docs/autograd.md, "C++ forms"): one row holding how the
 * checker types it and how formula_c.c lowers it to C. The rows are formula_forms.c's (the
 * plug-in tgf_cpp_forms) and forward formulas' `<arg>_t` (formula_forward.c); a TGF_BUILTIN
 * node points at its row (tgf_node.form), through which formula_c.c compiles it. */
#ifndef TGEN_FORMULA_FORMS_H
#define TGEN_FORMULA_FORMS_H

#include "formula/formula_c_internal.h"

struct tgf_checker;

/* Where a form is written, which decides the hook of the checker that finds it. */
typedef enum tgf_form_site {
    TGF_FORM_NAME,     /* a name: M_PI, std::nullopt, c10::kStrided */
    TGF_FORM_CALL,     /* f(...), found before its arguments are checked: Tensor(), fmap(...) */
    TGF_FORM_CMATH,    /* f(numbers) of <cmath>, found once its arguments are checked */
    TGF_FORM_METHOD,   /* x.m(...) of a receiver of the row's classes: t.defined() */
    TGF_FORM_TEMPLATE, /* T<...>(...), its arguments checked: std::vector<int64_t>(n, v) */
    TGF_FORM_GET,      /* std::get<i>(t) */
    TGF_FORM_SYNTAX,   /* a node the checker builds from the syntax (xs[i], opt->m(), *opt),
                        * found by tgf_find_form; typed where it is built */
} tgf_form_site;

/* How the name of a NAME or CALL row is matched. */
typedef enum tgf_form_match {
    TGF_MATCH_EXACT,     /* as written */
    TGF_MATCH_BARE,      /* without its namespaces: c10::kStrided is kStrided */
    TGF_MATCH_QUALIFIED, /* bare, and `qual` somewhere in the name: at::MemoryFormat::Preserve */
    TGF_MATCH_LAMBDA,    /* the parameter of the enclosing fmap lambda */
} tgf_form_match;

/* Classes of values (bits): a method row's receivers, a one-argument call row's argument. */
enum {
    TGF_CLASS_TENSOR = 1 << 0,      /* Tensor, Tensor? */
    TGF_CLASS_OPTIONAL = 1 << 1,    /* an optional with a value kind (tgf_optional_value) */
    TGF_CLASS_NUMBER = 1 << 2,      /* int, Scalar */
    TGF_CLASS_INT = 1 << 3,         /* int */
    TGF_CLASS_INT_LIST = 1 << 4,    /* int[] */
    TGF_CLASS_TENSOR_LIST = 1 << 5, /* Tensor[] */
    TGF_CLASS_DEVICE = 1 << 6,      /* Device */
    TGF_CLASS_DTYPE = 1 << 7,       /* ScalarType */
    TGF_CLASS_UNMAPPED = 1 << 8,    /* a value of a type without a C mapping */
};

/* A row's `type` besides the kinds: computed from the node's first argument. */
enum {
    TGF_TYPE_OF_ARG = -1,   /* the argument's own type (TensorGeometry(t)) */
    TGF_TYPE_OF_VALUE = -2, /* the value kind of the optional receiver (opt.value()) */
};

struct tgf_form {
    const char *name; /* as written (NULL in a METHOD row: any method) */
    tgf_form_site site;
    tgf_form_match match;
    const char *qual; /* TGF_MATCH_QUALIFIED */
    unsigned classes; /* METHOD: the receivers; CALL: the argument (TGF_CLASS_*) */
    int type;         /* the value's kind (TGA_*, TGF_KIND_*, TGF_TYPE_*) */
    int nargs;        /* the arguments a call takes, or a method besides its receiver (-1: any) */
    const char *text; /* the node's `c` (NULL: the name; for NAME rows, as_written: as written) */
    bool as_written;
    double value;          /* a constant's (M_PI) */
    const char *not_class; /* CALL: the end of "'f' of <type>..." for another argument class */
    /* Types e: returns the node, or NULL after an error (c->failed) or, with c->failed false,
     * when e is not of this form after all (the checker goes on). args: a METHOD's receiver
     * and arguments, a CMATH's or TEMPLATE's arguments, checked; a CALL's, unchecked, room
     * for 8. */
    tgf_node *(*check)(struct tgf_checker *c, const tgm_expr *e, const tgf_form *f,
                       tgf_node **args);
    /* Lowers a node of the form, its first argument compiled into a0: `c_text`, a format of
     * a0's C (%s, at most twice), or `lower`; neither: tgen does not compile it. */
    const char *c_text;
    val (*lower)(cc *c, const tgf_node *n, val a0);
    /* Which of its nodes compile (NULL: all of them). */
    bool (*lowers)(const tgf_node *n);
};

#endif

/* The formula compiler's state and the calls a C++ form's lowering makes (formula_forms.h):
 * formula_c.c compiles expressions, calls and functions, and a form's node through its row,
 * whose lowering (formula_forms.c, formula_forward.c) calls back only what is declared here. */
#ifndef TGEN_FORMULA_C_INTERNAL_H
#define TGEN_FORMULA_C_INTERNAL_H

#include "formula/formula.h"
#include "base/strbuf.h"

typedef struct cc {
    tgm_arena *a;
    const tgf_deriv *d;
    const tgf_formula *f;
    tgs_list decls, releases;
    tgs_buf body;
    int ntemps, depth;
    bool live[512];    /* tensor temporaries that still own a tensor (the
                                        * first 512; later ones are released at the end) */
    bool is_list[512]; /* ... an owned Tensor[] (array and elements) */
    bool gotos;
    bool uses_grads;              /* the body reads `grads` (else it is marked unused) */
    bool *unpack_in, *unpack_out; /* saved tensors this formula reads */
    const char *lambda_var;       /* inside fmap's lambda: the element it maps */
    bool forward; /* a forward formula: values are fields of the forward context `n` */
} cc;

/* A compiled value: C text, and the temporary that owns it (-1: borrowed or not a tensor). */
typedef struct val {
    const char *c;
    int temp;
} val;

/* A value the compiled code borrows (a literal, an argument, a saved field). */
static inline val plain(const char *text) { return (val){ text, -1 }; }

/* Appends one line of C at the current depth. */
void tgf__c_line(cc *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The statement that leaves the function on an error ("goto done;"). */
const char *tgf__c_fail_jump(cc *c);
/* A new temporary of C type `ctype` (tensors and tuples of them released at the end). */
int tgf__c_temp(cc *c, const char *ctype, const tga_op *tuple_of);
val tgf__c_compile(cc *c, const tgf_node *n); /* any checked node */

#endif

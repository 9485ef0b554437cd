/* The formula checker's plug-ins (formula_check.h), each defined in its own file, for the entry
 * checkers that assemble them into a checker's table: formula_deriv.c (backward formulas) and
 * formula_forward.c (forward formulas). The checker's core does not include this header. */
#ifndef TGEN_FORMULA_PLUGINS_H
#define TGEN_FORMULA_PLUGINS_H

#include "formula/formula_check.h"

/* formula_forward.c: the names of forward formulas (<arg>_p, <arg>_t, original_self_p). */
extern const tgf_plugin tgf_forward_names;
/* formula_forms.c: the C++ forms of PyTorch's formulas (names, calls, methods, templates,
 * <cmath>), one row each with its typing and its C lowering. */
extern const tgf_plugin tgf_cpp_forms;
/* formula_ops.c: + - * / comparisons && || & | ! * and ?:, desugared into calls or typed as C. */
extern const tgf_plugin tgf_operators;
/* formula_resolve.c: calls resolved against the operators' and the vocabulary's overloads. */
extern const tgf_plugin tgf_overloads;

#endif

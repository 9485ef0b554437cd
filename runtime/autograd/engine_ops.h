/* runtime/autograd: the operator calls the engine needs, provided by the generated autograd
 * code of tensorgen's own spec (templates/tg_autograd_engine.c.in), since the engine never
 * names an operator (DESIGN.md). Internal: engine.c and that generated section include it.
 * There are deliberately no weak fallbacks: a library without them must fail to link. Each
 * returns a new reference, or NULL with an error recorded. The engine calls them with grad
 * mode set as the backward runs it (on only for create_graph), so under create_graph they
 * record history like any op. */
#ifndef TG_AUTOGRAD_ENGINE_OPS_H
#define TG_AUTOGRAD_ENGINE_OPS_H

#include "autograd/autograd.h"

/* Zeros of m's shape, dtype and device (a gradient no node produced). */
tg_tensor *tg__autograd_zeros(const tg_output_meta *m);
/* grad summed over dims[nd] (kept, then reshaped to m's shape: the dimensions the forward
 * broadcast, which the engine computed), then cast to m's dtype when it differs. grad is
 * borrowed. */
tg_tensor *tg__autograd_sum_to(tg_tensor *grad, const int64_t *dims, int64_t nd,
                               const tg_output_meta *m);
/* a + b (same shape), a new tensor; a and b are borrowed. */
tg_tensor *tg__autograd_accumulate(tg_tensor *a, tg_tensor *b);
/* Ones shaped like t (the implicit gradient of a scalar root). */
tg_tensor *tg__autograd_ones_like(tg_tensor *t);
/* A copy of t, recorded like any operator: an in-place op's self as it was, which its node
 * saves and its forward formulas read (PyTorch's original_self). */
tg_tensor *tg__autograd_clone(tg_tensor *t);

/* A view of all of t (the same sizes), with t's reverse-mode history and the tangents the view
 * operator propagates: what make_dual and unpack_dual return. */
tg_tensor *tg__autograd_alias(tg_tensor *t);
/* a - b and -a (forward formulas' terms). */
tg_tensor *tg__autograd_sub(tg_tensor *a, tg_tensor *b);
tg_tensor *tg__autograd_neg(tg_tensor *a);
/* dst.copy_(src): a tangent written in place. */
tg_tensor *tg__autograd_copy_(tg_tensor *dst, tg_tensor *src);

#endif

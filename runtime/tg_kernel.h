/* Helpers for kernels: tensorgen's own, operator libraries' (docs/extending.md) and the glue
 * kernels tgen generates. Those that can fail take the name of the operator they work for,
 * and their errors name it ("matmul: result type Float can't be cast to the desired output
 * type Long"), the convention of kernels. Installed; a program that only calls operators does
 * not need it (tensorgen.h does not include it). */
#ifndef TG_KERNEL_H
#define TG_KERNEL_H

#include "tg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A Scalar argument wrapped as PyTorch does for a Tensor overload: a zero-dim "wrapped
 * number", int64 when v is finite and whole, else float64, that promotes weakly (int_tensor + 2
 * stays integral, + 2.5 gives the default float). A new reference, or NULL. */
tg_tensor *tg_wrap_scalar(double v);
/* For out= kernels: resizes `out` to result's shape (allowed when it has that shape or no
 * elements), checks result's dtype can be cast to out's ("result type Float can't be cast to
 * the desired output type Long"), copies, and returns a new reference to out; NULL with an
 * error naming op otherwise. */
tg_tensor *tg_copy_to_out(const char *op, tg_tensor *out, tg_tensor *result);
/* A new contiguous tensor on t's device with t's values and no autograd history; NULL when t
 * is NULL (an error is already recorded) or on failure (error naming op). */
tg_tensor *tg_tensor_copy(const char *op, tg_tensor *t);

#ifdef __cplusplus
}
#endif

#endif

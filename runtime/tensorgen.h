/* tensorgen: tensors with PyTorch's semantics, in C.
 *
 * Create, compute, free:
 *
 *     #include <tensorgen.h>
 *
 *     float xs[] = { 1, 2, 3, 4, 5, 6 };
 *     tg_tensor *a = tg_tensor_from_data(xs, (int64_t[]){ 2, 3 }, 2, TG_FLOAT32);
 *     tg_tensor *b = tg_ones(TG_INTS(3));             // options like Python keywords:
 *     tg_tensor *c = tg_add(a, b, .alpha = 2);        //   c = a + 2 * b (broadcast)
 *     tg_tensor *s = tg_sum(c, .dim = TG_INTS(1));    //   s = c.sum(1)
 *     tg_print(s);                                    // tensor([18., 27.])
 *     tg_release(a); tg_release(b); tg_release(c); tg_release(s);
 *
 * Every function that returns a tensor returns a NEW reference: release it with tg_release().
 * Arguments are borrowed. To free many intermediates at once, open a scope:
 *
 *     tg_scope_begin();
 *     tg_tensor *y = tg_relu(tg_mm(x, w));            // the mm result dies at scope end
 *     tg_scope_keep(y);                               // y survives, owned by the caller
 *     tg_scope_end();
 *
 * Inside a scope the scope owns the results: do not release them yourself. A result you do not
 * need (an in-place call's) goes to tg_drop(), right in and out of a scope; -1 if it failed:
 *
 *     if (tg_drop(tg_add_(a, b)) != 0) fprintf(stderr, "%s\n", tg_last_error());
 *
 * Errors never abort. A failing call returns NULL and records a thread-local message in
 * PyTorch's words; a call given NULL returns NULL and keeps the first message, so a chain of
 * calls can be checked once at the end:
 *
 *     tg_tensor *z = tg_add(tg_mul(a, b), c);         // if mul failed, add returns NULL too
 *     if (!z) fprintf(stderr, "%s\n", tg_last_error()); // "mul: The size of tensor a (3) ..."
 *     tg_clear_error();
 *
 * Threads: calls on different tensors may run concurrently; errors, scopes and grad mode are
 * per thread. tg_set_num_threads() sizes the intra-op pool (OpenMP, shared with OpenBLAS). */
#ifndef TENSORGEN_H
#define TENSORGEN_H

#include "tg_core.h"
#include "tg_library.h"
#include "tg_ops.h"
#include "tg_io.h"
#include "tg_functional.h"
#include "tg_profiler.h"
#include "tg_nn.h"

#endif

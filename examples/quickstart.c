/* quickstart: a first tour of tensorgen.
 *
 *   make -j2 && build/examples/quickstart
 *
 * Every operator below (tg_add, tg_matmul, tg_softmax, tg_sum, ...) is generated from one
 * entry of specs/native_functions.yaml, with PyTorch's names, arguments and defaults.
 * Arguments with a default are named, C99 style: tg_add(a, b, .alpha = 10). */
#include <stdio.h>

#include "tensorgen.h"

static void show(const char *what, const tg_tensor *t)
{
    printf("%s\n", what);
    tg_print(t);
}

int main(void)
{
    tg_manual_seed(0); /* tg_randn gives the same numbers on every run */

    /* ---- 1. Creating tensors. Each tg_ function returns a NEW reference: release it. ---- */
    printf("== creating tensors ==\n");
    const float data[] = { 1, 2, 3, 4, 5, 6 };
    tg_tensor *a = tg_tensor_from_data(data, (int64_t[]){ 2, 3 }, 2, TG_FLOAT32);
    tg_tensor *r = tg_arange(3, .dtype = TG_FLOAT32); /* [0, 1, 2] */
    tg_tensor *x = tg_randn(TG_INTS(2, 3));           /* N(0, 1), float32 */
    show("a =", a);
    show("r = arange(3) =", r);
    show("x = randn(2, 3) =", x);

    /* ---- 2. Arithmetic: r (3) broadcasts against a (2, 3); alpha scales the second operand. */
    printf("\n== a + 10 * r (broadcast, alpha) ==\n");
    tg_tensor *b = tg_add(a, r, .alpha = 10);
    show("tg_add(a, r, .alpha = 10) =", b);
    tg_release(b);
    tg_release(r);
    tg_release(x);

    /* ---- From here on a scope owns the intermediates: tg_scope_end() releases every tensor
     * an operator returned since tg_scope_begin(), except those passed to tg_scope_keep(). */
    tg_scope_begin();

    printf("\n== matrix product and softmax ==\n");
    tg_tensor *w = tg_randn(TG_INTS(3, 4));
    tg_tensor *y = tg_matmul(a, w); /* (2, 3) @ (3, 4) -> (2, 4) */
    show("y = a @ w =", y);
    tg_tensor *p = tg_softmax(y, 1); /* over dim 1: rows sum to 1 */
    show("softmax(y, dim=1) =", p);
    show("its row sums =", tg_sum(p, .dim = TG_INTS(1)));

    printf("\n== reductions ==\n");
    tg_tensor *t = tg_reshape(tg_arange(24, .dtype = TG_FLOAT32), TG_INTS(2, 3, 4));
    show("sum over dims (0, 2), keepdim: shape (1, 3, 1) =",
         tg_sum(t, .dim = TG_INTS(0, 2), .keepdim = true));
    show("sum of everything =", tg_sum(t));
    tg_values_indices m = tg_max_dim(a, 1); /* max along dim 1 */
    show("max(a, dim=1).values =", m.values);
    show("max(a, dim=1).indices =", m.indices);

    printf("\n== views share storage with their base ==\n");
    tg_tensor *at = tg_transpose(a, 0, 1); /* (3, 2), no copy */
    show("a.transpose(0, 1) =", at);
    printf("contiguous? %s\n", tg_tensor_is_contiguous(at) ? "yes" : "no");
    show("a.reshape(3, 2) =", tg_reshape(a, TG_INTS(3, 2)));
    tg_tensor *col = tg_slice(a, .dim = 1, .start = 1, .end = 3);
    show("a[:, 1:3] =", col);
    tg_fill_(col, 0); /* writes through the view */
    show("a after a[:, 1:3].fill_(0) =", a);

    /* ---- 3. Errors: no abort. A failing call returns NULL and records PyTorch's message;
     * a call given NULL returns NULL too, so a chain fails once, cleanly. */
    printf("\n== errors ==\n");
    tg_tensor *bad = tg_add(a, tg_randn(TG_INTS(4))); /* (2, 3) + (4) */
    tg_tensor *worse = tg_sum(bad);                   /* NULL in, NULL out */
    printf("tg_add(a, randn(4)) -> %s, tg_sum of that -> %s\n", bad ? "a tensor" : "NULL",
           worse ? "a tensor" : "NULL");
    printf("tg_last_error(): %s\n", tg_last_error());
    tg_clear_error();

    /* Keep one result past the scope; everything else made above is released here. */
    tg_tensor *kept = tg_scope_keep(tg_mean(y));
    tg_scope_end();

    printf("\n== after the scope ==\n");
    show("mean(y), kept from the scope =", kept);
    tg_release(kept);
    tg_release(a);

    printf("\nlive tensors: %lld\n", (long long)tg_live_tensors());
    return tg_live_tensors() == 0 ? 0 : 1;
}

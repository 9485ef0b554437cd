/* The tensors that the fragments of docs/c-api.md and docs/autograd.md use without making
 * them. The fragments show calls rather than whole programs and may leave results unreleased;
 * an error left recorded fails. */
#include "harness.h"

static tg_tensor *leaf(tg_tensor *t) { return tg_tensor_set_requires_grad(t, true); }

int main(void)
{
    tg_manual_seed(0);
    tg_tensor *a = tg_randn(TG_INTS(2, 3)), *b = tg_randn(TG_INTS(3)); /* a + b broadcasts */
    tg_tensor *x = leaf(tg_randn(TG_INTS(5, 5)));                      /* x @ w + b */
    tg_tensor *w = leaf(tg_randn(TG_INTS(5, 3)));
    tg_tensor *A = tg_randn(TG_INTS(5, 5)), *v = tg_randn(TG_INTS(5, 5)); /* jvp of A x along v */
    tg_tensor *qkv = tg_randn(TG_INTS(2, 6)), *batch = tg_randn(TG_INTS(3, 2));
    tg_tensor *pred = tg_randn(TG_INTS(4)), *target = tg_randn(TG_INTS(4));
    tg_tensor *b_on_gpu = tg_zeros(TG_INTS(3)); /* a parameter to load into, on the CPU here */
    tg_tensor *params[] = { w };
    int nparams = 1;
    tg_tensor *loss = tg_sum(tg_mul(w, w));
    {
        /* DOC_FRAGMENT */
    }
    return doc_done(false);
}

/* A program of the selective build's test (tests/build/select_check.sh): it uses only the
 * operators tests/build/select/ops.txt selects (add.Tensor, mul.Tensor, sum.dim_IntList,
 * relu), and backward through them (not with the argument `forward`: a selection without
 * autograd), and links against the selected libtensorgen. Prints the values the test
 * compares. */
#include <stdio.h>
#include <string.h>

#include "tensorgen.h"

int main(int argc, char **argv)
{
    bool backward = !(argc > 1 && !strcmp(argv[1], "forward"));
    float av[] = { 1, -2, 3 }, bv[] = { 2, 2, 2 };
    tg_tensor *a =
        tg_tensor_set_requires_grad(tg_tensor_from_data(av, (int64_t[]){ 3 }, 1, TG_FLOAT32), true);
    tg_tensor *b = tg_tensor_from_data(bv, (int64_t[]){ 3 }, 1, TG_FLOAT32);
    tg_scope_begin();
    tg_tensor *r = tg_relu(tg_add(tg_mul(a, b), a)); /* relu(a*b + a) = [3, 0, 9] */
    tg_tensor *s = tg_sum(r);                        /* 12 */
    int ok = s && (!backward || tg_backward(s) == 0);
    double total = s ? tg_item(s) : -1;
    tg_scope_end();
    if (!backward) {
        printf("sum %g\n", total);
        tg_release(b);
        tg_release(a);
        return ok ? 0 : 1;
    }
    tg_tensor *g = tg_tensor_grad(a); /* (b + 1) where a*b + a > 0: [3, 0, 3] */
    double gv[3] = { -1, -1, -1 };
    if (!ok || !g || tg_tensor_to_doubles(g, gv, 3)) {
        printf("error: %s\n", tg_last_error());
        return 1;
    }
    printf("sum %g grad %g %g %g\n", total, gv[0], gv[1], gv[2]);
    tg_release(g);
    tg_release(b);
    tg_release(a);
    return 0;
}

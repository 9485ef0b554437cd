/* What docs/models.md's attention fragment uses: x (B, T, C) and a block `a` whose c_attn
 * projects it to (B, T, 3C), for NH heads of hs channels. */
#include "harness.h"

typedef struct attention {
    tg_module *c_attn;
} attention;

int main(void)
{
    const int64_t B = 2, T = 4, C = 8, NH = 2, hs = C / NH;
    tg_manual_seed(0);
    attention block = { tg_nn_linear(C, 3 * C) }, *a = &block;
    tg_tensor *x = tg_randn(TG_INTS(B, T, C));
    {
        /* DOC_FRAGMENT */
    }
    tg_release(x);
    tg_module_free(block.c_attn);
    return doc_done(false);
}

/* The parameters docs/safetensors.md's example saves and loads: wte, c_attn and head. */
#include "harness.h"

int main(void)
{
    tg_manual_seed(0);
    tg_tensor *wte = tg_randn(TG_INTS(16, 8)), *c_attn = tg_randn(TG_INTS(8, 24));
    tg_tensor *head = tg_zeros(TG_INTS(16, 8));
    {
        /* DOC_FRAGMENT */
    }
    tg_release(head);
    tg_release(c_attn);
    tg_release(wte);
    return doc_done(true);
}

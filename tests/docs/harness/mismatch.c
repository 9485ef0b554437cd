/* docs/c-api.md's error example: a is (2, 3) and b is (4), which do not broadcast. */
#include "harness.h"

int main(void)
{
    tg_tensor *a = tg_ones(TG_INTS(2, 3)), *b = tg_ones(TG_INTS(4));
    {
        /* DOC_FRAGMENT */
    }
    tg_release(b);
    tg_release(a);
    return doc_done(false);
}

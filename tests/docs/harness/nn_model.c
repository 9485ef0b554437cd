/* docs/nn.md's network: the page's first fragment declares `model`, the fragments that
 * continue it use it; freed here, after which no tensor may be left alive. */
#include "harness.h"

int main(void)
{
    /* DOC_FRAGMENT */
    tg_module_free(model);
    return doc_done(true);
}

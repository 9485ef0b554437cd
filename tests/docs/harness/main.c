/* A page's statements, run in main() (README.md's examples, which make their own tensors).
 * They must release everything they make and leave no error recorded. */
#include "harness.h"

int main(void)
{
    {
        /* DOC_FRAGMENT */
    }
    return doc_done(true);
}

/* Kernel prototypes that docs/generated-code.md shows, declared again after the generated
 * ones (generated/kernels/<op>.h): a prototype that no longer matches does not compile. */
#include "kernels/add.h"

/* DOC_FRAGMENT */

int main(void) { return 0; }

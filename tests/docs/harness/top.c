/* Declarations and definitions at file scope (a layer, a module's struct and forward
 * function, a typedef of the API repeated): compiled against tensorgen.h and linked. */
#include "harness.h"

/* DOC_FRAGMENT */

int main(void) { return doc_done(false); }

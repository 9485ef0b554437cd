/* What every harness of tests/docs/ shares (tests/docs/README.md): the headers a page's code
 * may use without including them, and the check after it. */
#ifndef TG_DOC_HARNESS_H
#define TG_DOC_HARNESS_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tensorgen.h"

/* The exit status of a harness after the page's code ran: 1, saying why, when an error is
 * left recorded (code that expects one clears it) or, with check_leaks, when a tensor is
 * still alive. */
static int doc_done(bool check_leaks)
{
    if (tg_last_error()) {
        fprintf(stderr, "doc harness: an error is left recorded: %s\n", tg_last_error());
        return 1;
    }
    if (check_leaks && tg_live_tensors() != 0) {
        fprintf(stderr, "doc harness: %lld tensors are still alive\n",
                (long long)tg_live_tensors());
        return 1;
    }
    return 0;
}

#endif

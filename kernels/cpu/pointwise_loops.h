/* What the CPU pointwise kernels (the generated ones through ufunc.h, ternary.c, copy.c) share
 * beyond the device-neutral headers: the switch that makes every pointwise kernel take its
 * reference path (tests compare the fast paths against it), and, through
 * common/pointwise_convert.h, the element loads, stores and conversions their reference loops
 * use. */
#ifndef TG_POINTWISE_LOOPS_H
#define TG_POINTWISE_LOOPS_H

#include "pointwise_convert.h"

/* When nonzero, the pointwise kernels skip their fast (contiguous, typed, vectorised) paths
 * and run the generic reference loops. For tests; defined in ufunc.c. */
extern int tg__pw_force_reference;

#endif

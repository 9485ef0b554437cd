/* Shared between the api_*.c files only. */
#ifndef TGEN_API_INTERNAL_H
#define TGEN_API_INTERNAL_H

#include "api/api.h"

/* Fills every op's kernels (written, structured glue, autogen glue) and checks them: missing
 * delegates, structured kernels without a backend kernel, kernel symbols declared with two
 * signatures. Returns the number of errors. */
int tga_assign_kernels(tgm_arena *a, tga_ops *ops);

/* Gives every operator its generated autograd kernel (tga_autograd), in the autograd slot of its
 * row, replacing what written kernels put there. Nothing without derivative entries. */
int tga_assign_autograd(const tgm_model *m, tgm_arena *a, tga_ops *ops);

#endif

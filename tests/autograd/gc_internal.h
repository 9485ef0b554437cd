/* Helpers the gradcheck harnesses share (gradcheck.c, the reverse-mode checks, and
 * fwgradcheck.c, the forward-mode one), defined in gradcheck.c. Not for the test files, which
 * use gradcheck.h. */
#ifndef GC_INTERNAL_H
#define GC_INTERNAL_H

#include "gradcheck.h"

/* Formats the failure into msg; returns false (so `return gc__fail(...)` reports it). */
bool gc__fail(char *msg, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Uniform in [0, 1) from the harness's LCG; *s advances. */
double gc__uniform(uint64_t *s);
/* v[0..n) uniform in [-1, 1); *seed advances. */
void gc__random_vector(double *v, int64_t n, uint64_t *seed);
/* The element with row-major logical index j of a float64 tensor of any strides. */
double *gc__elem_ptr(const tg_tensor *t, int64_t j);
bool gc__same_shape(const tg_tensor *a, const tg_tensor *b);
/* "[2, 3]" into buf. */
void gc__shape_str(const tg_tensor *t, char *buf, size_t size);
/* PyTorch's metric: |analytical - numerical| <= atol + rtol |numerical|, NaN never close. */
bool gc__close_enough(double analytical, double numerical, const gc_opts *o);
/* A new contiguous tensor of t's shape and dtype holding vals (float64 values, converted). */
tg_tensor *gc__tensor_like(const tg_tensor *t, const double *vals);
/* opts with every zero field replaced by its default (gradcheck.h); opts may be NULL. */
gc_opts gc__defaults(const gc_opts *opts);
/* The values of t, the `kind` `which` (kind "tangent of output", which 2) of a check named
 * `what`, into got[0..n), after checking t has like's shape and dtype; a NULL t reads as zeros.
 * Returns false with msg set when t differs or cannot be read. */
bool gc__read_like(const tg_tensor *t, const tg_tensor *like, double *got, int64_t n,
                   const char *what, const char *kind, int which, char *msg, size_t msg_size);
/* The floating outputs among out[0..n_out): their positions in fout[] and numels in n[]; every
 * output is released (and set to NULL). Returns how many are floating. */
int gc__floating_outputs(tg_tensor **out, int n_out, int *fout, int64_t *n);
/* Releases ts[0..n) and sets them to NULL. */
void gc__release_all(tg_tensor **ts, int n);

#endif

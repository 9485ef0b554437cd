/* The cuDNN path of the CUDA convolutions (kernels/cuda/conv_cudnn.cu), asked first by
 * kernels/cuda/conv.cu for each pass. Without cuDNN (TG_WITH_CUDNN unset: a toolkit without
 * it, or the CPU emulator) it always declines. */
#ifndef TG_CONV_CUDNN_CUH
#define TG_CONV_CUDNN_CUH

#include "tg_cuda.cuh"
#include "conv_checks.h"

enum tg_cudnn_pass { TG_CUDNN_TO_COL, TG_CUDNN_TO_IM, TG_CUDNN_WEIGHT };

/* One pass over all g.n samples on the device's stream: TO_COL adds conv(im) onto col, TO_IM
 * adds the adjoint onto im (both pre-filled with the bias or zeros), WEIGHT writes w. Contiguous
 * operands of dtype dt. 1: done; 0: declined (the caller runs its own path); -1: error. */
#ifdef TG_WITH_CUDNN
int tg__cudnn_conv(const char *op, tg_cudnn_pass pass, const tg__conv_geom &g, tg_dtype dt,
                   int device, cudaStream_t st, void *im, void *col, void *w);
#else
static inline int tg__cudnn_conv(const char *, tg_cudnn_pass, const tg__conv_geom &, tg_dtype, int,
                                 cudaStream_t, void *, void *, void *)
{
    return 0;
}
#endif

#endif

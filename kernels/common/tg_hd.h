/* TG_HD: the one qualifier of the functions that CPU kernels and CUDA device code share (the
 * scalar functions of kernels/common/ufunc/, conversions, geometry helpers of the *_checks.h
 * headers): `__host__ __device__` under nvcc, nothing for gcc (and for g++ compiling the CUDA
 * kernels against the emulator, tests/cuda_emu). Write `static inline TG_HD`. */
#ifndef TG_HD_H
#define TG_HD_H

#if defined(__CUDACC__)
#define TG_HD __host__ __device__
#else
#define TG_HD
#endif

#endif

/* The qualifiers of kernel functions.
 *
 * TG_HD: the one qualifier of the functions that CPU kernels and CUDA device code share (the
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

/* TG_ALWAYS_INLINE: a generic function that takes a dtype, a compute kind or an element size
 * as a parameter and is instantiated by calling it with a constant (the pattern of kernels/cpu/ufunc_loops.h, the
 * replacement for function-defining macros): inlined into each caller, its branches on that
 * constant fold away and its loops vectorise for the one type. Host code. */
#define TG_ALWAYS_INLINE static inline __attribute__((always_inline))

#endif

/* Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011), the
 * counter-based generator behind every random kernel on CUDA (random.cu, dropout.cu):
 * four 32-bit words for a 128-bit counter and a 64-bit key, with no state to carry between
 * threads. Random123's known-answer vectors hold for it (tests/cuda/test_cuda_factory.c checks
 * the streams it produces). */
#ifndef TG_CUDA_PHILOX_CUH
#define TG_CUDA_PHILOX_CUH

#include <cuda_runtime.h>
#include <stdint.h>
#include "tg_hd.h"

TG_HD __forceinline__ uint4 tg__philox4x32_10(uint4 ctr, uint2 key)
{
    const uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u, W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;
#pragma unroll
    for (int r = 0; r < 10; r++) {
        const uint32_t hi0 = (uint32_t)(((uint64_t)M0 * ctr.x) >> 32), lo0 = M0 * ctr.x;
        const uint32_t hi1 = (uint32_t)(((uint64_t)M1 * ctr.z) >> 32), lo1 = M1 * ctr.z;
        ctr = make_uint4(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
        key.x += W0;
        key.y += W1;
    }
    return ctr;
}

/* The key for a 64-bit seed. */
TG_HD __forceinline__ uint2 tg__philox_key(uint64_t seed)
{
    return make_uint2((uint32_t)seed, (uint32_t)(seed >> 32));
}

#endif

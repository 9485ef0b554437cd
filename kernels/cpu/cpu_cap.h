/* Per-capability kernel tables: how a kernel gets one build per instruction set.
 *
 * A file under kernels/cpu/cap/ holds the vector loops of one kernel family and ends with one
 * table (a struct of function pointers) defined as
 *
 *     const tg_foo_loops TG_CAP_NAME(tg__foo_loops) = { ... };
 *
 * The Makefile compiles it once per capability with -DTG_CPU_CAP=<cap> and that capability's
 * flags (default: none; avx2: -mavx2 -mfma; avx512: -mavx512f -mavx512dq -mavx512vl
 * -mavx512bw), so the one source defines tg__foo_loops_default, tg__foo_loops_avx2 and
 * tg__foo_loops_avx512. Inside, `#if defined(__AVX2__)` and the like pick hand-written
 * intrinsics; plain loops are vectorised by the compiler for whatever the flags allow. The
 * family's ordinary file (kernels/cpu/foo.c, compiled for the baseline) declares the tables
 * with TG_CAP_DECLARE and calls through TG_CAP_PICK(tg__foo_loops), which is the table of the
 * capability tg__cpu_cap() chose. Only the default table exists off x86. */
#ifndef TG_CPU_CAP_H
#define TG_CPU_CAP_H

#include "core/core.h"

#define TG__CAP_CAT_(a, b) a##_##b
#define TG__CAP_CAT(a, b) TG__CAP_CAT_(a, b)
/* name_<capability this file is being compiled for> */
#define TG_CAP_NAME(name) TG__CAP_CAT(name, TG_CPU_CAP)

#if defined(__x86_64__) || defined(__i386__)
#define TG_CAP_X86 1
#define TG_CAP_DECLARE(type, name) extern const type name##_default, name##_avx2, name##_avx512
#define TG_CAP_PICK(name)                                \
    (tg__cpu_cap() == TG_CPU_CAP_AVX512 ? &name##_avx512 \
     : tg__cpu_cap() == TG_CPU_CAP_AVX2 ? &name##_avx2   \
                                        : &name##_default)
#else
#define TG_CAP_X86 0
#define TG_CAP_DECLARE(type, name) extern const type name##_default
#define TG_CAP_PICK(name) (&name##_default)
#endif

#endif

/* Operator coverage: a test file states which operators its cases exercise with
 *
 *     TG_COVERS("add.Tensor", "add_.Tensor", "add.out");
 *
 * at file scope. The names land in the `tg_cover` linker section; tests/ops/test_coverage.c
 * walks that section and compares it with the operator list tgen emits from the spec
 * (generated/tg_op_list.h), so an operator without a test case fails the suite by name. */
#ifndef TG_COVER_H
#define TG_COVER_H

#define TG__COVER_CAT2(a, b) a##b
#define TG__COVER_CAT(a, b) TG__COVER_CAT2(a, b)

/* One array per use; `used` keeps it alive, the section gathers them all. */
#define TG_COVERS(...)                                                                     \
    __attribute__((used, section("tg_cover"))) static const char *const                    \
        TG__COVER_CAT(tg__covers_, __LINE__)[] = { __VA_ARGS__ }

/* The same for CUDA comparison cases (tests/cuda): TG_CUDA_COVERS("add.out", ...) at file
 * scope, outside any #ifdef TG_WITH_CUDA, lands in `tg_cuda_cover`; the CUDA coverage test
 * (tests/cuda/test_cuda_coverage.c) fails for an operator of TG_CUDA_OP_LIST (the ops with a
 * `CUDA:` kernel) that no CUDA case names. */
#define TG_CUDA_COVERS(...)                                                                \
    __attribute__((used, section("tg_cuda_cover"))) static const char *const               \
        TG__COVER_CAT(tg__cuda_covers_, __LINE__)[] = { __VA_ARGS__ }

#endif

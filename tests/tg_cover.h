/* Operator coverage: a test file states which operators its cases exercise with
 *
 *     TG_COVERS("add.Tensor", "add_.Tensor", "add.out");
 *
 * at file scope. The names land in the `tg_cover` linker section; tests/ops/test_coverage.c
 * walks that section and compares it with the operator list tgen emits from the spec
 * (generated/tg_op_list.h), so an operator without a test case fails the suite by name.
 * The walk and the comparison are the cover_* functions below (tests/tg_cover.c), shared with
 * the CUDA coverage test and the gradcheck coverage test. */
#ifndef TG_COVER_H
#define TG_COVER_H

#include <stdbool.h>

#define TG__COVER_CAT2(a, b) a##b
#define TG__COVER_CAT(a, b) TG__COVER_CAT2(a, b)

/* One array per use; `used` keeps it alive, the section gathers them all. */
#define TG_COVERS(...)                                                                 \
    __attribute__((used, section("tg_cover"))) static const char *const TG__COVER_CAT( \
        tg__covers_, __LINE__)[] = { __VA_ARGS__ }

/* The same for CUDA comparison cases (tests/cuda): TG_CUDA_COVERS("add.out", ...) at file
 * scope, outside any #ifdef TG_WITH_CUDA, lands in `tg_cuda_cover`; the CUDA coverage test
 * (tests/cuda/test_cuda_coverage.c) fails for an operator of TG_CUDA_OP_LIST (the ops with a
 * `CUDA:` kernel) that no CUDA case names. */
#define TG_CUDA_COVERS(...)                                                                 \
    __attribute__((used, section("tg_cuda_cover"))) static const char *const TG__COVER_CAT( \
        tg__cuda_covers_, __LINE__)[] = { __VA_ARGS__ }

/* The same registration for a table of cases (gradcheck.h's GC_REGISTER, kt_case.h's
 * KT_REGISTER): a { pointer, count } descriptor of a static array, 16 bytes and 16-byte aligned,
 * in `section`, so that the section is a plain array of descriptors the runner walks. */
#define TG_REGISTER_TABLE(section_, table_type, array)                                           \
    __attribute__((used, section(section_), aligned(16))) static const table_type TG__COVER_CAT( \
        array, _table) = { (array), (int64_t)(sizeof(array) / sizeof((array)[0])) }

/* ------------------------------------------------------------------ the checks */

/* An operator as tgen's X-macro lists give it (TG_OP_LIST, TG_CUDA_OP_LIST in tg_op_list.h,
 * TG_DIFFERENTIABLE_OP_LIST in tg_grad_op_list.h). A list becomes a table ended by a null row:
 *
 *     static const cover_op ops[] = { TG_OP_LIST(COVER_OP) { 0 } };                        */
typedef struct cover_op {
    const char *cname;  /* "add" (the C function is tg_add) */
    const char *schema; /* "add.Tensor" */
} cover_op;
#define COVER_OP(cname, schema_name) { #cname, schema_name },

/* Whether `name` is among the names in [start, stop), the bounds of a linker section
 * (__start_tg_cover, __stop_tg_cover); the null entries that keep a section present are skipped. */
bool cover_section_has(const char *const *start, const char *const *stop, const char *name);

/* Whether `name` is an operator of the spec (TG_OP_LIST). */
bool cover_is_operator(const char *name);

/* Prints "no <kind> covers operator <schema> (<why>)" on stderr for each operator of `ops` that
 * has_case() rejects, <why> being "tg_<cname>" when `why` is NULL. Returns how many were
 * missing, and stores in *total (when not NULL) how many operators `ops` holds. */
int cover_report_missing(const cover_op *ops, bool (*has_case)(const char *schema_name),
                         const char *kind, const char *why, int *total);

#endif

/* Fails when an operator with a CUDA kernel of its own (a `CUDA:` entry in the spec, listed by
 * tgen as TG_CUDA_OP_LIST in generated/tg_op_list.h) has no CUDA-vs-CPU comparison case: a case
 * of the value table (kt_case.h, tests/values/) that runs on CUDA names its operator, and the
 * plain tests of tests/cuda/ name theirs with TG_CUDA_COVERS("uniform_", ...) (tg_cover.h). The check needs no GPU, so it runs in every build with CUDA (CI's);
 * without TG_WITH_CUDA it skips like every CUDA test. */
#include <criterion/criterion.h>

#include "kt_case.h"
#include "tg_op_list.h"

#ifndef TG_WITH_CUDA

Test(cuda_coverage, built_without_cuda) { KT_SKIP_NO_CUDA_BUILD(); }

#else

/* GNU ld defines these for every section whose name is a C identifier. */
extern const char *const __start_tg_cuda_cover[];
extern const char *const __stop_tg_cuda_cover[];

/* Keeps the section present (and __start/__stop defined) even before any test declares one. */
TG_CUDA_COVERS((const char *)0);

static bool covered(const char *name)
{
    return cover_section_has(__start_tg_cuda_cover, __stop_tg_cuda_cover, name) ||
           kt_cases_cover(name, true);
}

Test(cuda_coverage, every_cuda_kernel_has_a_comparison_case)
{
    static const cover_op ops[] = { TG_CUDA_OP_LIST(COVER_OP){ 0 } };
    int total, missing = cover_report_missing(ops, covered, "CUDA test case", "its `CUDA:` kernel",
                                              &total);
    cr_expect_eq(missing, 0,
                 "%d of %d operators with a CUDA kernel have no CUDA test case "
                 "(listed on stderr)",
                 missing, total);
}

Test(cuda_coverage, covered_names_are_real_operators)
{
    for (const char *const *p = __start_tg_cuda_cover; p < __stop_tg_cuda_cover; p++)
        if (*p)
            cr_expect(cover_is_operator(*p),
                      "TG_CUDA_COVERS names '%s', which is not an operator "
                      "in the spec",
                      *p);
}

#endif

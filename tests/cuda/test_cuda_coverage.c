/* Fails when an operator with a CUDA kernel of its own (a `CUDA:` entry in the spec, listed by
 * tgen as TG_CUDA_OP_LIST in generated/tg_op_list.h) has no CUDA-vs-CPU comparison case: test
 * files name the operators their cases exercise with TG_CUDA_COVERS("add.out", ...) (see
 * tests/tg_cover.h). The check needs no GPU, so it runs in every build with CUDA (CI's);
 * without TG_WITH_CUDA it skips like every CUDA test. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tg_cover.h"
#include "tg_op_list.h"

#ifndef TG_WITH_CUDA

Test(cuda_coverage, built_without_cuda)
{
    cr_skip_test("built without CUDA (nvcc not found or CUDA=0)");
}

#else

/* GNU ld defines these for every section whose name is a C identifier. */
extern const char *const __start_tg_cuda_cover[];
extern const char *const __stop_tg_cuda_cover[];

/* Keeps the section present (and __start/__stop defined) even before any test declares one. */
TG_CUDA_COVERS((const char *)0);

__attribute__((unused)) static bool covered(const char *name)
{
    for (const char *const *p = __start_tg_cuda_cover; p < __stop_tg_cuda_cover; p++)
        if (*p && strcmp(*p, name) == 0) return true;
    return false;
}

static bool known(const char *name)
{
#define TG__KNOWN(cname, schema_name) if (strcmp(name, schema_name) == 0) return true;
    TG_OP_LIST(TG__KNOWN)
#undef TG__KNOWN
    return false;
}

Test(cuda_coverage, every_cuda_kernel_has_a_comparison_case)
{
    int missing = 0, total = 0;
#define TG__CHECK(cname, schema_name)                                                      \
    total++;                                                                               \
    if (!covered(schema_name)) {                                                           \
        fprintf(stderr, "no CUDA test case covers operator %s (its `CUDA:` kernel)\n",     \
                schema_name);                                                              \
        missing++;                                                                         \
    }
    TG_CUDA_OP_LIST(TG__CHECK)
#undef TG__CHECK
    cr_expect_eq(missing, 0, "%d of %d operators with a CUDA kernel have no CUDA test case "
                 "(listed on stderr)", missing, total);
}

Test(cuda_coverage, covered_names_are_real_operators)
{
    for (const char *const *p = __start_tg_cuda_cover; p < __stop_tg_cuda_cover; p++)
        if (*p) cr_expect(known(*p), "TG_CUDA_COVERS names '%s', which is not an operator in the "
                          "spec", *p);
}

#endif

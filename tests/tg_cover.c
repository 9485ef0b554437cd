/* The coverage checks shared by tests/ops/test_coverage.c (TG_COVERS), tests/cuda/
 * test_cuda_coverage.c (TG_CUDA_COVERS) and tests/autograd/test_gradcheck.c (gradcheck cases):
 * see tg_cover.h. */
#include <stdio.h>
#include <string.h>

#include "tensorgen.h"
#include "tg_cover.h"
#include "tg_op_list.h"

bool cover_section_has(const char *const *start, const char *const *stop, const char *name)
{
    for (const char *const *p = start; p < stop; p++)
        if (*p && strcmp(*p, name) == 0) return true;
    return false;
}

bool cover_is_operator(const char *name)
{
#define COVER__KNOWN(cname, schema_name) \
    if (strcmp(name, schema_name) == 0) return true;
    TG_OP_LIST(COVER__KNOWN)
#undef COVER__KNOWN
    /* an operator library's, registered (tests/library/testops) */
    if (strstr(name, "::") && tg_op_find(name)) return true;
    tg_clear_error();
    return false;
}

int cover_report_missing(const cover_op *ops, bool (*has_case)(const char *schema_name),
                         const char *kind, const char *why, int *total)
{
    int missing = 0, n = 0;
    for (const cover_op *op = ops; op->schema; op++, n++) {
        if (has_case(op->schema)) continue;
        if (why) fprintf(stderr, "no %s covers operator %s (%s)\n", kind, op->schema, why);
        else fprintf(stderr, "no %s covers operator %s (tg_%s)\n", kind, op->schema, op->cname);
        missing++;
    }
    if (total) *total = n;
    return missing;
}

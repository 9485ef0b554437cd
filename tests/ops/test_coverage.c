/* Fails when an operator in specs/native_functions.yaml has no test case: a test file names it
 * with TG_COVERS (tg_cover.h), or a case of the value table (kt_case.h) does. */
#include <criterion/criterion.h>

#include "kt_case.h"
#include "tg_op_list.h"

/* GNU ld defines these for every section whose name is a C identifier. */
extern const char *const __start_tg_cover[];
extern const char *const __stop_tg_cover[];

/* Keeps the section present (and __start/__stop defined) even before any test declares one. */
TG_COVERS((const char *)0);

static bool covered(const char *name)
{
    return cover_section_has(__start_tg_cover, __stop_tg_cover, name) ||
           kt_cases_cover(name, false);
}

Test(coverage, every_operator_has_a_test_case)
{
    static const cover_op ops[] = { TG_OP_LIST(COVER_OP){ 0 } };
    int total, missing = cover_report_missing(ops, covered, "test case", NULL, &total);
    cr_expect_eq(missing, 0, "%d of %d operators have no test case (listed on stderr)", missing,
                 total);
}

Test(coverage, covered_names_are_real_operators)
{
    for (const char *const *p = __start_tg_cover; p < __stop_tg_cover; p++)
        if (*p)
            cr_expect(cover_is_operator(*p),
                      "TG_COVERS names '%s', which is not an operator in the spec", *p);
}

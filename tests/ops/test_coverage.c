/* Fails when an operator in specs/native_functions.yaml has no test case (see tg_cover.h). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tg_cover.h"
#include "tg_op_list.h"

/* GNU ld defines these for every section whose name is a C identifier. */
extern const char *const __start_tg_cover[];
extern const char *const __stop_tg_cover[];

/* Keeps the section present (and __start/__stop defined) even before any test declares one. */
TG_COVERS((const char *)0);

static bool covered(const char *name)
{
    for (const char *const *p = __start_tg_cover; p < __stop_tg_cover; p++)
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

Test(coverage, every_operator_has_a_test_case)
{
    int missing = 0, total = 0;
#define TG__CHECK(cname, schema_name)                                                      \
    total++;                                                                               \
    if (!covered(schema_name)) {                                                           \
        fprintf(stderr, "no test case covers operator %s (tg_%s)\n", schema_name, #cname); \
        missing++;                                                                         \
    }
    TG_OP_LIST(TG__CHECK)
#undef TG__CHECK
    cr_expect_eq(missing, 0, "%d of %d operators have no test case (listed on stderr)", missing, total);
}

Test(coverage, covered_names_are_real_operators)
{
    for (const char *const *p = __start_tg_cover; p < __stop_tg_cover; p++)
        if (*p) cr_expect(known(*p), "TG_COVERS names '%s', which is not an operator in the spec", *p);
}

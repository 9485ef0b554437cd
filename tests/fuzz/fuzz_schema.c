/* Fuzz harness: one schema string (the text of a `func:` entry), parsed by tgm_parse_schema.
 * Oracle, beyond "no crash, no leak, no undefined behaviour": a schema that parses is formatted
 * back to text (tgm_schema_format, which autogen relies on for the schemas it synthesises) and
 * that text must parse, without errors, to the same schema, and format to the same text. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "spec/frontend.h"
#include "fuzz_common.h"

static int str_eq(const char *a, const char *b) { return a == b || (a && b && !strcmp(a, b)); }

/* Compares what the schema means; positions and the original text may differ. */
static const char *schema_diff(const tgm_schema *a, const tgm_schema *b)
{
    if (!str_eq(a->full_name, b->full_name) || !str_eq(a->base, b->base) ||
        !str_eq(a->overload, b->overload))
        return "name";
    if (a->inplace != b->inplace || a->dunder != b->dunder) return "in-place or dunder flag";
    if (a->nargs != b->nargs) return "argument count";
    for (int i = 0; i < a->nargs; i++) {
        const tgm_arg *x = &a->args[i], *y = &b->args[i];
        if (!str_eq(x->name, y->name)) return "argument name";
        if (!tgm__type_eq(&x->type, &y->type)) return "argument type";
        if (x->kwarg_only != y->kwarg_only || x->is_out != y->is_out) return "kwarg-only or out";
        if (x->def.kind != y->def.kind || !str_eq(x->def.text, y->def.text)) return "default";
    }
    if (a->nrets != b->nrets) return "return count";
    for (int i = 0; i < a->nrets; i++) {
        if (!str_eq(a->rets[i].name, b->rets[i].name)) return "return name";
        if (!tgm__type_eq(&a->rets[i].type, &b->rets[i].type)) return "return type";
    }
    return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_strndup(data, size);
    tgm_arena *a = tgm_arena_new();
    tgm_schema s, back;
    if (tgm_parse_schema(a, text, (tgm_loc){ "<fuzz>", 1, 1 }, &s) == 0) {
        const char *formatted = tgm_schema_format(a, &s);
        int before = tgm_error_count();
        if (tgm_parse_schema(a, formatted, (tgm_loc){ "<formatted>", 1, 1 }, &back) != 0 ||
            tgm_error_count() != before)
            fuzz_fail("the formatted schema does not parse: '%s' (from '%s')", formatted, text);
        const char *diff = schema_diff(&s, &back);
        if (diff)
            fuzz_fail("the formatted schema parses to another %s: '%s' (from '%s')", diff,
                      formatted, text);
        const char *again = tgm_schema_format(a, &back);
        if (strcmp(formatted, again))
            fuzz_fail("formatting is not stable: '%s' then '%s'", formatted, again);
        (void)tgm__schema_kind(&s);
    }
    tgm_arena_free(a);
    free(text);
    return 0;
}

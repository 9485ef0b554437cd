/* The autograd vocabulary file (specs/autograd_functions.yaml, docs/autograd.md): a list of
 * `- func: name.overload(args) -> returns` entries (optionally with `doc:`), the functions
 * derivative formulas may call that are not operators. Read here as schemas; the formula
 * compiler (formula/formula_vocab.c) turns them into callable operators. */
#include <string.h>

#include "spec/frontend.h"

typedef struct vocab_ctx {
    tgm_func **funcs;
    int n, cap;
} vocab_ctx;

static vocab_ctx *current; /* tgm__parse_entries' callback has no user pointer */

static void parse_entry(tgm_parse_ctx *c, const yaml_node_t *entry)
{
    static const char *const known[] = { "func", "doc", NULL };
    const yaml_node_t *func = NULL;
    bool fields_ok = true;
    for (yaml_node_pair_t *p = entry->data.mapping.pairs.start; p < entry->data.mapping.pairs.top;
         p++) {
        const char *name = tgm__field_name(c->d, entry->data.mapping.pairs.start, p, known);
        if (!name) {
            fields_ok = false;
            continue;
        }
        const yaml_node_t *val = tgm__yaml_node(c->d, p->value);
        if (val->type != YAML_SCALAR_NODE) {
            tgm_error(tgm__node_loc(c->d, val), "'%s' must be a string, not %s", name,
                      tgm__node_kind(val));
            fields_ok = false;
        } else if (!strcmp(name, "func")) {
            func = val;
        }
    }
    if (!func) {
        if (fields_ok)
            tgm_error(tgm__node_loc(c->d, entry), "autograd vocabulary entry has no 'func:' field");
        return;
    }
    tgm_func *f = tgm_alloc(c->a, sizeof *f);
    f->loc = tgm__node_loc(c->d, entry);
    f->kind = TGM_KIND_FUNCTIONAL;
    const char *text = tgm__scalar(func);
    tgm_loc at = tgm__text_start(c->d, func);
    if (tgm_parse_schema(c->a, text, at, &f->schema) != 0) return;
    f->schema.span = tgm__node_span(c->a, c->d, func);
    const tgm_schema *s = &f->schema;
    /* A helper computes a value: it writes none of its arguments and is never in place. */
    for (int i = 0; i < s->nargs; i++)
        if (s->args[i].type.alias.is_write) {
            tgm_error(s->args[i].loc,
                      "argument '%s' of autograd function '%s' is written to (%s!); "
                      "vocabulary functions return new values",
                      s->args[i].name, s->full_name, s->args[i].type.alias.set);
            return;
        }
    if (s->inplace || s->nrets == 0) {
        tgm_error(s->loc, "autograd function '%s' %s", s->full_name,
                  s->inplace ? "is in place (its name ends in '_'); vocabulary functions return "
                               "new values"
                             : "returns nothing; formulas need a value");
        return;
    }
    for (int i = 0; i < current->n; i++)
        if (!strcmp(current->funcs[i]->schema.full_name, s->full_name)) {
            tgm_error(s->loc, "duplicate autograd function '%s'", s->full_name);
            tgm_note(current->funcs[i]->schema.loc, "the first one is here");
            return;
        }
    *TGS_PUSH(c->a, current->funcs, current->n, current->cap) = f;
}

int tgm_parse_vocab(tgm_arena *a, const char *path, tgm_func ***out, int *n)
{
    tgm_model m = { .arena = a };
    vocab_ctx ctx = { 0 };
    vocab_ctx *saved = current;
    current = &ctx;
    int errors = tgm__parse_entries(&m, path, "func", parse_entry);
    current = saved;
    *out = ctx.funcs;
    *n = ctx.n;
    return errors;
}

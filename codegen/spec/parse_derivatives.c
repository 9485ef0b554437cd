/* derivatives.yaml -> tgm_derivative records.
 *
 * Each entry is `name:` (a schema that must match a native function, checked in validate.c),
 * optionally `output_differentiability:`, and formula keys: one argument name (`self:`), several
 * joined by commas for a joint formula (`self, other:`), or output names (`result:`,
 * `result0:`, a named return) for forward-mode formulas. PyTorch 1.13 also nests formulas
 * under `dispatch:` (`Default:` / `AutogradNestedTensor:`); tgen takes `Default:`, the
 * formulas the CPU and CUDA autograd kernels use. Formulas stay text with their position; the
 * formula parser (a later stage) compiles them. */
#include <string.h>

#include "spec/frontend.h"

/* Splits `self, other` into trimmed names; false (after an error) when a part is not a name.
 * k is a scalar: callers took its text with tgm__field_name, which rejects list and mapping
 * keys (tgm__node_names would take `[self]` as a list of names). */
static bool split_vars(tgm_parse_ctx *c, const yaml_node_t *k, tgm_formula *f)
{
    const char **names;
    tgm_loc *locs;
    int n = tgm__node_names(c->a, c->d, k, "formula key", &names, &locs);
    if (n < 0) return false;
    for (int i = 0; i < n; i++)
        if (!tgm__is_ident(names[i])) {
            tgm_error(locs[i],
                      "formula key '%s' must name arguments or outputs, separated by commas",
                      tgm__scalar(k));
            return false;
        }
    f->vars = tgm_strdup(c->a, tgm__scalar(k));
    f->vars_loc = tgm__node_loc(c->d, k);
    f->var_names = names;
    f->nvars = n;
    return true;
}

/* One `key: formula` pair. Which list it goes to follows PyTorch: a key whose first name is an
 * argument is a backward formula, anything else a forward (result) formula. */
static void add_formula(tgm_parse_ctx *c, tgm_derivative *dv, bool have_schema,
                        const yaml_node_t *k, const yaml_node_t *v, int *fcap, int *rcap, int *ncap)
{
    tgm_formula f = { 0 };
    if (!split_vars(c, k, &f)) return;
    if (v->type != YAML_SCALAR_NODE) {
        tgm_error(tgm__node_loc(c->d, v), "the formula for '%s' must be a string, not %s", f.vars,
                  tgm__node_kind(v));
        return;
    }
    f.text = tgm_strdup(c->a, tgm__scalar(v));
    f.loc = tgm__text_start(c->d, v);
    f.span = tgm__node_span(c->a, c->d, v);
    /* PyTorch 1.5's `indices: TensorList()`: an empty list of gradients for a list argument
     * (its Tensor?[] was a TensorList then, with gradients), that is none. */
    if (!strcmp(f.text, "non_differentiable") || !strcmp(f.text, "TensorList()")) {
        for (int i = 0; i < f.nvars; i++)
            *TGS_PUSH(c->a, dv->non_differentiable, dv->nnondiff, *ncap) = f.var_names[i];
        return;
    }
    if (have_schema && tgm_schema_arg_index(&dv->schema, f.var_names[0]) < 0)
        *TGS_PUSH(c->a, dv->result_formulas, dv->nresult, *rcap) = f;
    else *TGS_PUSH(c->a, dv->formulas, dv->nformulas, *fcap) = f;
}

/* A YAML 1.1 bool, as PyYAML (and so torchgen) reads a plain scalar: 1 true, 0 false, -1 not
 * a bool. */
static int yaml_bool(const char *s)
{
    /* the words true .. off in their three spellings; the first nine are true */
    static const char *const words[] = { "true", "True", "TRUE", "yes",   "Yes",   "YES",
                                         "on",   "On",   "ON",   "false", "False", "FALSE",
                                         "no",   "No",   "NO",   "off",   "Off",   "OFF" };
    for (int i = 0; i < 18; i++)
        if (!strcmp(s, words[i])) return i < 9;
    return -1;
}

/* `output_differentiability:` as torchgen reads it: a list of bools, or one condition (PyTorch's
 * C++, quoted or not: `["!dtype || isDifferentiableType(*dtype)"]`,
 * `[isDifferentiableType(dtype)]`), which counts as True here. torchgen takes a condition only
 * as the single item of the list (an operator with one output). An item in error counts as
 * True, so that formulas reading its gradient do not fail a second time. */
static void parse_output_diff(tgm_parse_ctx *c, tgm_derivative *dv, const yaml_node_t *v)
{
    dv->output_differentiability_loc = tgm__node_loc(c->d, v);
    if (v->type != YAML_SEQUENCE_NODE) {
        tgm_error(tgm__node_loc(c->d, v),
                  "'output_differentiability' must be a list of True/False, not %s",
                  tgm__node_kind(v));
        return;
    }
    int n = (int)(v->data.sequence.items.top - v->data.sequence.items.start);
    dv->output_differentiability = tgm_alloc(c->a, (size_t)n * sizeof(bool) + 1);
    dv->output_differentiability_cond = tgm_alloc(c->a, (size_t)n * sizeof(char *) + 1);
    dv->noutput_diff = n;
    for (int i = 0; i < n; i++) {
        yaml_node_t *item = tgm__yaml_node(c->d, v->data.sequence.items.start[i]);
        dv->output_differentiability[i] = true;
        if (item->type != YAML_SCALAR_NODE) {
            tgm_error(tgm__node_loc(c->d, item),
                      "'output_differentiability' items must be True or False, not %s",
                      tgm__node_kind(item));
            continue;
        }
        const char *s = tgm__scalar(item);
        bool plain = item->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ||
                     item->data.scalar.style == YAML_ANY_SCALAR_STYLE;
        int b = plain ? yaml_bool(s) : -1;
        if (b >= 0) {
            dv->output_differentiability[i] = b;
        } else if (!*s) {
            tgm_error(tgm__node_loc(c->d, item),
                      "'output_differentiability' items must be True, False or a condition, not an "
                      "empty value");
        } else if (n != 1) {
            tgm_error(tgm__node_loc(c->d, item),
                      "'output_differentiability' item '%s' is a condition (not True or False); "
                      "a condition is only allowed as the one item of the list, for an operator "
                      "with one output",
                      s);
        } else {
            dv->output_differentiability_cond[i] = tgm_strdup(c->a, s);
        }
    }
}

static void parse_dispatch(tgm_parse_ctx *c, tgm_derivative *dv, bool have_schema,
                           const yaml_node_t *v, int *fcap, int *rcap, int *ncap)
{
    if (v->type != YAML_MAPPING_NODE) {
        tgm_error(tgm__node_loc(c->d, v),
                  "'dispatch' must be a mapping of autograd keys to formulas, not %s",
                  tgm__node_kind(v));
        return;
    }
    bool have_default = false;
    const char *others = NULL;
    yaml_node_pair_t *pairs = v->data.mapping.pairs.start;
    for (yaml_node_pair_t *p = pairs; p < v->data.mapping.pairs.top; p++) {
        yaml_node_t *k = tgm__yaml_node(c->d, p->key), *val = tgm__yaml_node(c->d, p->value);
        const char *key = tgm__field_name(c->d, pairs, p, NULL);
        if (!key) continue;
        bool is_default = !strcmp(key, "Default");
        if (!is_default && strncmp(key, "Autograd", 8)) {
            tgm_error(tgm__node_loc(c->d, k),
                      "unknown derivatives dispatch key '%s' (expected Default or Autograd...)",
                      key);
            continue;
        }
        if (val->type != YAML_MAPPING_NODE) {
            tgm_error(tgm__node_loc(c->d, val), "'%s' must be a mapping of formulas, not %s", key,
                      tgm__node_kind(val));
            continue;
        }
        if (!is_default) {
            others = others ? tgs_fmt(c->a, "%s, %s", others, key) : tgm_strdup(c->a, key);
            continue;
        }
        have_default = true;
        yaml_node_pair_t *formulas = val->data.mapping.pairs.start;
        for (yaml_node_pair_t *q = formulas; q < val->data.mapping.pairs.top; q++)
            if (tgm__field_name(c->d, formulas, q, NULL))
                add_formula(c, dv, have_schema, tgm__yaml_node(c->d, q->key),
                            tgm__yaml_node(c->d, q->value), fcap, rcap, ncap);
    }
    /* No `Default:` is allowed (PyTorch has an AutogradNestedTensor-only entry): then the
     * function has no formulas for the keys tgen compiles. */
    (void)have_default;
    dv->dispatch_note = others;
}

static void parse_entry(tgm_parse_ctx *c, const yaml_node_t *entry)
{
    tgm_derivative *dv = tgm_alloc(c->a, sizeof *dv);
    dv->loc = tgm__node_loc(c->d, entry);
    yaml_node_t *name = NULL, *dispatch = NULL, *first_formula = NULL;
    yaml_node_pair_t *pairs = entry->data.mapping.pairs.start, *end = entry->data.mapping.pairs.top;
    for (yaml_node_pair_t *p = pairs; p < end; p++) {
        const char *key = tgm__field_name(c->d, pairs, p, NULL);
        if (!key) continue;
        if (c->sectioned && !strcmp(key, "version")) continue; /* parse_sections.c's */
        if (!strcmp(key, "name")) name = tgm__yaml_node(c->d, p->value);
        else if (!strcmp(key, "dispatch")) dispatch = tgm__yaml_node(c->d, p->key);
        else if (strcmp(key, "output_differentiability") && !first_formula)
            first_formula = tgm__yaml_node(c->d, p->key);
    }
    bool ok = false;
    if (!name) {
        tgm_error(dv->loc, "entry has no 'name:' field");
    } else if (name->type != YAML_SCALAR_NODE) {
        tgm_error(tgm__node_loc(c->d, name), "'name' must be a schema string, not %s",
                  tgm__node_kind(name));
    } else {
        dv->name_text = tgm_strdup(c->a, tgm__scalar(name));
        dv->name_loc = tgm__text_start(c->d, name);
        ok = tgm__parse_schema_span(c->a, dv->name_text, dv->name_loc,
                                    tgm__node_span(c->a, c->d, name), &dv->schema) == 0;
    }
    if (dispatch && first_formula)
        tgm_error(tgm__node_loc(c->d, first_formula),
                  "formulas must go under 'dispatch:' when an entry has one");
    int fcap = 0, rcap = 0, ncap = 0;
    for (yaml_node_pair_t *p = pairs; p < end; p++) {
        yaml_node_t *k = tgm__yaml_node(c->d, p->key), *v = tgm__yaml_node(c->d, p->value);
        if (k->type != YAML_SCALAR_NODE || !strcmp(tgm__scalar(k), "name") ||
            (c->sectioned && !strcmp(tgm__scalar(k), "version")))
            continue;
        if (!strcmp(tgm__scalar(k), "output_differentiability")) parse_output_diff(c, dv, v);
        else if (!strcmp(tgm__scalar(k), "dispatch"))
            parse_dispatch(c, dv, ok, v, &fcap, &rcap, &ncap);
        else add_formula(c, dv, ok, k, v, &fcap, &rcap, &ncap);
    }
    if (ok) tgm__add_deriv(c->m, dv);
}

int tgm_parse_derivatives(tgm_model *m, const char *path)
{
    return tgm__parse_entries(m, path, "name", parse_entry);
}

/* Validation: what one entry cannot check alone. Runs once after parsing both files; fills
 * the derived fields of the model (kind, delegate, functional, derivative->func, the autogen
 * entries, the name index) and reports every inconsistency it finds. */
#include <stdio.h>
#include <string.h>

#include "spec/frontend.h"

/* ---- per entry ---- */

static void check_inplace(tgm_arena *a, const tgm_func *f)
{
    const tgm_schema *s = &f->schema;
    /* torchgen's rule: `self` is found by name among the positional arguments (those before
     * it are "pre-self" positionals), so it need not be first. */
    int at = tgm_schema_self_index(s);
    const tgm_arg *self = at >= 0 ? &s->args[at] : NULL;
    if (!self || self->type.base != TGM_TENSOR || !self->type.alias.is_write) {
        tgm_error(self ? self->loc : s->loc,
                  "in-place function '%s' must take a write-aliased positional 'self', such as "
                  "'Tensor(a!) self'",
                  s->full_name);
        return;
    }
    /* `-> ()` is allowed: PyTorch's _foreach_*_ functions return nothing. */
    const tgm_type *t = s->nrets > 0 ? &s->rets[0].type : NULL;
    if (t && !(t->alias.set && !strcmp(t->alias.set, self->type.alias.set) && t->alias.is_write &&
               t->is_list == self->type.is_list))
        tgm_error(s->rets[0].loc, "in-place function '%s' must return self as '%s', not '%s'",
                  s->full_name, tgm__type_str(a, &self->type), tgm__type_str(a, t));
}

static void check_out(tgm_arena *a, const tgm_func *f)
{
    const tgm_schema *s = &f->schema;
    if (s->nrets == 0) return; /* PyTorch's out= functions with list outs return () */
    int k = 0;
    for (int i = 0; i < s->nargs; i++) {
        const tgm_arg *out = &s->args[i];
        if (!out->is_out) continue;
        if (k >= s->nrets) {
            tgm_error(s->rets[s->nrets - 1].loc,
                      "out= function '%s' must return its out= argument '%s' too", s->full_name,
                      out->name);
            return;
        }
        const tgm_type *t = &s->rets[k].type;
        if (!t->alias.set || !t->alias.is_write || strcmp(t->alias.set, out->type.alias.set) ||
            t->is_list != out->type.is_list) {
            tgm_error(s->rets[k].loc,
                      "out= function '%s' must return its out= arguments in order: return %d "
                      "should be '%s', not '%s'",
                      s->full_name, k + 1, tgm__type_str(a, &out->type), tgm__type_str(a, t));
            return;
        }
        k++;
    }
    if (k < s->nrets)
        tgm_error(s->rets[k].loc,
                  "out= function '%s' returns more values than it has out= arguments",
                  s->full_name);
}

/* With a tags file, every tag must be one it defines. */
static void check_tags(const tgm_model *m, const tgm_func *f)
{
    for (int i = 0; m->tags && i < f->ntags; i++)
        if (!tgm__map_get(m->tags, f->tags[i]))
            tgm_error(f->tag_locs[i], "unknown tag '%s' (the tags file does not define it)",
                      f->tags[i]);
}

static void check_func(tgm_model *m, tgm_func *f)
{
    const tgm_schema *s = &f->schema;
    check_tags(m, f);
    if (f->kind == TGM_KIND_INPLACE) check_inplace(m->arena, f);
    if (s->inplace) {
        for (int i = 0; i < s->nargs; i++)
            if (s->args[i].is_out)
                tgm_error(s->args[i].loc, "in-place function '%s' cannot have out= arguments",
                          s->full_name);
    }
    if (f->kind == TGM_KIND_OUT || f->kind == TGM_KIND_SCRATCH) check_out(m->arena, f);
    if (f->variant_method) {
        int i = 0;
        while (i < s->nargs && strcmp(s->args[i].name, "self")) i++;
        if (i == s->nargs || s->args[i].type.base != TGM_TENSOR || s->args[i].kwarg_only)
            tgm_error(s->loc, "'%s' has a method variant but no positional 'Tensor self' argument",
                      s->full_name);
    }
    if (!f->variant_function && !f->variant_method)
        tgm_error(f->loc, "'%s' has no variants", s->full_name);
    if (f->structured && f->kind != TGM_KIND_OUT)
        tgm_error(f->loc,
                  "'structured: True' is only allowed on out= functions, and '%s' is not one",
                  s->full_name);
    if (f->structured_inherits && !f->structured)
        tgm_error(f->loc, "'structured_inherits' needs 'structured: True'");
    if (f->structured && f->structured_delegate)
        tgm_error(f->structured_delegate_loc,
                  "a structured function cannot also have a 'structured_delegate'");
}

static void check_delegate(tgm_model *m, tgm_func *f)
{
    if (!f->structured_delegate) return;
    tgm_func *d = tgm_find_func(m, f->structured_delegate);
    if (!d) {
        tgm_error(f->structured_delegate_loc, "structured_delegate '%s' does not name a function",
                  f->structured_delegate);
        return;
    }
    if (!d->structured) {
        tgm_error(f->structured_delegate_loc,
                  "structured_delegate '%s' is not structured (it needs 'structured: True')",
                  f->structured_delegate);
        tgm_note(d->loc, "'%s' is declared here", d->schema.full_name);
        return;
    }
    f->delegate = d;
}

/* ---- Scalar overloads (docs/spec.md, "scalar_overload_of") ----
 * An entry with `scalar_overload_of: X` takes a Scalar where X takes a Tensor and is otherwise X:
 * the same arguments (names, types, alias annotations; kwarg-only markers and defaults may
 * differ) and the same returns, so that its kernel can wrap those Scalars and call X. */

static const char *kind_name(tgm_kind k)
{
    static const char *const names[] = { "functional", "in-place", "out=", "mutable", "scratch" };
    return names[k];
}

/* A `Scalar` in the overload where the target has a plain `Tensor` (no ?, [] or annotation). */
static bool scalar_for_tensor(const tgm_type *s, const tgm_type *t)
{
    return s->base == TGM_SCALAR && !s->elem_optional && !s->is_list && t->base == TGM_TENSOR &&
           !t->elem_optional && !t->is_list && !t->alias.set;
}

/* Checks the arguments position by position; returns how many Scalars stand for Tensors. */
static int match_scalar_args(tgm_arena *a, const tgm_func *f, const tgm_func *t)
{
    int nwrapped = 0;
    for (int i = 0; i < f->schema.nargs; i++) {
        const tgm_arg *fa = &f->schema.args[i], *ta = &t->schema.args[i];
        if (strcmp(fa->name, ta->name)) {
            tgm_error(fa->loc,
                      "argument %d of '%s' is '%s', but its Tensor overload '%s' calls it '%s'",
                      i + 1, f->schema.full_name, fa->name, t->schema.full_name, ta->name);
        } else if (scalar_for_tensor(&fa->type, &ta->type)) {
            nwrapped++;
        } else if (!tgm__type_eq(&fa->type, &ta->type)) {
            tgm_error(fa->loc,
                      "argument '%s' of '%s' is '%s', but its Tensor overload '%s' has '%s' "
                      "(only a Scalar may stand for a Tensor)",
                      fa->name, f->schema.full_name, tgm__type_str(a, &fa->type),
                      t->schema.full_name, tgm__type_str(a, &ta->type));
        }
    }
    return nwrapped;
}

/* "Tensor(a!)", "(Tensor, Tensor)": the return types of a schema. */
static const char *returns_text(tgm_arena *a, const tgm_schema *s)
{
    tgs_list types = { 0 };
    for (int i = 0; i < s->nrets; i++) tgs_list_add(&types, a, tgm__type_str(a, &s->rets[i].type));
    const char *list = tgs_list_join(&types, a, ", ");
    return s->nrets == 1 ? list : tgs_fmt(a, "(%s)", list);
}

static void match_scalar_returns(tgm_arena *a, const tgm_func *f, const tgm_func *t)
{
    const tgm_schema *fs = &f->schema, *ts = &t->schema;
    for (int i = 0; i < fs->nrets || i < ts->nrets; i++) {
        if (i < fs->nrets && i < ts->nrets && tgm__type_eq(&fs->rets[i].type, &ts->rets[i].type))
            continue;
        /* At the first return that differs, or the last one when the other has more. */
        tgm_loc loc = fs->nrets == 0 ? fs->loc : fs->rets[i < fs->nrets ? i : fs->nrets - 1].loc;
        tgm_error(loc, "'%s' returns '%s', but its Tensor overload '%s' returns '%s'",
                  fs->full_name, returns_text(a, fs), ts->full_name, returns_text(a, ts));
        return;
    }
}

static void check_scalar_overload(tgm_model *m, tgm_func *f)
{
    if (!f->scalar_overload_of) return;
    tgm_loc loc = f->scalar_overload_of_loc;
    const char *other = f->has_dispatch          ? "dispatch"
                        : f->structured_delegate ? "structured_delegate"
                        : f->structured          ? "structured"
                                                 : NULL;
    if (other) {
        tgm_error(loc,
                  "'%s' has both 'scalar_overload_of' and '%s': tgen generates the kernel of "
                  "a Scalar overload",
                  f->schema.full_name, other);
        return;
    }
    tgm_func *t = tgm_find_func(m, f->scalar_overload_of);
    if (!t) {
        tgm_error(loc, "scalar_overload_of '%s' does not name a function", f->scalar_overload_of);
        return;
    }
    int before = tgm_error_count();
    if (f->kind != t->kind)
        tgm_error(loc, "'%s' is %s but its Tensor overload '%s' is %s", f->schema.full_name,
                  kind_name(f->kind), t->schema.full_name, kind_name(t->kind));
    else if (f->schema.nargs != t->schema.nargs)
        tgm_error(loc, "'%s' has %d arguments but its Tensor overload '%s' has %d",
                  f->schema.full_name, f->schema.nargs, t->schema.full_name, t->schema.nargs);
    else if (match_scalar_args(m->arena, f, t) == 0 && tgm_error_count() == before)
        tgm_error(loc,
                  "'%s' has no Scalar where its Tensor overload '%s' has a Tensor: nothing to wrap",
                  f->schema.full_name, t->schema.full_name);
    else match_scalar_returns(m->arena, f, t);
    if (tgm_error_count() != before)
        tgm_note(t->schema.loc, "'%s' is declared as '%s'", t->schema.full_name, t->schema.text);
    else f->tensor_overload = t;
}

/* ---- functional siblings ----
 * PyTorch groups an operator's functional, in-place and out= overloads by signature: the
 * schema with the in-place `_`, the overload name, out= arguments, the tensor options of
 * factories (an out= tensor already has them), alias annotations, defaults and return names
 * taken away. */

static bool is_tensor_option(const tgm_arg *a)
{
    static const struct {
        const char *name;
        tgm_base base;
    } opts[] = {
        { "dtype", TGM_SCALAR_TYPE },
        { "layout", TGM_LAYOUT },
        { "device", TGM_DEVICE },
        { "pin_memory", TGM_BOOL },
    };
    for (size_t i = 0; i < sizeof opts / sizeof opts[0]; i++)
        if (a->kwarg_only && !strcmp(a->name, opts[i].name) && a->type.base == opts[i].base &&
            a->type.elem_optional && !a->type.is_list)
            return true;
    return false;
}

static const char *signature(tgm_arena *a, const tgm_func *f)
{
    const tgm_schema *s = &f->schema;
    const char *base = s->base;
    if (s->dunder && f->kind == TGM_KIND_INPLACE) /* __iand__ -> __and__ */
        base = tgs_fmt(a, "__%s", s->base + 3);
    /* One buffer: re-formatting the whole prefix per argument was quadratic in their number. */
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_printf(&b, "%s(", base);
    for (int i = 0; i < s->nargs; i++) {
        if (s->args[i].is_out || is_tensor_option(&s->args[i])) continue;
        tgm_type t = s->args[i].type;
        t.alias = (tgm_alias){ 0 };
        tgs_printf(&b, "%s%s %s,", s->args[i].kwarg_only ? "*" : "", tgm__type_str(a, &t),
                   s->args[i].name);
    }
    tgs_puts(&b, ")->");
    for (int i = 0; i < s->nrets; i++) {
        tgm_type t = s->rets[i].type;
        t.alias = (tgm_alias){ 0 };
        tgs_printf(&b, "%s,", tgm__type_str(a, &t));
    }
    return tgs_finish(&b, a);
}

static void link_functional(tgm_model *m)
{
    /* Signatures only live during this pass, in a scratch arena. */
    tgm_arena *tmp = tgm_arena_new();
    tgm_name_map *by_sig = tgm__map_new(tmp);
    for (int i = 0; i < m->nfuncs; i++)
        if (m->funcs[i]->kind == TGM_KIND_FUNCTIONAL)
            tgm__map_put(by_sig, signature(tmp, m->funcs[i]), m->funcs[i]);
    for (int i = 0; i < m->nfuncs; i++) {
        tgm_func *f = m->funcs[i];
        if (f->kind != TGM_KIND_FUNCTIONAL) f->functional = tgm__map_get(by_sig, signature(tmp, f));
    }
    tgm_arena_free(tmp);
}

/* ---- derivatives ---- */

static bool same_signature(const tgm_schema *a, const tgm_schema *b)
{
    if (a->nargs != b->nargs || a->nrets != b->nrets) return false;
    for (int i = 0; i < a->nargs; i++)
        if (strcmp(a->args[i].name, b->args[i].name) ||
            a->args[i].kwarg_only != b->args[i].kwarg_only ||
            !tgm__type_eq(&a->args[i].type, &b->args[i].type))
            return false;
    for (int i = 0; i < a->nrets; i++)
        if (!tgm__type_eq(&a->rets[i].type, &b->rets[i].type)) return false;
    return true;
}

static void check_formula_vars(tgm_arena *a, tgm_derivative *dv)
{
    const tgm_schema *s = &dv->schema;
    tgm_name_map *seen = tgm__map_new(a);
    for (int i = 0; i < dv->nformulas; i++) {
        const tgm_formula *f = &dv->formulas[i];
        for (int k = 0; k < f->nvars; k++) {
            const char *v = f->var_names[k];
            if (tgm_schema_arg_index(s, v) < 0)
                tgm_error(f->vars_loc, "'%s' is not an argument of '%s'", v, s->full_name);
            else if (tgm__map_put(seen, v, (void *)f))
                tgm_error(f->vars_loc, "more than one formula for '%s'", v);
        }
    }
    for (int i = 0; i < dv->nresult; i++) {
        const tgm_formula *f = &dv->result_formulas[i];
        for (int k = 0; k < f->nvars; k++)
            if (tgm_schema_output_index(s, f->var_names[k]) < 0)
                tgm_error(f->vars_loc, "'%s' is neither an argument nor an output of '%s'",
                          f->var_names[k], s->full_name);
    }
    for (int i = 0; i < dv->nnondiff; i++)
        if (tgm_schema_arg_index(s, dv->non_differentiable[i]) < 0)
            tgm_error(dv->loc, "non_differentiable '%s' is not an argument of '%s'",
                      dv->non_differentiable[i], s->full_name);
    if (dv->output_differentiability && dv->noutput_diff != s->nrets)
        tgm_error(dv->output_differentiability_loc,
                  "'output_differentiability' has %d entries but '%s' returns %d value%s",
                  dv->noutput_diff, s->full_name, s->nrets, s->nrets == 1 ? "" : "s");
}

static void check_derivatives(tgm_model *m)
{
    tgm_name_map *done = tgm__map_new(m->arena);
    for (int i = 0; i < m->nderivs; i++) {
        tgm_derivative *dv = m->derivs[i];
        tgm_func *f = tgm_find_func(m, dv->schema.full_name);
        if (!f || !same_signature(&f->schema, &dv->schema)) {
            tgm_error(dv->name_loc, "no native function matches derivative schema '%s'",
                      dv->name_text);
            if (f)
                tgm_note(f->schema.loc, "'%s' is declared as '%s'", f->schema.full_name,
                         f->schema.text);
            continue;
        }
        tgm_derivative *prev = tgm__map_put(done, f->schema.full_name, dv);
        if (prev) {
            tgm_error(dv->name_loc, "second derivative entry for '%s'", f->schema.full_name);
            tgm_note(prev->name_loc, "the first one is here");
            continue;
        }
        dv->func = f;
        check_formula_vars(m->arena, dv);
    }
}

int tgm_validate(tgm_model *m)
{
    int before = tgm_error_count();
    tgm__check_namespaces(m);
    m->func_index = tgm__map_new(m->arena);
    int nexplicit = m->nfuncs;
    for (int i = 0; i < nexplicit; i++) {
        tgm_func *f = m->funcs[i];
        f->kind = tgm__schema_kind(&f->schema);
        tgm_func *prev = tgm__map_put(m->func_index, f->schema.full_name, f);
        if (prev) {
            tgm_error(f->schema.loc, "duplicate overload '%s'", f->schema.full_name);
            tgm_note(prev->schema.loc, "previous definition of '%s' is here", f->schema.full_name);
        }
        int errors = tgm_error_count();
        check_func(m, f);
        f->invalid = tgm_error_count() != errors;
    }
    tgm__autogen_all(m);
    for (int i = 0; i < nexplicit; i++) {
        check_delegate(m, m->funcs[i]);
        check_scalar_overload(m, m->funcs[i]);
    }
    link_functional(m);
    check_derivatives(m);
    return tgm_error_count() - before;
}

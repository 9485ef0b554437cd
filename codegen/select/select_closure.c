/* The closure of a selection (tgk_close, select.h): one worklist over operators and object
 * files together, so that one pass reaches the fixed point however the two kinds of need
 * interleave (a composite kernel calls an operator whose derivative calls another whose kernel
 * is in a file calling a third ...).
 *
 * What the spec says an operator needs is read from the C view (api.h: delegate, functional,
 * mutating and Tensor-overload entries; the kernel symbols) and, with derivatives, from the
 * checked formulas (formula.h: each call's callee). What hand-written C needs is not in the
 * spec: it is read from the objects' symbol tables (`nm -o`), resolved as a linker resolves an
 * archive: an object is pulled when it defines a needed symbol, and then everything it leaves
 * undefined is needed in turn. An undefined symbol that is an operator's public function
 * selects that operator. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "formula/formula.h"
#include "select/select.h"
#include "spec/frontend.h"

/* The operators runtime/autograd/engine_ops.h is written with (emit_autograd.c's engine_ops):
 * a library that keeps autograd keeps them. */
static const char *const engine_ops[] = {
    "zeros", "sum.dim_IntList", "reshape", "to.dtype", "add.Tensor", "view", "sub.Tensor",
    "neg",   "copy_",           "clone",   "ones_like"
};

typedef struct object {
    const char *path;
    bool linked; /* always linked (the runtime's); else linked when needed */
    bool pulled;
    const char **undef;
    int nundef, cap;
} object;

/* What every selection's closure over one model reads (tgk_core_new): built once, so that
 * several selections against one spec cost one C view. */
struct tgk_core {
    const tgm_model *m;
    tga_ops ops;
    tgf_derivs ds;
    bool with_ds;           /* ds is set (derivatives given and checked) */
    tgm_name_map *func_at;  /* full name -> index in m->funcs, + 1 */
    tgm_name_map *by_fn;    /* public function symbol -> tga_op */
    tgm_name_map *siblings; /* "<key> <kernel>" -> tgs_list of full names */
};

typedef struct closure {
    tgm_arena *a;
    const tgm_model *m;
    const tga_ops *ops;
    const tgf_derivs *ds;                           /* NULL without derivatives */
    const tgm_name_map *func_at, *by_fn, *siblings; /* the core's */
    tgm_name_map *defined_in; /* symbol -> index + 1 in objs of the object defining it */
    tgm_name_map *needed;     /* symbols already processed */
    object *objs;
    int nobjs, objs_cap;
    bool *keep;
    bool by_object; /* the operator being added comes from an object's symbol */
    int nfrom_objects;
    /* The worklist: operators to add (pointers into ops). */
    const tga_op **work;
    int nwork, work_cap;
} closure;

static void need_symbol(closure *c, const char *sym);

static void add_op(closure *c, const tga_op *op)
{
    if (!op) return;
    intptr_t at = (intptr_t)tgm__map_get(c->func_at, op->f->schema.full_name);
    if (!at || c->keep[at - 1]) return;
    c->keep[at - 1] = true;
    if (c->by_object) c->nfrom_objects++;
    *TGS_PUSH(c->a, c->work, c->nwork, c->work_cap) = op;
}

static void add_name(closure *c, const char *full_name)
{
    add_op(c, tgm__map_get(c->ops->by_name, full_name));
}

static void pull(closure *c, object *o)
{
    if (o->pulled) return;
    o->pulled = true;
    for (int i = 0; i < o->nundef; i++) need_symbol(c, o->undef[i]);
}

static void need_symbol(closure *c, const char *sym)
{
    if (tgm__map_put(c->needed, sym, (void *)sym)) return;
    const tga_op *op = tgm__map_get(c->by_fn, sym);
    if (op) {
        bool was = c->by_object;
        c->by_object = true;
        add_op(c, op);
        c->by_object = was;
        return;
    }
    intptr_t at = c->defined_in ? (intptr_t)tgm__map_get(c->defined_in, sym) : 0;
    /* a linked object is pulled whole after the spec's closure (tgk_close) */
    if (at && !c->objs[at - 1].linked) pull(c, &c->objs[at - 1]);
}

/* The operators and vocabulary functions a checked formula calls. */
static void formula_calls(closure *c, const tgf_node *n)
{
    if (!n) return;
    if (n->kind == TGF_CALL && n->callee) add_name(c, n->callee->f->schema.full_name);
    if (n->kind == TGF_HELPER && n->callee) need_symbol(c, n->callee->cname);
    for (int i = 0; i < n->nargs; i++) formula_calls(c, n->args[i]);
}

static void deriv_calls(closure *c, const tgf_deriv *d)
{
    if (!d) return;
    for (int i = 0; i < d->nformulas; i++) formula_calls(c, d->formulas[i].root);
    for (int f = 0; f < d->nfw; f++)
        for (int t = 0; t < d->fw[f].nterms; t++) formula_calls(c, d->fw[f].terms[t].root);
}

/* Everything operator op needs, added to the worklist. */
static void expand(closure *c, const tga_op *op)
{
    const tgm_func *f = op->f;
    add_op(c, op->delegate);
    add_op(c, op->functional);
    add_op(c, op->mutating);
    add_op(c, op->tensor_overload);
    if (f->delegate) add_name(c, f->delegate->schema.full_name);
    if (f->functional) add_name(c, f->functional->schema.full_name);
    if (f->tensor_overload) add_name(c, f->tensor_overload->schema.full_name);
    if (f->autogen_from) add_name(c, f->autogen_from->schema.full_name);
    for (int i = 0; i < f->ndispatch; i++) {
        const tgs_list *l = tgm__map_get(
            c->siblings, tgs_fmt(c->a, "%d %s", (int)f->dispatch[i].key, f->dispatch[i].kernel));
        for (int k = 0; l && k < l->n; k++) add_name(c, l->items[k]);
    }
    if (c->ds) deriv_calls(c, c->ds->by_op[op->index]);
    for (int k = 0; k < op->nkernels; k++) {
        need_symbol(c, op->kernels[k].symbol);
        if (op->kernels[k].target) need_symbol(c, op->kernels[k].target);
    }
}

/* Entries naming one kernel under one key share its symbol's spelling (api_kernels.c gives
 * each its own when their C types differ): selected together, the spelling stays the one the
 * full build's objects define. */
static void index_siblings(tgk_core *k, tgm_arena *a)
{
    k->siblings = tgm__map_new(a);
    for (int i = 0; i < k->m->nfuncs; i++) {
        const tgm_func *f = k->m->funcs[i];
        for (int d = 0; d < f->ndispatch; d++) {
            const char *key = tgs_fmt(a, "%d %s", (int)f->dispatch[d].key, f->dispatch[d].kernel);
            tgs_list *l = tgm__map_get(k->siblings, key);
            if (!l) {
                l = tgm_alloc(a, sizeof *l);
                tgm__map_put(k->siblings, key, l);
            }
            tgs_list_add(l, a, f->schema.full_name);
        }
    }
}

/* `nm -o` output: `<file>:<value> <type> <name>` or `<file>:<blanks> U <name>`, in sections
 * `# linked` (objects always linked) and `# candidates` (linked when needed). */
static int read_objects(closure *c, const char *path)
{
    FILE *fp = fopen(path, "r");
    if (!fp) {
        tgm_error((tgm_loc){ path, 0, 0 }, "cannot open the objects' symbol file");
        return 1;
    }
    c->defined_in = tgm__map_new(c->a);
    tgm_name_map *by_path = tgm__map_new(c->a);
    bool linked = true;
    char line[4096];
    while (fgets(line, sizeof line, fp)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!strcmp(line, "# linked") || !strcmp(line, "# candidates")) {
            linked = line[2] == 'l';
            continue;
        }
        char *colon = strchr(line, ':');
        if (!colon) continue;
        *colon = '\0';
        char w[3][1024];
        int n = sscanf(colon + 1, "%1023s %1023s %1023s", w[0], w[1], w[2]);
        const char *type = n == 3 ? w[1] : n == 2 ? w[0] : NULL;
        const char *name = n == 3 ? w[2] : n == 2 ? w[1] : NULL;
        if (!type || strlen(type) != 1) continue;
        intptr_t at = (intptr_t)tgm__map_get(by_path, line);
        if (!at) {
            object *o = TGS_PUSH(c->a, c->objs, c->nobjs, c->objs_cap);
            *o = (object){ .path = tgm_strdup(c->a, line), .linked = linked };
            at = c->nobjs;
            tgm__map_put(by_path, o->path, (void *)at);
        }
        object *o = &c->objs[at - 1];
        const char *sym = tgm_strdup(c->a, name);
        if (*type == 'U') *TGS_PUSH(c->a, o->undef, o->nundef, o->cap) = sym;
        else if (*type >= 'A' && *type <= 'Z') tgm__map_put(c->defined_in, sym, (void *)at);
    }
    fclose(fp);
    return 0;
}

tgk_core *tgk_core_new(const tgm_model *m, bool with_derivatives)
{
    int before = tgm_error_count();
    tgm_arena *a = m->arena;
    tgk_core *k = tgm_alloc(a, sizeof *k);
    k->m = m;
    if (tga_build_ops(m, a, &k->ops) != 0) return NULL;
    int nforward;
    if (with_derivatives && m->nderivs) {
        if (tgf_check_all(m, &k->ops, a, false, &k->ds) != 0 ||
            tgf_check_forward(&k->ds, &k->ops, a, &nforward) != 0)
            return NULL;
        k->with_ds = true;
    }
    k->func_at = tgm__map_new(a);
    for (int i = 0; i < m->nfuncs; i++)
        tgm__map_put(k->func_at, m->funcs[i]->schema.full_name, (void *)(intptr_t)(i + 1));
    k->by_fn = tgm__map_new(a);
    /* fn_name: tg_mm, or tg_add_fn for an operator with defaults (its macro's function) */
    for (int i = 0; i < k->ops.n; i++)
        tgm__map_put(k->by_fn, k->ops.ops[i].fn_name, &k->ops.ops[i]);
    index_siblings(k, a);
    return tgm_error_count() == before ? k : NULL;
}

int tgk_close(const tgk_core *core, const tgk_list *l, const char *objects, tgk_closure *out)
{
    int before = tgm_error_count();
    const tgm_model *m = core->m;
    closure c = { .a = m->arena,
                  .m = m,
                  .ops = &core->ops,
                  .ds = core->with_ds ? &core->ds : NULL,
                  .func_at = core->func_at,
                  .by_fn = core->by_fn,
                  .siblings = core->siblings };
    *out = (tgk_closure){ 0 };
    c.keep = tgm_alloc(c.a, (size_t)(m->nfuncs ? m->nfuncs : 1) * sizeof *c.keep);
    c.needed = tgm__map_new(c.a);
    if (objects && read_objects(&c, objects)) return tgm_error_count() - before;

    for (int i = 0; i < l->n; i++)
        if (l->entries[i].core) add_name(&c, l->entries[i].core->schema.full_name);
    if (c.ds)
        for (size_t i = 0; i < sizeof engine_ops / sizeof *engine_ops; i++)
            add_name(&c, engine_ops[i]);
    /* the spec's closure first, so that only what the objects alone need counts as theirs */
    while (c.nwork) expand(&c, c.work[--c.nwork]);
    for (int i = 0; i < c.nobjs; i++)
        if (c.objs[i].linked) pull(&c, &c.objs[i]);
    while (c.nwork) expand(&c, c.work[--c.nwork]);

    out->keep = c.keep;
    for (int i = 0; i < m->nfuncs; i++) out->nkept += c.keep[i];
    out->nfrom_objects = c.nfrom_objects;
    int cap = 0;
    for (int i = 0; i < c.nobjs; i++)
        if (c.objs[i].pulled) *TGS_PUSH(c.a, out->objs, out->nobjs, cap) = c.objs[i].path;
    return tgm_error_count() - before;
}

tgm_model tgk_reduced_model(const tgm_model *m, const bool *keep)
{
    tgm_model r = *m;
    r.funcs = NULL;
    r.nfuncs = 0;
    r.derivs = NULL;
    r.nderivs = 0;
    r.func_index = tgm__map_new(m->arena);
    for (int i = 0; i < m->nfuncs; i++) {
        if (!keep[i]) continue;
        tgm__add_func(&r, m->funcs[i]);
        tgm__map_put(r.func_index, m->funcs[i]->schema.full_name, m->funcs[i]);
    }
    for (int i = 0; i < m->nderivs; i++)
        if (m->derivs[i]->func && tgm__map_get(r.func_index, m->derivs[i]->func->schema.full_name))
            tgm__add_deriv(&r, m->derivs[i]);
    return r;
}

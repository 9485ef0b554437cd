/* The emission context every emitter writes into (emit_internal.h): templates, environments
 * and the queue of output files that emit.c writes at the end. Not an emitter itself. */
#include <stdint.h>

#include "emit/emit_internal.h"

tgt_template tge_template(tge_ctx *c, const char *name)
{
    return tgt_load(c->arena, c->opts->templates_dir, name);
}

tgt_env *tge_env(tge_ctx *c)
{
    tgt_env *e = tgt_env_new(c->arena);
    tgt_set(e, "source", tgs_c_comment(c->arena, c->source)); /* only used in comments */
    /* The library's names (tga_prefix): "tg", "TG", the op table "tg__ops"; "myops", ... */
    const char *prefix = c->ops.prefix;
    tgt_set(e, "prefix", prefix);
    tgt_set(e, "PREFIX", tge_guard_name(c, prefix));
    tgt_setf(e, "table", "%s__ops", prefix);
    tgt_set(e, "ns", c->model->ns ? c->model->ns : "aten");
    return e;
}

const char *tge_out_name(tge_ctx *c, const char *suffix)
{
    return tgs_fmt(c->arena, "%s_%s", c->ops.prefix, suffix);
}

const char *tge_op_dir(tge_ctx *c, const char *kind)
{
    return c->model->ns ? tgs_fmt(c->arena, "%s/%s", c->ops.prefix, kind) : kind;
}

tgs_list tge_per_op(tge_ctx *c, const char *item_template, tge_op_item item)
{
    tgt_template t = tge_template(c, item_template);
    tgs_list items = { 0 };
    for (int i = 0; i < c->ops.n; i++) tgs_list_add(&items, c->arena, item(c, &t, &c->ops.ops[i]));
    return items;
}

void tge_render_op_list_file(tge_ctx *c, const char *item_template, tge_op_item item,
                             const char *hole, const char *file_template, const char *name)
{
    tgs_list items = tge_per_op(c, item_template, item);
    tgt_env *e = tge_env(c);
    tgt_set_list(e, hole, &items);
    tge_render_file(c, file_template, e, c->opts->out_dir, name);
}

void tge_render_file(tge_ctx *c, const char *template_name, const tgt_env *e, const char *dir,
                     const char *name)
{
    tgt_template t = tge_template(c, template_name);
    tge_add_file(c, dir, name, tgt_render_str(&t, e, c->arena));
}

void tge_add_file(tge_ctx *c, const char *dir, const char *name, const char *text)
{
    if (!text) return; /* its template failed: already reported */
    *TGS_PUSH(c->arena, c->files, c->nfiles, c->files_cap) =
        (tge_file){ tgs_fmt(c->arena, "%s/%s", dir, name), text };
}

const tge_group *tge_groups(tge_ctx *c, int *n)
{
    if (!c->groups && c->ops.n > 0) {
        /* Two passes: number the groups and count their members, then fill them. */
        tgm_name_map *index = tgm__map_new(c->arena); /* base -> 1 + its group's index */
        int *group_of = tgm_alloc(c->arena, sizeof *group_of * (size_t)c->ops.n);
        c->groups = tgm_alloc(c->arena, sizeof *c->groups * (size_t)c->ops.n);
        for (int i = 0; i < c->ops.n; i++) {
            const char *base = c->ops.ops[i].f->schema.base;
            intptr_t at = (intptr_t)tgm__map_get(index, base);
            if (at == 0) {
                at = ++c->ngroups;
                tgm__map_put(index, base, (void *)at);
                c->groups[at - 1].base = base;
            }
            group_of[i] = (int)at - 1;
            c->groups[at - 1].n++;
        }
        for (int g = 0; g < c->ngroups; g++) {
            c->groups[g].ops = tgm_alloc(c->arena, sizeof(tga_op *) * (size_t)c->groups[g].n);
            c->groups[g].n = 0;
        }
        for (int i = 0; i < c->ops.n; i++) {
            tge_group *g = &c->groups[group_of[i]];
            g->ops[g->n++] = &c->ops.ops[i];
        }
    }
    *n = c->ngroups;
    return c->groups;
}

const char *tge_row_name(tge_ctx *c, const tga_op *op)
{
    return tgs_fmt(c->arena, "%s__row_%s", op->prefix, op->cname);
}

const char *tge_guard_name(tge_ctx *c, const char *base)
{
    char *s = tgm_strdup(c->arena, base);
    for (char *p = s; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    return s;
}

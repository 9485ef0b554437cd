/* Shards of the operator-wide generated sources (emit_internal.h, "shards"). */
#include <stdint.h>
#include <string.h>

#include "emit/emit_internal.h"

/* Groups a shard holds on average before the shard count doubles. */
#define GROUPS_PER_SHARD 48

typedef struct shard {
    tgs_list *sections; /* [nsections] */
    tgs_list includes;
    tgm_name_map *seen; /* include lines already added */
} shard;

struct tge_shard_kind {
    const char *kind, *file_template;
    const char *const *sections;
    int nsections;
    shard *shards; /* [tge_nshards] */
};

int tge_nshards(tge_ctx *c)
{
    if (!c->nshards) {
        int ngroups;
        tge_groups(c, &ngroups);
        c->nshards = 1;
        while (c->nshards * GROUPS_PER_SHARD < ngroups) c->nshards *= 2;
    }
    return c->nshards;
}

/* FNV-1a: the same shard for a group whatever else the spec holds. */
int tge_shard_of(tge_ctx *c, const char *base)
{
    uint32_t h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)base; *p; p++) h = (h ^ *p) * 16777619u;
    return (int)(h % (uint32_t)tge_nshards(c));
}

tge_shard_kind *tge_shard_kind_get(tge_ctx *c, const char *kind, const char *file_template,
                                   const char *const *sections, int nsections)
{
    for (int i = 0; i < c->nsharded; i++)
        if (!strcmp(c->sharded[i]->kind, kind)) return c->sharded[i];
    tge_shard_kind *k = tgm_alloc(c->arena, sizeof *k);
    *k = (tge_shard_kind){ kind, file_template, sections, nsections,
                           tgm_alloc(c->arena, sizeof(shard) * (size_t)tge_nshards(c)) };
    for (int s = 0; s < tge_nshards(c); s++) {
        k->shards[s].sections = tgm_alloc(c->arena, sizeof(tgs_list) * (size_t)nsections);
        memset(k->shards[s].sections, 0, sizeof(tgs_list) * (size_t)nsections);
        k->shards[s].includes = (tgs_list){ 0 };
        k->shards[s].seen = tgm__map_new(c->arena);
    }
    *TGS_PUSH(c->arena, c->sharded, c->nsharded, c->sharded_cap) = k;
    return k;
}

void tge_shard_add(tge_ctx *c, tge_shard_kind *k, int shard, int section, const char *text)
{
    if (text) tgs_list_add(&k->shards[shard].sections[section], c->arena, text);
}

void tge_shard_add_once(tge_ctx *c, tge_shard_kind *k, int shard, int section, const char *text)
{
    if (!tgm__map_put(k->shards[shard].seen, text, (void *)text))
        tge_shard_add(c, k, shard, section, text);
}

void tge_shard_include(tge_ctx *c, tge_shard_kind *k, int shard, const char *header)
{
    const char *line = tgs_fmt(c->arena, "#include \"%s\"", header);
    if (!tgm__map_put(k->shards[shard].seen, line, (void *)line))
        tgs_list_add(&k->shards[shard].includes, c->arena, line);
}

const char *tge_op_header(tge_ctx *c, const char *dir, const tga_op *op)
{
    bool own = op >= c->ops.ops && op < c->ops.ops + c->ops.n;
    return tgs_fmt(c->arena, "%s/%s.h", own ? tge_op_dir(c, dir) : dir, op->f->schema.base);
}

static const char *shard_file(tge_ctx *c, const char *kind, int s)
{
    return tge_nshards(c) == 1 ? tge_out_name(c, tgs_fmt(c->arena, "%s.c", kind))
                               : tge_out_name(c, tgs_fmt(c->arena, "%s_%d.c", kind, s));
}

void tge_render_shards(tge_ctx *c)
{
    for (int i = 0; i < c->nsharded; i++) {
        const tge_shard_kind *k = c->sharded[i];
        tgt_template t = tge_template(c, k->file_template);
        for (int s = 0; s < tge_nshards(c); s++) {
            tgt_env *e = tge_env(c);
            tgt_setf(e, "shard", "%d of %d", s, tge_nshards(c));
            tgt_set_list(e, "includes", &k->shards[s].includes);
            for (int n = 0; n < k->nsections; n++) {
                tgs_list items = k->shards[s].sections[n];
                if (items.n == 0) tgs_list_add(&items, c->arena, "/* (none) */");
                tgt_set_list(e, k->sections[n], &items);
            }
            tge_add_file(c, c->opts->out_dir, shard_file(c, k->kind, s),
                         tgt_render_str(&t, e, c->arena));
        }
    }
}

/* `<prefix>_<kind>.c` or `<prefix>_<kind>_<digits>.c` for a sharded kind. */
bool tge_is_shard_name(tge_ctx *c, const char *name)
{
    for (int i = 0; i < c->nsharded; i++) {
        const char *stem = tge_out_name(c, c->sharded[i]->kind);
        size_t n = strlen(stem);
        if (strncmp(name, stem, n) != 0) continue;
        const char *p = name + n;
        if (*p == '_') {
            if (!(*++p >= '0' && *p <= '9')) continue;
            while (*p >= '0' && *p <= '9') p++;
        }
        if (!strcmp(p, ".c")) return true;
    }
    return false;
}

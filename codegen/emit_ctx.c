/* The emission context every emitter writes into (emit_internal.h): templates, environments
 * and the queue of output files that emit.c writes at the end. Not an emitter itself. */
#include "emit_internal.h"

tgt_template tge_template(tge_ctx *c, const char *name) {
    return tgt_load(c->arena, c->opts->templates_dir, name);
}

tgt_env *tge_env(tge_ctx *c) {
    tgt_env *e = tgt_env_new(c->arena);
    tgt_set(e, "source", c->source);
    return e;
}

void tge_add_file(tge_ctx *c, const char *dir, const char *name, const char *text) {
    if (!text) return;   /* its template failed: already reported */
    if (c->nfiles == TGE_MAX_FILES) {
        tgm_error((tgm_loc){ name, 0, 0 }, "tgen: too many output files (raise TGE_MAX_FILES)");
        return;
    }
    c->files[c->nfiles++] = (tge_file){ tgs_fmt(c->arena, "%s/%s", dir, name), text };
}

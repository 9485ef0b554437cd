/* The driver of emission: tge_emit_all builds the C view of the model, runs every emitter
 * (each renders its files in memory, into the context of emit_ctx.c), and writes the files
 * whose text changed only when nothing failed (via a temporary file and rename, so a reader
 * never sees half a file and an unchanged file keeps its timestamp: make recompiles only what
 * changed). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "emit/emit_internal.h"

/* ------------------------------------------------------------------ writing */

/* The file's current content (NULL when it does not exist or cannot be read). */
static char *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    tgs_buf b;
    tgs_buf_init(&b);
    char chunk[8192];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) tgs_putn(&b, chunk, n);
    fclose(f);
    *len = b.len;
    if (!b.data) tgs_putn(&b, "", 0);
    return b.data;
}

static bool unchanged(const tge_file *f)
{
    size_t len = 0;
    char *old = read_file(f->path, &len);
    bool same = old && len == strlen(f->text) && memcmp(old, f->text, len) == 0;
    free(old);
    return same;
}

static int write_file(const tge_file *f)
{
    char tmp[4096];
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", f->path, (long)getpid());
    FILE *out = fopen(tmp, "wb");
    size_t len = strlen(f->text);
    bool ok = out && fwrite(f->text, 1, len, out) == len;
    if (out && fclose(out) != 0) ok = false;
    if (ok && rename(tmp, f->path) != 0) ok = false;
    if (!ok) {
        tgm_error((tgm_loc){ f->path, 0, 0 }, "cannot write: %s", strerror(errno));
        remove(tmp);
        return 1;
    }
    printf("tgen: wrote %s\n", f->path);
    return 0;
}

static void make_dir(const char *dir)
{
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
        tgm_error((tgm_loc){ dir, 0, 0 }, "cannot create directory: %s", strerror(errno));
}

/* The per-operator directories under the output directory (tge_op_dir: ops/ and kernels/ of
 * headers, ufunc/ of pointwise kernels; myops/ops/ ... for a library): tgen owns them whole. */
static const char *const op_dirs[] = { "ops", "kernels", "ufunc" };

/* Whether a file of `dir` is tgen's to remove when this run did not write it: the file of an
 * operator that left the spec (so that a kernel still including its header fails to compile
 * instead of building against a stale prototype, and no stale pointwise kernel is built), a
 * shard of an earlier shard count. */
typedef bool (*stale_rule)(tge_ctx *c, const char *name);

static bool is_source(tge_ctx *c, const char *name)
{
    (void)c;
    size_t len = strlen(name);
    return (len > 2 && (strcmp(name + len - 2, ".h") == 0 || strcmp(name + len - 2, ".c") == 0)) ||
           (len > 3 && strcmp(name + len - 3, ".cu") == 0);
}

static void remove_stale(tge_ctx *c, const char *dir, stale_rule rule)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *ent;
    while ((ent = readdir(d)) != NULL) {
        if (!rule(c, ent->d_name)) continue;
        const char *path = tgs_fmt(c->arena, "%s/%s", dir, ent->d_name);
        bool emitted = false;
        for (int i = 0; i < c->nfiles && !emitted; i++)
            emitted = strcmp(c->files[i].path, path) == 0;
        if (emitted) continue;
        if (remove(path) == 0) printf("tgen: removed %s\n", path);
        else tgm_error((tgm_loc){ path, 0, 0 }, "cannot remove: %s", strerror(errno));
    }
    closedir(d);
}

/* Whether this run writes a file into `dir` (an operator directory is made only then: a
 * library without pointwise operators gets no empty ufunc/). */
static bool writes_into(const tge_ctx *c, const char *dir)
{
    size_t n = strlen(dir);
    for (int i = 0; i < c->nfiles; i++)
        if (strncmp(c->files[i].path, dir, n) == 0 && c->files[i].path[n] == '/') return true;
    return false;
}

/* ------------------------------------------------------------------ entry point */

int tge_emit_all(const tgm_model *m, const tge_options *o)
{
    int errors_before = tgm_error_count();
    tge_ctx c = { 0 };
    c.model = m;
    c.opts = o;
    c.arena = tgm_arena_new();
    c.source = o->source_desc ? o->source_desc : "specs/native_functions.yaml";

    tga_build_ops(m, c.arena, &c.ops);
    if (tgm_error_count() == errors_before) {
        tge_emit_ops_h(&c);
        tge_emit_kernels_h(&c);
        tge_emit_ops_c(&c);
        tge_emit_register(&c);
        tge_emit_structured(&c);
        tge_emit_boxed(&c);
        tge_emit_op_list(&c);
        tge_emit_autograd(&c);
        tge_emit_api(&c);
        tge_emit_ufunc(&c);
        if (o->docs_dir) tge_emit_docs(&c);
        tge_render_shards(&c);
    }
    if (tgm_error_count() == errors_before) {
        make_dir(o->out_dir);
        if (m->ns) make_dir(tgs_fmt(c.arena, "%s/%s", o->out_dir, c.ops.prefix));
        for (size_t d = 0; d < sizeof op_dirs / sizeof *op_dirs; d++) {
            const char *dir = tgs_fmt(c.arena, "%s/%s", o->out_dir, tge_op_dir(&c, op_dirs[d]));
            if (writes_into(&c, dir)) make_dir(dir);
        }
        if (o->docs_dir) make_dir(o->docs_dir);
        for (int i = 0; i < c.nfiles; i++)
            if (!unchanged(&c.files[i])) write_file(&c.files[i]);
        for (size_t d = 0; d < sizeof op_dirs / sizeof *op_dirs; d++)
            remove_stale(&c, tgs_fmt(c.arena, "%s/%s", o->out_dir, tge_op_dir(&c, op_dirs[d])),
                         is_source);
        remove_stale(&c, o->out_dir, tge_is_shard_name);
    }
    tgm_arena_free(c.arena);
    return tgm_error_count() - errors_before;
}

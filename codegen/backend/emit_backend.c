/* Generating a backend (backend.h): <cname>_backend.h, the prototypes of the kernels its file
 * declares (typed like the operators' CPU kernels, so that the compiler checks the author's
 * definitions) and its registration function, and <cname>_backend_register.c, which registers
 * the device type and dispatch key, the kernel table and the fallback. Each custom section is
 * generated as an operator library by the usual emitters.
 *
 * A kernel's name is the file's cpp_namespace with `::` as `_`, then `_`, then the operator's
 * C name: `torch_xla_add` for add.Tensor under `cpp_namespace: torch_xla` (without
 * cpp_namespace, the backend's C name: `counting_add`). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "backend/backend.h"
#include "emit/emit.h"
#include "emit/template.h"

typedef struct gen {
    tgm_arena *a;
    const tgb_backend *b;
    tga_ops native;
    tga_ops *libs; /* one per b->libs */
} gen;

static const tga_op *op_of(const gen *g, const tgb_name *n)
{
    if (!n->ns) return tgm__map_get(g->native.by_name, n->name);
    for (int i = 0; i < g->b->nlibs; i++)
        if (!strcmp(g->b->libs[i].ns, n->ns)) return tgm__map_get(g->libs[i].by_name, n->name);
    return NULL;
}

/* The rows of the kernel table and the prototypes, one per `supported:` operator. */
static void kernels(gen *g, tgs_list *rows, tgs_list *protos)
{
    tgm_name_map *symbols = tgm__map_new(g->a);
    const tgb_backend *b = g->b;
    for (int i = 0; i < b->nnames[TGB_SUPPORTED]; i++) {
        const tgb_name *n = &b->names[TGB_SUPPORTED][i];
        const tga_op *op = op_of(g, n);
        if (!op) continue;
        const char *symbol = tgs_fmt(g->a, "%s_%s", b->kernel_prefix, op->cname);
        const tgb_name *first = tgm__map_put(symbols, symbol, (void *)n);
        if (first) {
            tgm_error(n->loc, "the kernels of '%s' and '%s' would both be named %s", first->name,
                      n->name, symbol);
            continue;
        }
        tgs_list_addf(rows, g->a, "{ %s, (tg_fnptr)%s },", tgs_c_string(g->a, op->row_name),
                      symbol);
        tgs_list_addf(protos, g->a, "/* %s */\n%s;", tga_schema_comment(g->a, op->f),
                      tga_kernel_decl(g->a, op, symbol));
    }
}

/* The `autograd:` operators: tensorgen's autograd key is one for every device (its kernels
 * come from derivatives), so a backend cannot register its own; they are listed. */
static const char *autograd_note(gen *g)
{
    const tgb_backend *b = g->b;
    if (!b->nnames[TGB_AUTOGRAD]) return "";
    tgs_list names = { 0 };
    for (int i = 0; i < b->nnames[TGB_AUTOGRAD]; i++)
        tgs_list_add(&names, g->a, b->names[TGB_AUTOGRAD][i].name);
    return tgs_fmt(g->a,
                   "/* Not registered: the autograd kernels the file gives for %s. tensorgen has "
                   "one Autograd key for every device, whose kernels come from derivatives.yaml "
                   "(docs/extending.md, \"A backend of your own\"). */",
                   tgs_c_comment(g->a, tgs_list_join(&names, g->a, ", ")));
}

static const char *render(gen *g, const char *dir, const char *name, const tgt_env *e)
{
    tgt_template t = tgt_load(g->a, dir, name);
    return t.text ? tgt_render_str(&t, e, g->a) : NULL;
}

/* Writes `text` to dir/name unless the file has it already (a temporary file, then rename). */
static void write_if_changed(tgm_arena *a, const char *dir, const char *name, const char *text)
{
    const char *path = tgs_fmt(a, "%s/%s", dir, name);
    size_t len = strlen(text);
    FILE *f = fopen(path, "rb");
    if (f) {
        char *old = malloc(len + 2);
        size_t n = old ? fread(old, 1, len + 1, f) : 0;
        bool same = old && n == len && !memcmp(old, text, len);
        free(old);
        fclose(f);
        if (same) return;
    }
    const char *tmp = tgs_fmt(a, "%s.tmp.%ld", path, (long)getpid());
    FILE *out = fopen(tmp, "wb");
    bool ok = out && fwrite(text, 1, len, out) == len;
    if (out && fclose(out) != 0) ok = false;
    if (!ok || rename(tmp, path) != 0) {
        tgm_error((tgm_loc){ path, 0, 0 }, "cannot write: %s", strerror(errno));
        remove(tmp);
        return;
    }
    printf("tgen: wrote %s\n", path);
}

int tgb_emit(const tgm_model *native, const tgb_backend *b, const char *templates_dir,
             const char *out_dir, const char *source_desc)
{
    int before = tgm_error_count();
    gen g = { .a = native->arena, .b = b };
    tga_build_ops(native, g.a, &g.native);
    g.libs = tgm_alloc(g.a, (size_t)(b->nlibs + 1) * sizeof *g.libs);
    for (int i = 0; i < b->nlibs; i++) tga_build_ops(b->libs[i].model, g.a, &g.libs[i]);
    if (tgm_error_count() != before) return tgm_error_count() - before;

    tgs_list rows = { 0 }, protos = { 0 }, includes = { 0 };
    kernels(&g, &rows, &protos);
    for (int i = 0; i < b->nlibs; i++)
        tgs_list_addf(&includes, g.a, "#include \"%s_op_types.h\"", b->libs[i].ns);
    if (protos.n == 0) tgs_list_add(&protos, g.a, "/* (none) */");
    tgt_env *e = tgt_env_new(g.a);
    tgt_set(e, "source", tgs_c_comment(g.a, source_desc));
    tgt_set(e, "name", tgs_c_comment(g.a, b->name));
    tgt_set(e, "cname", b->cname);
    char *guard = tgm_strdup(g.a, b->cname);
    for (char *p = guard; *p; p++)
        if (*p >= 'a' && *p <= 'z') *p = (char)(*p - 'a' + 'A');
    tgt_set(e, "GUARD", guard);
    tgt_set(e, "kernel_prefix", b->kernel_prefix);
    tgt_set_list(e, "lib_includes", &includes);
    tgt_set_list(e, "kernel_protos", &protos);
    tgt_set_list(e, "kernel_rows", &rows);
    tgt_set(e, "autograd_note", autograd_note(&g));
    const char *h = render(&g, templates_dir, "backend.h.in", e);
    const char *c = render(&g, templates_dir, "backend_register.c.in", e);
    if (tgm_error_count() != before) return tgm_error_count() - before;

    /* The libraries first: they write (and make) the output directory. */
    for (int i = 0; i < b->nlibs; i++) {
        tge_options o = { .templates_dir = templates_dir,
                          .out_dir = out_dir,
                          .source_desc = source_desc };
        tge_emit_all(b->libs[i].model, &o);
    }
    if (mkdir(out_dir, 0777) != 0 && errno != EEXIST)
        tgm_error((tgm_loc){ out_dir, 0, 0 }, "cannot create directory: %s", strerror(errno));
    if (tgm_error_count() == before) {
        write_if_changed(g.a, out_dir, tgs_fmt(g.a, "%s_backend.h", b->cname), h);
        write_if_changed(g.a, out_dir, tgs_fmt(g.a, "%s_backend_register.c", b->cname), c);
    }
    return tgm_error_count() - before;
}

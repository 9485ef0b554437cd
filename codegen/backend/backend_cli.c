/* `tgen --check --backend FILE NATIVE.yaml` and `tgen --gen --backend FILE --native NATIVE.yaml
 * --out DIR`: the backend file read and resolved against the loaded native spec, then its
 * summary printed or its files generated (cli.c calls these once the native spec validated). */
#include <stdio.h>

#include "backend/backend.h"
#include "base/strbuf.h"

static int load(const tgm_model *native, const char *file, const char *name,
                const char *native_path, tgb_backend *b)
{
    int errors = tgb_parse(native->arena, file, name, NULL, b);
    b->target = native_path;
    return errors ? errors : tgb_resolve(native, b);
}

static const char *plural(int n) { return n == 1 ? "" : "s"; }

void tgb_print_summary(const tgm_model *native, const tgb_backend *b)
{
    tgm_arena *a = native->arena;
    int nsup = b->nnames[TGB_SUPPORTED], ncustom = 0;
    for (int i = 0; i < nsup; i++) ncustom += b->names[TGB_SUPPORTED][i].ns != NULL;
    printf("ok: backend %s (%s_backend_register): %d kernel%s (%d of custom operators), a "
           "fallback for the rest\n",
           b->name, b->cname, nsup, plural(nsup), ncustom);
    if (b->nnames[TGB_AUTOGRAD])
        printf("not registered: %d autograd kernel%s (tensorgen's Autograd key is one for every "
               "device)\n",
               b->nnames[TGB_AUTOGRAD], plural(b->nnames[TGB_AUTOGRAD]));
    int lazy = b->nnames[TGB_FULL_CODEGEN] + b->nnames[TGB_IR_GEN] + b->nnames[TGB_SYMINT];
    if (lazy)
        printf("not compiled: lazy-tensor lists, names checked (full_codegen %d, ir_gen %d, "
               "symint %d)\n",
               b->nnames[TGB_FULL_CODEGEN], b->nnames[TGB_IR_GEN], b->nnames[TGB_SYMINT]);
    tgs_list libs = { 0 };
    for (int i = 0; i < b->nlibs; i++)
        tgs_list_addf(&libs, a, "%s (%s:) %d", b->libs[i].ns, b->libs[i].section,
                      b->libs[i].model->nfuncs);
    if (libs.n) printf("custom operators, one library each: %s\n", tgs_list_join(&libs, a, ", "));
    tgs_list vendor = { 0 };
    for (int i = 0; i < b->nvendor; i++)
        tgs_list_addf(&vendor, a, "%s %d", b->vendor[i].key, b->vendor[i].count);
    if (vendor.n) printf("vendor fields, kept as data: %s\n", tgs_list_join(&vendor, a, ", "));
    if (b->differing_schemas)
        printf("own schemas: %d entr%s give a schema that differs from the target spec's, "
               "whose schema is used\n",
               b->differing_schemas, b->differing_schemas == 1 ? "y" : "ies");
}

int tgb_cli_check(const tgm_model *native, const char *file, const char *name,
                  const char *native_path)
{
    tgb_backend b;
    int errors = load(native, file, name, native_path, &b);
    if (!errors) tgb_print_summary(native, &b);
    return errors;
}

int tgb_cli_gen(const tgm_model *native, const char *file, const char *name,
                const char *native_path, const char *templates_dir, const char *out_dir)
{
    tgb_backend b;
    int errors = load(native, file, name, native_path, &b);
    if (errors) return errors;
    const char *source = tgs_fmt(native->arena, "%s against %s", file, native_path);
    return tgb_emit(native, &b, templates_dir, out_dir, source);
}

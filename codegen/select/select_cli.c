/* `tgen --check --select FILE` and `tgen --gen --select FILE [--select-objects NM]` (cli.c
 * calls these after loading and validating the core spec). */
#include <stdio.h>
#include <string.h>

#include "emit/emit.h"
#include "select/select.h"
#include "select/select_cli.h"
#include "spec/frontend.h"

static int read_and_resolve(const tgm_model *m, const char *path, tgk_list *l)
{
    /* the entries that read well are resolved even when others did not: a name's error does
     * not follow from another entry's */
    int errors = tgk_read(m->arena, path, l);
    return errors + tgk_resolve(m, l);
}

/* "et_copy 2, dim_order_ops 3, aten_custom 2 (aten's)": the custom operators' libraries. */
static const char *libraries(tgm_arena *a, const tgk_list *l, int *total)
{
    tgs_list parts = { 0 };
    *total = 0;
    for (int i = 0; i < l->nlibs; i++) {
        const tgk_library *lib = &l->libs[i];
        *total += lib->model->nfuncs;
        tgs_list_addf(&parts, a, "%s %d%s", lib->ns, lib->model->nfuncs,
                      strcmp(lib->ns, lib->written) ? tgs_fmt(a, " (%s's)", lib->written) : "");
    }
    return tgs_list_join(&parts, a, ", ");
}

/* The summary lines of --check --select. */
static const char *summary(const tgm_model *m, const tgk_list *l, const tgk_closure *cl)
{
    tgm_arena *a = m->arena;
    int ops = 0, funcs = 0, core_kernels = 0, custom;
    for (int i = 0; i < l->n; i++) {
        ops += l->entries[i].core && !l->entries[i].is_func;
        funcs += l->entries[i].core && l->entries[i].is_func;
        if (l->entries[i].core) core_kernels += l->entries[i].nkernels;
    }
    const char *libs = libraries(a, l, &custom);
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_printf(&b, "selection %s: %d entries: %d core operators", l->path, l->n, ops + funcs);
    if (funcs) tgs_printf(&b, " (%d declared with 'func:')", funcs);
    if (custom) tgs_printf(&b, ", %d custom operators", custom);
    tgs_printf(&b, "; with what they call: %d of %d core entries\n", cl->nkept, m->nfuncs);
    if (custom) {
        tgs_printf(&b,
                   "custom operators, one library each: %s; CPU kernel: the 'arg_meta: null' "
                   "kernel_name, '::' as '_'",
                   libs);
        int none = 0, split = 0;
        for (int i = 0; i < l->nlibs; i++) {
            none += l->libs[i].nno_default;
            split += l->libs[i].nsplit;
        }
        if (none) tgs_printf(&b, "; %d without one (their CPU kernel fails)", none);
        if (split)
            tgs_printf(&b,
                       "; %d named for operators of other C types (overloads): each symbol "
                       "gets '__' and its operator's C name",
                       split);
        tgs_printf(&b, "\n");
    }
    /* What the form names that nothing is generated for, and the fields kept as data. */
    tgs_list parts = { 0 }, data = { 0 };
    if (core_kernels)
        tgs_list_addf(&parts, a, "%d kernels named by core operators (tensorgen's serve them)",
                      core_kernels);
    if (l->nmeta)
        tgs_list_addf(&parts, a,
                      "%d kernels with arg_meta (by dtype and dim order: tensorgen selects "
                      "kernels by device only), %d aliases",
                      l->nmeta, l->naliases);
    if (parts.n) tgs_printf(&b, "not compiled: %s\n", tgs_list_join(&parts, a, "; "));
    int nfields = 0;
    for (int i = 0; i < l->ndata; i++) {
        tgs_list_addf(&data, a, "%s %d", l->data_fields[i], l->data_counts[i]);
        nfields += l->data_counts[i];
    }
    if (data.n)
        tgs_printf(&b, "not used: %d field%s read as data (%s)\n", nfields, nfields == 1 ? "" : "s",
                   tgs_list_join(&data, a, ", "));
    return tgs_finish(&b, a);
}

/* The closure of list l, the core's C view built on first need (*core): a selection of custom
 * operators only (cortex_m's, quantized_decomposed's) selects no core entry, without one. */
static int close_list(const tgm_model *m, const tgk_core **core, const tgk_list *l,
                      const char *objects, tgk_closure *cl)
{
    bool any = objects != NULL;
    for (int i = 0; i < l->n && !any; i++) any = l->entries[i].core != NULL;
    if (!any) {
        *cl = (tgk_closure){ .keep = tgm_alloc(m->arena, (size_t)(m->nfuncs + 1) * sizeof(bool)) };
        return 0;
    }
    if (!*core && !(*core = tgk_core_new(m, m->nderivs > 0))) return 1;
    return tgk_close(*core, l, objects, cl);
}

int tgk_cli_check(const tgm_model *m, const char *const *paths, int npaths, const char **lines)
{
    /* One C view of the core for every selection; each selection's errors are its own (at
     * its file's lines), and the summaries of those that check are kept either way. */
    int errors = 0;
    const tgk_core *core = NULL;
    tgs_list out = { 0 };
    for (int i = 0; i < npaths; i++) {
        tgk_list l;
        tgk_closure cl;
        int e = read_and_resolve(m, paths[i], &l);
        if (!e) e = close_list(m, &core, &l, NULL, &cl);
        if (!e) tgs_list_add(&out, m->arena, summary(m, &l, &cl));
        errors += e;
    }
    *lines = tgs_list_join(&out, m->arena, "");
    return errors;
}

/* The objects to link, one path per line (the Makefile archives and links them). */
static int write_objects(tgm_arena *a, const char *dir, const tgk_closure *cl)
{
    const char *path = tgs_fmt(a, "%s/selected_objects.txt", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        tgm_error((tgm_loc){ path, 0, 0 }, "cannot write");
        return 1;
    }
    for (int i = 0; i < cl->nobjs; i++) fprintf(f, "%s\n", cl->objs[i]);
    fclose(f);
    return 0;
}

int tgk_cli_gen(const tgm_model *m, const char *path, const char *objects, const tge_options *o)
{
    tgk_list l;
    int errors = read_and_resolve(m, path, &l);
    const tgk_core *core = NULL;
    tgk_closure cl;
    if (!errors) errors = close_list(m, &core, &l, objects, &cl);
    if (errors) return errors;
    tgm_model r = tgk_reduced_model(m, cl.keep);
    errors = tge_emit_all(&r, o);
    if (!errors && objects) errors = write_objects(m->arena, o->out_dir, &cl);
    /* The custom operators: a library each, beside the core's files (their names all start
     * with the library's prefix, <ns>_ and <ns>/, as a backend file's libraries do). */
    tge_options lo = { .templates_dir = o->templates_dir,
                       .out_dir = o->out_dir,
                       .source_desc = o->source_desc };
    for (int i = 0; !errors && i < l.nlibs; i++) errors += tge_emit_all(l.libs[i].model, &lo);
    int custom;
    const char *libs = libraries(m->arena, &l, &custom);
    if (!errors)
        printf("tgen: selected %d operators: %d of %d core entries (%d through the objects' "
               "calls), %d objects\n",
               l.n - custom, cl.nkept, m->nfuncs, cl.nfrom_objects, cl.nobjs);
    if (!errors && custom)
        printf("tgen: %d custom operators, one library each: %s (their files: <ns>_*.c, <ns>/ "
               "in %s)\n",
               custom, libs, o->out_dir);
    return errors;
}

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

/* "et_copy 2, dim_order_ops 3": the custom operators per namespace (aten: no namespace). */
static const char *custom_namespaces(tgm_arena *a, const tgk_list *l, int *total)
{
    tgs_list names = { 0 };
    int counts[64] = { 0 };
    *total = 0;
    for (int i = 0; i < l->n; i++) {
        const tgm_func *f = l->entries[i].custom;
        if (!f) continue;
        (*total)++;
        const char *ns = f->schema.ns ? f->schema.ns : "aten";
        int k = 0;
        while (k < names.n && strcmp(names.items[k], ns)) k++;
        if (k == names.n && k < 64) tgs_list_add(&names, a, ns);
        if (k < 64) counts[k]++;
    }
    tgs_list parts = { 0 };
    for (int k = 0; k < names.n; k++) tgs_list_addf(&parts, a, "%s %d", names.items[k], counts[k]);
    return tgs_list_join(&parts, a, ", ");
}

/* The summary lines of --check --select. */
static const char *summary(const tgm_model *m, const tgk_list *l, const tgk_closure *cl)
{
    tgm_arena *a = m->arena;
    int ops = 0, funcs = 0, kernels = 0, custom;
    for (int i = 0; i < l->n; i++) {
        ops += l->entries[i].core && !l->entries[i].is_func;
        funcs += l->entries[i].core && l->entries[i].is_func;
        kernels += l->entries[i].nkernels;
    }
    const char *ns = custom_namespaces(a, l, &custom);
    tgs_buf b;
    tgs_buf_init(&b);
    tgs_printf(&b, "selection %s: %d entries: %d core operators", l->path, l->n, ops + funcs);
    if (funcs) tgs_printf(&b, " (%d declared with 'func:')", funcs);
    if (custom) tgs_printf(&b, ", %d custom operators (%s)", custom, ns);
    tgs_printf(&b, "; with what they call: %d of %d core entries\n", cl->nkept, m->nfuncs);
    if (l->yaml) {
        tgs_list data = { 0 };
        for (int i = 0; i < l->ndata; i++)
            tgs_list_addf(&data, a, "%s %d", l->data_fields[i], l->data_counts[i]);
        tgs_printf(&b,
                   "not compiled: %d kernels named (C symbols: '::' becomes '__'; tensorgen's "
                   "kernels serve the core operators), %d with arg_meta, %d aliases",
                   kernels, l->nmeta, l->naliases);
        if (custom) tgs_printf(&b, "; the custom operators");
        if (data.n) tgs_printf(&b, "; fields kept as data: %s", tgs_list_join(&data, a, ", "));
        tgs_printf(&b, "\n");
    }
    return tgs_finish(&b, a);
}

int tgk_cli_check(const tgm_model *m, const char *path, const char **lines)
{
    tgk_list l;
    int errors = read_and_resolve(m, path, &l);
    tgk_closure cl;
    if (!errors) errors = tgk_close(m, &l, m->nderivs > 0, NULL, &cl);
    *lines = errors ? NULL : summary(m, &l, &cl);
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
    tgk_closure cl;
    if (!errors) errors = tgk_close(m, &l, m->nderivs > 0, objects, &cl);
    if (errors) return errors;
    tgm_model r = tgk_reduced_model(m, cl.keep);
    errors = tge_emit_all(&r, o);
    if (!errors && objects) errors = write_objects(m->arena, o->out_dir, &cl);
    int custom;
    const char *ns = custom_namespaces(m->arena, &l, &custom);
    if (!errors)
        printf("tgen: selected %d operators: %d of %d core entries (%d through the objects' "
               "calls), %d objects\n",
               l.n - custom, cl.nkept, m->nfuncs, cl.nfrom_objects, cl.nobjs);
    /* A selection picks tensorgen's operators: the file's own are said once, not generated. */
    if (!errors && custom)
        printf("tgen: left out %d custom operators (%s): generate them as an operator library "
               "(tgen --namespace)\n",
               custom, ns);
    return errors;
}

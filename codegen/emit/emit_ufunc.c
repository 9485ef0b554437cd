/* generated/ufunc/: the kernels of the pointwise operators (api_ufunc.c), one set of files per
 * family of scalar functions (kernels/common/ufunc/<family>.h), so that adding an operator to
 * a family recompiles that family's files only:
 *   <family>_cpu.c   the CPU kernels and the adapters the reference loop calls (compiled once);
 *   <family>_cap.c   the typed loops and array maps of each scalar function (compiled once per
 *                    CPU capability);
 *   <family>_cuda.cu the CUDA functors and kernels (nvcc, or g++ for the emulator).
 * The logic is in kernels/ (ufunc_meta.c, cpu/ufunc.c, cpu/ufunc_loops.h, cuda/ufunc.cuh):
 * what is generated here are calls of the scalar functions and tables. */
#include <string.h>

#include "emit/emit_internal.h"

/* A compute kind as the generated code spells it. */
typedef struct ufunc_kind {
    unsigned bit;
    const char *sfx;       /* "f32": the scalar function's suffix, the fns slot */
    const char *type;      /* "float" */
    const char *pw_kind;   /* "TG_PW_F32" */
    const char *bool_slot; /* "b32": the fns slot of a bool-valued function */
    const char *cuda_kind; /* "TG_CUDA_KIND_F32" */
} ufunc_kind;

static const ufunc_kind kinds[] = {
    { TGA_UFUNC_F32, "f32", "float", "TG_PW_F32", "b32", "TG_CUDA_KIND_F32" },
    { TGA_UFUNC_F64, "f64", "double", "TG_PW_F64", "b64", "TG_CUDA_KIND_F64" },
    { TGA_UFUNC_I64, "i64", "int64_t", "TG_PW_I64", "bi64", "TG_CUDA_KIND_I64" },
};
enum { NKINDS = sizeof kinds / sizeof *kinds };

/* A scalar function and the operator whose arguments it takes. */
typedef struct ufunc_fn {
    const tga_ufunc *u;
    const tga_ufunc_fn *fn;
} ufunc_fn;

/* ------------------------------------------------------------------ calls of the functions */

/* Parameter k as the scalar function takes it, from `p` ("p[2]", "p.f32[2]": the parameter in
 * the compute type): a bool as a truth value, a parsed string as its int code. */
static const char *param_expr(tge_ctx *c, const tga_arg *arg, const char *p)
{
    if (arg->kind == TGA_BOOL) return tgs_fmt(c->arena, "%s != 0", p);
    if (arg->kind == TGA_STR || arg->kind == TGA_OPT_STR) return tgs_fmt(c->arena, "(int)%s", p);
    return p;
}

/* "x0, x1, p[0]": the arguments of a scalar function call; `pfmt` formats parameter k. */
static const char *call_args(tge_ctx *c, const tga_ufunc *u, const char *inputs, const char *pfmt)
{
    tgs_list l = { 0 };
    tgs_list_add(&l, c->arena, inputs);
    for (int k = 0; k < u->nparams; k++)
        tgs_list_add(&l, c->arena, param_expr(c, u->params[k], tgs_fmt(c->arena, pfmt, k)));
    return tgs_list_join(&l, c->arena, ", ");
}

static const char *inputs(tge_ctx *c, const char *fmt, int n)
{
    tgs_list l = { 0 };
    for (int j = 0; j < n; j++) tgs_list_addf(&l, c->arena, fmt, j);
    return tgs_list_join(&l, c->arena, ", ");
}

/* The holes every per-kind template of function f has: name, kind ("f32"), T ("float"). */
static tgt_env *kind_env(tge_ctx *c, const ufunc_fn *f, int k)
{
    tgt_env *e = tge_env(c);
    tgt_set(e, "name", f->fn->name);
    tgt_set(e, "kind", kinds[k].sfx);
    tgt_set(e, "T", kinds[k].type);
    return e;
}

/* ------------------------------------------------------------------ CPU */

/* The adapters of one scalar function and its tg_ufunc_fns table. */
static const char *fns_block(tge_ctx *c, const ufunc_fn *f)
{
    tgt_template t = tge_template(c, "ufunc_adapter.c.in");
    tgs_list adapters = { 0 }, slots = { 0 };
    for (int k = 0; k < NKINDS; k++) {
        if (!(f->u->kinds & kinds[k].bit)) continue;
        tgt_env *e = kind_env(c, f, k);
        tgt_set(e, "ret", f->u->bool_result ? "bool" : kinds[k].type);
        tgt_set(e, "args", call_args(c, f->u, inputs(c, "x%d", f->u->nin), "p[%d]"));
        tgs_list_add(&adapters, c->arena, tgt_render_str(&t, e, c->arena));
        tgs_list_addf(&slots, c->arena, ".%s = pw_%s_%s,",
                      f->u->bool_result ? kinds[k].bool_slot : kinds[k].sfx, f->fn->name,
                      kinds[k].sfx);
    }
    tgt_env *e = tge_env(c);
    tgt_set(e, "name", f->fn->name);
    tgt_set_list(e, "adapters", &adapters);
    tgt_set_list(e, "slots", &slots);
    tgt_setf(e, "nin", "%d", f->u->nin);
    tgt_template fns = tge_template(c, "ufunc_fns.c.in");
    return tgt_render_str(&fns, e, c->arena);
}

/* The typed loops, array maps and capability table of one scalar function. */
static const char *cap_block(tge_ctx *c, const ufunc_fn *f)
{
    tgt_template loop = tge_template(c, "ufunc_loop.c.in"), map = tge_template(c, "ufunc_map.c.in");
    tgs_list loops = { 0 }, maps = { 0 }, table = { 0 };
    for (int k = 0; k < NKINDS; k++) {
        if (!(f->u->kinds & kinds[k].bit)) continue;
        tgt_env *e = kind_env(c, f, k);
        tgt_set(e, "pw_kind", kinds[k].pw_kind);
        tgs_list_add(&loops, c->arena, tgt_render_str(&loop, e, c->arena));
        tgs_list_addf(&table, c->arena, ".%s = pw_%s_%s_loop,", kinds[k].sfx, f->fn->name,
                      kinds[k].sfx);
        if (!f->u->vec || !(f->u->vec_kinds & kinds[k].bit)) continue;
        tgt_set(e, "vec", f->u->vec->name);
        tgt_set(e, "args",
                call_args(c, f->u, tgs_fmt(c->arena, "out, %s, n", inputs(c, "in[%d]", f->u->nin)),
                          "p[%d]"));
        tgs_list_add(&maps, c->arena, tgt_render_str(&map, e, c->arena));
        tgs_list_addf(&table, c->arena, ".map_%s = pw_%s_map_%s,", kinds[k].sfx, f->fn->name,
                      kinds[k].sfx);
    }
    tgt_env *e = tge_env(c);
    tgt_set(e, "name", f->fn->name);
    tgt_set(e, "fns", fns_block(c, f));
    tgt_set_list(e, "loops", &loops);
    tgt_set_list(e, "maps", &maps);
    tgt_set_list(e, "table", &table);
    tgt_template t = tge_template(c, "ufunc_cap_fn.c.in");
    return tgt_render_str(&t, e, c->arena);
}

/* ------------------------------------------------------------------ kernels (both backends) */

/* The parse of each string argument into its int code (<prefix>__pw_<fn>_<arg>, written
 * beside the scalar function), and the call description. */
static void call_lines(tge_ctx *c, const tga_ufunc *u, const char *fail, tgs_list *lines)
{
    tgs_list params = { 0 }, ins = { 0 };
    for (int k = 0; k < u->nparams; k++) {
        const tga_arg *a = u->params[k];
        if (a->kind != TGA_STR && a->kind != TGA_OPT_STR) {
            /* double, or converted explicitly (C++ refuses to narrow in a brace list) */
            tgs_list_add(&params, c->arena,
                         a->kind == TGA_DOUBLE ? a->name
                                               : tgs_fmt(c->arena, "(double)%s", a->name));
            continue;
        }
        const char *code = tgs_fmt(c->arena, "%s_code", a->name);
        tgs_list_addf(lines, c->arena, "const int %s = %s__pw_%s_%s(%s, %s);", code, u->op->prefix,
                      u->fns[0].name, a->arg->name, tgs_c_string(c->arena, u->op->opname), a->name);
        tgs_list_addf(lines, c->arena, "if (%s < 0) return %s;", code, fail);
        tgs_list_addf(&params, c->arena, "(double)%s", code);
    }
    for (int j = 0; j < u->nin; j++) tgs_list_add(&ins, c->arena, u->ins[j]->name);
    tgs_list_addf(
        lines, c->arena,
        "tg_ufunc_call call = { %s, %s__ufunc_meta_%s, %s, %d, { %s }, %d, { %s }, NULL, false };",
        tgs_c_string(c->arena, u->op->opname), u->op->prefix, u->meta,
        u->out ? u->out->name : "NULL", u->nin, tgs_list_join(&ins, c->arena, ", "), u->nparams,
        params.n ? tgs_list_join(&params, c->arena, ", ") : "0");
}

/* A kernel's body: runs[i] computes result i. */
static const char *kernel_body(tge_ctx *c, const tga_ufunc *u, const char *const *runs)
{
    tgs_list lines = { 0 };
    const tga_op *op = u->op;
    if (u->nfns == 1) {
        call_lines(c, u, "NULL", &lines);
        tgs_list_addf(&lines, c->arena, "return %s;", runs[0]);
    } else {
        tgs_list_addf(&lines, c->arena, "%s result = { 0 };", op->ret_struct);
        call_lines(c, u, "result", &lines);
        tgs_list all = { 0 }, release = { 0 };
        for (int i = 0; i < u->nfns; i++) {
            tgs_list_addf(&all, c->arena, "(result.%s = %s)", op->rets[i].name, runs[i]);
            if (i + 1 < u->nfns)
                tgs_list_addf(&release, c->arena, "tg_release(result.%s);\nresult.%s = NULL;",
                              op->rets[i].name, op->rets[i].name);
        }
        tgs_list_addf(&lines, c->arena, "if (%s)\n    return result;",
                      tgs_list_join(&all, c->arena, " &&\n    "));
        tgs_list_add(&lines, c->arena, tgs_list_join(&release, c->arena, "\n"));
        tgs_list_add(&lines, c->arena, "return result;");
    }
    return tgs_replace(c->arena, tgs_fmt(c->arena, "    %s", tgs_list_join(&lines, c->arena, "\n")),
                       "\n", "\n    ");
}

static const char *kernel(tge_ctx *c, const tga_ufunc *u, const char *decl, const char *const *runs)
{
    tgt_env *e = tge_env(c);
    tgt_set(e, "schema", tga_schema_comment(c->arena, u->op->f));
    tgt_set(e, "decl", decl);
    tgt_set(e, "body", kernel_body(c, u, runs));
    tgt_template t = tge_template(c, "ufunc_kernel.c.in");
    return tgt_render_str(&t, e, c->arena);
}

static const char *cpu_kernel(tge_ctx *c, const tga_ufunc *u)
{
    const char **runs = tgm_alloc(c->arena, sizeof *runs * (size_t)u->nfns);
    for (int i = 0; i < u->nfns; i++)
        runs[i] = tgs_fmt(c->arena,
                          "tg__ufunc_cpu_run(&call, &pw_%s_fns, TG_CAP_PICK(%s__ufunc_%s_loops))",
                          u->fns[i].name, u->op->prefix, u->fns[i].name);
    return kernel(c, u, tga_kernel_decl(c->arena, u->op, u->cpu), runs);
}

/* ------------------------------------------------------------------ CUDA */

static const char *cuda_functor(tge_ctx *c, const ufunc_fn *f)
{
    tgs_list ops = { 0 };
    for (int k = 0; k < NKINDS; k++) {
        if (!(f->u->kinds & kinds[k].bit)) continue;
        const char *T = kinds[k].type;
        tgs_list decl = { 0 };
        for (int j = 0; j < f->u->nin; j++) tgs_list_addf(&decl, c->arena, "%s x%d", T, j);
        const char *call =
            tgs_fmt(c->arena, "%s__pw_%s_%s(%s)", f->u->op->prefix, f->fn->name, kinds[k].sfx,
                    call_args(c, f->u, inputs(c, "x%d", f->u->nin),
                              tgs_fmt(c->arena, "p.%s[%%d]", kinds[k].sfx)));
        /* An integer division raises the flag for a zero divisor (ufunc.cuh). */
        const char *zero =
            kinds[k].bit == TGA_UFUNC_I64 && f->u->nin == 2 && !f->u->bool_result
                ? "\n        if (zero_div && x1 == 0) return tg__ufunc_cuda_zero_div(zero_div);"
                : "";
        tgs_list_addf(&ops, c->arena,
                      "    __device__ %s operator()(%s) const\n    {%s\n        return %s;\n    }",
                      f->u->bool_result ? "bool" : T, tgs_list_join(&decl, c->arena, ", "), zero,
                      call);
    }
    tgt_env *e = tge_env(c);
    tgt_set(e, "name", f->fn->name);
    tgt_set_list(e, "operators", &ops);
    tgt_template t = tge_template(c, "ufunc_cuda_fn.cu.in");
    return tgt_render_str(&t, e, c->arena);
}

static const char *cuda_kernel(tge_ctx *c, const tga_ufunc *u)
{
    tgs_list kl = { 0 };
    for (int k = 0; k < NKINDS; k++)
        if (u->kinds & kinds[k].bit) tgs_list_add(&kl, c->arena, kinds[k].cuda_kind);
    const char *kbits = tgs_list_join(&kl, c->arena, " | ");
    const char **runs = tgm_alloc(c->arena, sizeof *runs * (size_t)u->nfns);
    for (int i = 0; i < u->nfns; i++)
        runs[i] = tgs_fmt(c->arena, "tg__ufunc_cuda_run<%s, %d>(&call, pw_%s_fn{})", kbits, u->nin,
                          u->fns[i].name);
    const char *decl =
        tgs_fmt(c->arena, "extern \"C\" %s", tga_kernel_decl(c->arena, u->op, u->cuda));
    return kernel(c, u, decl, runs);
}

/* ------------------------------------------------------------------ files */

/* The family's operators with a kernel for the backend (cpu: true) and their scalar functions,
 * each once. */
static int family_fns(tge_ctx *c, const tga_ufunc *us, int n, const char *family, bool cpu,
                      ufunc_fn **out)
{
    ufunc_fn *fns = tgm_alloc(c->arena, sizeof *fns * (size_t)(n * 2 + 1));
    int nf = 0;
    tgm_name_map *seen = tgm__map_new(c->arena);
    for (int i = 0; i < n; i++) {
        const tga_ufunc *u = &us[i];
        if (strcmp(u->family, family) != 0 || !(cpu ? u->cpu : u->cuda)) continue;
        for (int k = 0; k < u->nfns; k++) {
            const ufunc_fn *before = tgm__map_get(seen, u->fns[k].name);
            if (before) {
                if (before->u != u)
                    tgm_error(u->op->f->loc,
                              "'%s' and '%s' name the same scalar function '%s': "
                              "give each operator its own",
                              before->u->op->f->schema.full_name, u->op->f->schema.full_name,
                              u->fns[k].name);
                continue;
            }
            fns[nf] = (ufunc_fn){ u, &u->fns[k] };
            tgm__map_put(seen, u->fns[k].name, &fns[nf]);
            nf++;
        }
    }
    *out = fns;
    return nf;
}

/* The includes of the family's files: the kernel headers of its operators (and, for the
 * capability file, the headers of its vector forms). */
static tgs_list family_includes(tge_ctx *c, const tga_ufunc *us, int n, const char *family,
                                int backend /* 0 cpu, 1 cap, 2 cuda */)
{
    tgs_list l = { 0 };
    tgm_name_map *seen = tgm__map_new(c->arena);
    for (int i = 0; i < n; i++) {
        const tga_ufunc *u = &us[i];
        if (strcmp(u->family, family) != 0 || !(backend == 2 ? u->cuda : u->cpu)) continue;
        const char *inc =
            backend == 1
                ? (u->vec ? tgs_fmt(c->arena, "vec/%s.h", u->vec->family) : NULL)
                : tgs_fmt(c->arena, "%s/%s.h", tge_op_dir(c, "kernels"), u->op->f->schema.base);
        if (inc && !tgm__map_put(seen, inc, (void *)inc))
            tgs_list_addf(&l, c->arena, "#include \"%s\"", inc);
    }
    return l;
}

static void family_files(tge_ctx *c, const tga_ufunc *us, int n, const char *family)
{
    const char *dir = tgs_fmt(c->arena, "%s/%s", c->opts->out_dir, tge_op_dir(c, "ufunc"));
    for (int backend = 0; backend < 2; backend++) { /* CPU (and its capability file), CUDA */
        ufunc_fn *fns;
        int nf = family_fns(c, us, n, family, backend == 0, &fns);
        if (nf == 0) continue;
        tgs_list functions = { 0 }, cap = { 0 }, kernels = { 0 };
        for (int i = 0; i < nf; i++) {
            if (backend == 1) {
                tgs_list_add(&functions, c->arena, cuda_functor(c, &fns[i]));
                continue;
            }
            tgs_list_addf(&functions, c->arena,
                          "%sTG_CAP_DECLARE(tg_ufunc_loops, %s__ufunc_%s_loops);\n",
                          fns_block(c, &fns[i]), c->ops.prefix, fns[i].fn->name);
            tgs_list_add(&cap, c->arena, cap_block(c, &fns[i]));
        }
        for (int i = 0; i < n; i++) {
            if (strcmp(us[i].family, family) != 0) continue;
            if (backend == 0 && us[i].cpu) tgs_list_add(&kernels, c->arena, cpu_kernel(c, &us[i]));
            if (backend == 1 && us[i].cuda)
                tgs_list_add(&kernels, c->arena, cuda_kernel(c, &us[i]));
        }
        tgt_env *e = tge_env(c);
        tgt_set(e, "family", family);
        tgt_set_list(e, "functions", &functions);
        tgt_set_list(e, "kernels", &kernels);
        tgs_list inc = family_includes(c, us, n, family, backend == 0 ? 0 : 2);
        tgt_set_list(e, "includes", &inc);
        if (backend == 1) {
            tge_render_file(c, "ufunc_cuda.cu.in", e, dir, tgs_fmt(c->arena, "%s_cuda.cu", family));
            continue;
        }
        tge_render_file(c, "ufunc_cpu.c.in", e, dir, tgs_fmt(c->arena, "%s_cpu.c", family));
        tgt_env *ce = tge_env(c);
        tgt_set(ce, "family", family);
        tgt_set_list(ce, "functions", &cap);
        tgs_list vinc = family_includes(c, us, n, family, 1);
        tgt_set_list(ce, "includes", &vinc);
        tge_render_file(c, "ufunc_cap.c.in", ce, dir, tgs_fmt(c->arena, "%s_cap.c", family));
    }
}

void tge_emit_ufunc(tge_ctx *c)
{
    tga_ufunc *us;
    int n = tga_build_ufuncs(c->arena, &c->ops, &us);
    tgm_name_map *done = tgm__map_new(c->arena);
    for (int i = 0; i < n; i++)
        if (!tgm__map_put(done, us[i].family, (void *)us[i].family))
            family_files(c, us, n, us[i].family);
}

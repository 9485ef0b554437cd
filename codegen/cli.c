/* tgen's command line: parse and validate the spec files, then (with --gen) hand the model to
 * the emitters. A function rather than main() so that the fuzz harnesses (tests/fuzz/) can run
 * the whole pipeline many times in one process: each call owns its arena and frees it, and
 * error counts are taken as differences, so no state carries from one call to the next. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/backend.h"
#include "cli.h"
#include "emit/emit.h"
#include "formula/formula.h"
#include "base/strbuf.h"
#include "select/select_cli.h"

static const char usage[] =
    "usage: tgen --check [--strict | --gen-limits] [--verbose] [--tags TAGS.yaml]\n"
    "                    [--runtime DIR] [--autograd-functions FILE]\n"
    "                    [--namespace NS [--import API.yaml]] [--only-namespace NS]\n"
    "                    [--torch-version V] [--base BASE.yaml] NATIVE.yaml\n"
    "                    [DERIVATIVES.yaml]\n"
    "       tgen --gen [--verbose] --native NATIVE.yaml [--derivatives DERIVATIVES.yaml]\n"
    "                  [--tags TAGS.yaml] [--runtime DIR] [--autograd-functions FILE]\n"
    "                  [--namespace NS [--import API.yaml]] [--only-namespace NS]\n"
    "                  [--torch-version V] [--templates DIR] --out DIR [--docs DIR]\n"
    "       tgen --check --backend FILE [--backend-name NAME] NATIVE.yaml\n"
    "       tgen --gen --backend FILE [--backend-name NAME] --native NATIVE.yaml\n"
    "                  [--templates DIR] --out DIR\n"
    "       tgen --check ... --select LIST [--select LIST ...] NATIVE.yaml\n"
    "       tgen --gen ... --select LIST [--select-objects NM] --native NATIVE.yaml\n"
    "       tgen --help\n"
    "\n"
    "  --check   parse and validate the spec files; parse every derivative formula (syntax\n"
    "            only) and print a one-line summary with how many parsed\n"
    "  --strict  with --check: also type-check every formula against the schemas, as --gen\n"
    "            does; a formula that does not parse or check is an error\n"
    "  --verbose with --check: list the formulas that do not parse, with the reason;\n"
    "            with --gen: print the line of dispatch keys not compiled\n"
    "  --gen-limits\n"
    "            --strict, and also report as errors what type-checks but --gen cannot\n"
    "            generate yet (docs/autograd.md, \"Limits of generated nodes\")\n"
    "  --gen     parse, validate, then write the generated sources into --out (only files\n"
    "            whose text changed) and the operator reference into --docs\n"
    "  --tags    the tags file entries' `tags:` must come from (default: tags.yaml beside\n"
    "            NATIVE.yaml, when there is one; without one, any tag is accepted)\n"
    "  --runtime the runtime's header directory: operator C names avoid the names declared\n"
    "            there (docs/c-api.md, \"Names\")\n"
    "  --namespace NS\n"
    "            generate an operator library (docs/extending.md): its operators are NS::op,\n"
    "            its C names NS_op, its files NS_ops.h, NS_register.c, ...; it registers\n"
    "            itself when loaded\n"
    "  --only-namespace NS\n"
    "            take only the entries of namespace NS from a file whose entries name several\n"
    "            (an unqualified entry of such a file is aten's); the others are skipped and\n"
    "            counted. NS other than aten is generated as --namespace NS\n"
    "  --torch-version V\n"
    "            a sectioned spec (op-plugin's, with 'all_version:'): take the entries whose\n"
    "            versions include PyTorch V, one of the file's all_version; default: the newest\n"
    "            (docs/spec.md, \"Sectioned files\")\n"
    "  --base BASE.yaml\n"
    "            with --check: the spec NATIVE.yaml extends (PyTorch's native_functions.yaml\n"
    "            for a backend's file): formulas may call its operators, and an entry may\n"
    "            restate one with the same schema (another schema is an error); they are not\n"
    "            NATIVE.yaml's functions (docs/spec.md, \"A file that extends another\")\n"
    "  --import  with --namespace: tensorgen's operators, which the library's formulas may\n"
    "            call (default: tensorgen_api.yaml of the installed tensorgen, or of the tree\n"
    "            tgen was built in)\n"
    "  --backend FILE\n"
    "            a backend file (torchgen's backend YAML: backend:, supported:, ...; or\n"
    "            torch_mlu's aten:/custom: sections): its operator names are checked against\n"
    "            NATIVE.yaml; --gen writes NAME_backend.h (its kernels' prototypes),\n"
    "            NAME_backend_register.c and a library per custom section\n"
    "            (docs/extending.md, \"A backend of your own\")\n"
    "  --backend-name NAME\n"
    "            the name of the backend given just before, for a file that gives none\n"
    "            (torch_mlu's). --check takes several --backend (and --select) files,\n"
    "            reading NATIVE.yaml once; --gen one\n"
    "  --templates\n"
    "            the templates (default: those of the installed tensorgen, or of the tree)\n"
    "  --autograd-functions FILE\n"
    "            the functions formulas may call besides operators (docs/autograd.md);\n"
    "            default: autograd_functions.yaml beside the derivatives file, else the\n"
    "            project's specs/autograd_functions.yaml (the first specs/ above tgen's\n"
    "            own directory). Given several times, the files stack: a later file's\n"
    "            entries are tried first and replace an earlier one's of the same name\n"
    "            (specs/autograd_functions-1.5.yaml over the default: PyTorch 1.5's)\n"
    "  --select LIST\n"
    "            a selective build (docs/generated-code.md, \"Selective builds\"): LIST is a\n"
    "            kernel-library file (.yaml: `- op: add.out` with `kernels:`, ExecuTorch's form)\n"
    "            or a plain list of operator names, one per line; --check checks its names\n"
    "            against NATIVE.yaml (several files: give --select for each; a summary each),\n"
    "            --gen generates only those operators and what they call, and the file's\n"
    "            custom operators as an operator library per namespace\n"
    "  --select-objects NM\n"
    "            with --gen --select: `nm -o` of the objects (`# linked`, `# candidates`\n"
    "            sections); the closure follows their calls, and the objects to link are\n"
    "            written to selected_objects.txt in --out\n"
    "\n"
    "Errors are printed as `file:line:col: error: message`. Exit status: 0 ok, 1 errors in\n"
    "the specs, 2 bad command line.\n";

/* Parses both files and validates them. Validation only runs on cleanly parsed files: an entry
 * that failed to parse is missing from the model, and checks against it would only repeat the
 * first error in other words. Returns the number of errors. */
enum { TGEN_MAX_SELECT = 64, TGEN_MAX_BACKENDS = 16 };

typedef struct load_opts {
    const char *native, *derivs, *tags, *runtime;
    const char *ns, *import; /* --namespace, --import */
    const char *base;        /* --base (spec/base.c) */
    /* --autograd-functions, each time it is given (a later file's entries override an
     * earlier one's: formula_vocab.c) */
    const char *vocab[TGF_MAX_VOCAB_FILES];
    int nvocab;
    /* --backend FILE, each time it is given, with the --backend-name that follows it
     * (codegen/backend/) */
    const char *backend[TGEN_MAX_BACKENDS], *backend_name[TGEN_MAX_BACKENDS];
    int nbackend;
    const char *argv0;                   /* tgen's own path (the default vocabulary) */
    const char *torch_version, *only_ns; /* --torch-version, --only-namespace */
    /* --select (several with --check: one core, several kernel libraries), --select-objects
     * (codegen/select/) */
    const char *select[TGEN_MAX_SELECT], *select_objects;
    int nselect;
    /* --check --strict with derivatives: validate, and so check the formulas, even when the
     * files have errors, so that the derivatives can be measured on specs that do not
     * validate yet (entries that failed to parse are dropped from the model, and the checker
     * skips, silently, the derivative entries whose own operator has no C view). */
    bool validate_anyway;
} load_opts;

/* tags.yaml beside the native file, or NULL when there is none. */
static const char *default_tags(tgm_arena *a, const char *native)
{
    const char *slash = strrchr(native, '/');
    const char *path =
        slash ? tgs_fmt(a, "%.*s/tags.yaml", (int)(slash - native), native) : "tags.yaml";
    return access(path, R_OK) == 0 ? path : NULL;
}

/* A file tgen ships: <dir of tgen>/../share/tensorgen/<installed> (an installed tgen, found
 * through /proc/self/exe so that a tgen run from $PATH finds it too), else <in_tree> in the
 * directories above tgen's (build/tgen, build/cuda-emu/tgen in the tree). NULL if neither. */
static const char *shipped_path(tgm_arena *a, const char *argv0, const char *installed,
                                const char *in_tree)
{
    char exe[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n > 0) exe[n] = '\0';
    else snprintf(exe, sizeof exe, "%s", argv0 ? argv0 : "");
    char *slash = strrchr(exe, '/');
    if (!slash) return NULL;
    *slash = '\0';
    const char *p = tgs_fmt(a, "%s/../share/tensorgen/%s", exe, installed);
    if (access(p, R_OK) == 0) return p;
    const char *up = "/..";
    for (int level = 0; level < 3; level++, up = tgs_fmt(a, "%s/..", up)) {
        p = tgs_fmt(a, "%s%s/%s", exe, up, in_tree);
        if (access(p, R_OK) == 0) return p;
    }
    return NULL;
}

/* --namespace and --import are command-line values: a bad namespace, or no interface file to
 * import, is exit status 2 (a bad command line), before any spec is read. Fills o->import with
 * the shipped interface when it was not given. Returns false after printing why. */
static bool namespace_options(tgm_arena *a, load_opts *o)
{
    if (o->only_ns && o->ns && strcmp(o->only_ns, o->ns)) {
        fprintf(stderr,
                "tgen: --only-namespace %s and --namespace %s: give one (--only-namespace "
                "NS generates namespace NS)\n",
                o->only_ns, o->ns);
        return false;
    }
    if (o->base && (o->ns || o->only_ns)) {
        fprintf(stderr, "tgen: --base checks a file of aten's operators against the spec it "
                        "extends; it does not combine with --namespace or --only-namespace\n");
        return false;
    }
    /* A library's entries taken from a mixed file generate as --namespace NS. */
    if (o->only_ns && strcmp(o->only_ns, "aten") && !o->ns) o->ns = o->only_ns;
    if (!o->ns) return true;
    if (!tgm_valid_namespace(o->ns)) {
        fprintf(stderr,
                "tgen: --namespace '%s': a namespace is a lower-case C identifier not "
                "ending in '_', other than 'aten' and 'tg'\n",
                o->ns);
        return false;
    }
    if (!o->import)
        o->import = shipped_path(a, o->argv0, "tensorgen_api.yaml", "generated/tensorgen_api.yaml");
    if (!o->import) {
        fprintf(stderr, "tgen: --namespace: tensorgen's tensorgen_api.yaml was not found beside "
                        "tgen; give its path with --import\n");
        return false;
    }
    return true;
}

static int load(tgm_model *m, const load_opts *o)
{
    int errors = 0;
    m->reading.torch_version = o->torch_version;
    m->reading.only_ns = o->only_ns;
    m->ns = o->ns ? tgm_strdup(m->arena, o->ns) : NULL;
    if (o->ns) errors += tgm_parse_imports(m, o->import);
    if (o->base) errors += tgm_parse_base(m, o->base);
    const char *tags = o->tags ? o->tags : default_tags(m->arena, o->native);
    if (tags) errors += tgm_parse_tags(m, tags);
    if (o->runtime) errors += tgm_read_runtime_names(m, o->runtime);
    errors += tgm_parse_native_functions(m, o->native);
    errors += tgm_match_base(m);
    if (o->derivs) errors += tgm_parse_derivatives(m, o->derivs);
    if (o->torch_version && !m->reading.versioned) {
        tgm_error((tgm_loc){ o->native, 0, 0 },
                  "--torch-version %s: this file has no versions to choose from (op-plugin's "
                  "'all_version:' list; docs/spec.md)",
                  o->torch_version);
        errors++;
    }
    /* A library's formulas call operators only: the vocabulary's functions are tensorgen's
     * internals, which a library cannot link (unless a file is given). */
    if (o->nvocab) {
        m->autograd_functions = o->vocab;
        m->nautograd_functions = o->nvocab;
    } else {
        const char *path = o->ns ? NULL : tgf_vocab_default_path(m->arena, o->derivs, o->argv0);
        const char **one = tgm_alloc(m->arena, sizeof *one);
        *one = path;
        m->autograd_functions = one;
        m->nautograd_functions = path != NULL;
    }
    if (errors == 0 || o->validate_anyway) errors += tgm_validate(m);
    return errors;
}

/* `--tags FILE` / `--runtime DIR` / `--autograd-functions FILE` / ... at argv[*i]: stores the value
 * and moves past it. Returns 0 when argv[*i] is none of them, -1 when its value is missing. */
static int load_option(int argc, char **argv, int *i, load_opts *o)
{
    /* The flags that may be given several times, each value kept in order. */
    const struct {
        const char *flag;
        const char **values;
        int *n, max;
    } repeated[] = {
        { "--autograd-functions", o->vocab, &o->nvocab, TGF_MAX_VOCAB_FILES },
        { "--backend", o->backend, &o->nbackend, TGEN_MAX_BACKENDS },
        { "--select", o->select, &o->nselect, TGEN_MAX_SELECT },
    };
    for (size_t r = 0; r < sizeof repeated / sizeof repeated[0]; r++) {
        if (strcmp(argv[*i], repeated[r].flag)) continue;
        if (*i + 1 >= argc) return -1;
        if (*repeated[r].n == repeated[r].max) {
            fprintf(stderr, "tgen: more than %d %s in one run\n", repeated[r].max,
                    repeated[r].flag);
            return -1;
        }
        repeated[r].values[(*repeated[r].n)++] = argv[++*i];
        return 1;
    }
    if (!strcmp(argv[*i], "--backend-name")) { /* names the backend given last */
        if (*i + 1 >= argc || !o->nbackend || o->backend_name[o->nbackend - 1]) return -1;
        o->backend_name[o->nbackend - 1] = argv[++*i];
        return 1;
    }
    const char **slot = !strcmp(argv[*i], "--tags")             ? &o->tags
                        : !strcmp(argv[*i], "--runtime")        ? &o->runtime
                        : !strcmp(argv[*i], "--namespace")      ? &o->ns
                        : !strcmp(argv[*i], "--import")         ? &o->import
                        : !strcmp(argv[*i], "--base")           ? &o->base
                        : !strcmp(argv[*i], "--torch-version")  ? &o->torch_version
                        : !strcmp(argv[*i], "--only-namespace") ? &o->only_ns
                        : !strcmp(argv[*i], "--select-objects") ? &o->select_objects
                                                                : NULL;
    if (!slot) return 0;
    if (*i + 1 >= argc) return -1;
    *slot = argv[++*i];
    return 1;
}

typedef struct key_count {
    const char *name;
    int count;
} key_count;

static int by_count(const void *x, const void *y)
{
    const key_count *a = x, *b = y;
    return a->count != b->count ? b->count - a->count : strcmp(a->name, b->name);
}

/* The dispatch keys tensorgen does not compile, each with how many kernels name it, most used
 * first: "SparseCPU 120, Meta 88, ...". NULL when every key is compiled. */
static const char *other_keys(const tgm_model *m, int *nkeys)
{
    tgm_name_map *index = tgm__map_new(m->arena);
    key_count *keys = NULL;
    int n = 0, cap = 0;
    for (int i = 0; i < m->nfuncs; i++)
        for (int k = 0; k < m->funcs[i]->ndispatch; k++) {
            const tgm_dispatch_entry *d = &m->funcs[i]->dispatch[k];
            if (d->key != TGM_KEY_OTHER) continue;
            /* The map holds index + 1, so that 0 (NULL) means absent. */
            intptr_t at = (intptr_t)tgm__map_get(index, d->key_name);
            if (!at) {
                *TGS_PUSH(m->arena, keys, n, cap) = (key_count){ d->key_name, 0 };
                at = n;
                tgm__map_put(index, d->key_name, (void *)at);
            }
            keys[at - 1].count++;
        }
    *nkeys = n;
    if (n == 0) return NULL;
    qsort(keys, (size_t)n, sizeof *keys, by_count);
    tgs_list l = { 0 };
    for (int i = 0; i < n; i++)
        tgs_list_add(&l, m->arena, tgs_fmt(m->arena, "%s %d", keys[i].name, keys[i].count));
    return tgs_list_join(&l, m->arena, ", ");
}

/* One line naming the keys no code is generated for (--check's summary, --gen --verbose). */
static void print_other_keys(const tgm_model *m)
{
    int nkeys;
    const char *keys = other_keys(m, &nkeys);
    if (keys)
        printf("not compiled: kernels under %d dispatch key%s (%s)\n", nkeys, nkeys == 1 ? "" : "s",
               keys);
}

static int explicit_funcs(const tgm_model *m)
{
    int n = 0;
    for (int i = 0; i < m->nfuncs; i++) n += !m->funcs[i]->is_autogen && !m->funcs[i]->base;
    return n;
}

/* Parses every formula of the derivatives file, syntax only: PyTorch's own file has C++ in
 * some formulas (lambdas, templates), which is counted, not an error. Returns how many parsed;
 * *total gets how many there are. */
static int parse_formulas(tgm_model *m, bool verbose, int *total)
{
    int parsed = 0;
    *total = 0;
    for (int i = 0; i < m->nderivs; i++) {
        tgm_derivative *dv = m->derivs[i];
        for (int pass = 0; pass < 2; pass++) {
            tgm_formula *fs = pass ? dv->result_formulas : dv->formulas;
            int n = pass ? dv->nresult : dv->nformulas;
            for (int k = 0; k < n; k++) {
                tgf_syntax_error err;
                (*total)++;
                if (tgf_parse_formula(m->arena, &fs[k], &err)) {
                    parsed++;
                } else if (verbose) {
                    tgm_loc l = tgf_loc(&fs[k], err.offset);
                    printf("%s:%d:%d: formula for '%s' of '%s' does not parse: %s\n", l.file,
                           l.line, l.col, fs[k].vars, dv->schema.full_name, err.msg);
                }
            }
        }
    }
    return parsed;
}

static int run_check(int argc, char **argv, const char *argv0)
{
    bool strict = false, verbose = false, gen_limits = false;
    load_opts lo = { .argv0 = argv0 };
    const char *files[2];
    int nfiles = 0;
    for (int i = 0; i < argc; i++) {
        int got = load_option(argc, argv, &i, &lo);
        if (got < 0 ||
            (!got && argv[i][0] == '-' && strcmp(argv[i], "--strict") &&
             strcmp(argv[i], "--verbose") && strcmp(argv[i], "--gen-limits")) ||
            (!got && argv[i][0] != '-' && nfiles == 2)) {
            fputs(usage, stderr);
            return 2;
        }
        if (got) continue;
        if (!strcmp(argv[i], "--strict")) strict = true;
        else if (!strcmp(argv[i], "--verbose")) verbose = true;
        else if (!strcmp(argv[i], "--gen-limits")) strict = gen_limits = true;
        else files[nfiles++] = argv[i];
    }
    if (nfiles < 1) {
        fputs(usage, stderr);
        return 2;
    }
    lo.native = files[0];
    lo.derivs = nfiles == 2 ? files[1] : NULL;
    tgm_model m = { .arena = tgm_arena_new() };
    if (!namespace_options(m.arena, &lo)) {
        tgm_arena_free(m.arena);
        return 2;
    }
    lo.validate_anyway = strict && lo.derivs;
    int errors = load(&m, &lo), unchecked = 0, skipped = 0, limited = 0;
    const char *renamed = NULL; /* formula_renames.c's rows used */
    int load_errors = errors;
    if (lo.nbackend) {
        /* Each backend file against the spec read once, with a summary of its own; kernel-
         * library files (--select) may follow in the same run. */
        for (int k = 0; k < lo.nbackend && !load_errors; k++)
            errors += tgb_cli_check(&m, lo.backend[k], lo.backend_name[k], lo.native);
        if (!lo.nselect || load_errors) {
            tgm_arena_free(m.arena);
            return errors ? 1 : 0;
        }
    }
    if ((!errors || lo.validate_anyway) && strict)
        errors += tgf_check_model(&m, gen_limits, &unchecked, &skipped, &limited, &renamed);
    const char *selection = NULL; /* --select's summary lines */
    if (!load_errors && lo.nselect) {
        /* Several selections: those that check are summarised even when another file (a
         * selection, or a backend above) fails, and the summary below is not printed. */
        int failed = tgk_cli_check(&m, lo.select, lo.nselect, &selection);
        if ((failed || errors) && selection) fputs(selection, stdout);
        errors += failed;
    }
    /* --verbose lists the unparsed formulas even when the specs have errors (with --strict
     * the derivatives are read either way; see load_opts). */
    if (!errors || (verbose && lo.validate_anyway)) {
        int total, parsed = parse_formulas(&m, verbose, &total);
        if (!errors) {
            printf("ok: %d functions, %d derivatives", explicit_funcs(&m), m.nderivs);
            if (lo.derivs) printf(", %d/%d formulas parsed", parsed, total);
            printf("\n");
            print_other_keys(&m);
            tgm_print_reading(&m);
            if (renamed) printf("older names of autograd helpers resolved: %s\n", renamed);
            if (selection) fputs(selection, stdout);
            /* What --strict could not check, so that a clean check is not mistaken for more
             * than it is: formulas using types without a C mapping, entries of operators
             * without a C view; and what it checked but --gen cannot generate yet. */
            if (unchecked || skipped)
                printf("not checked: %d formulas using types without a C mapping, %d derivative "
                       "entries whose operator has no C view\n",
                       unchecked, skipped);
            if (limited)
                printf("checked, but not generatable yet: %d derivative entries past the limits of "
                       "generated nodes or using forms the C emitter does not compile; --gen makes "
                       "nodes failing in backward of them (docs/autograd.md)\n",
                       limited);
        }
    }
    tgm_arena_free(m.arena);
    return errors ? 1 : 0;
}

static int run_gen(int argc, char **argv, const char *argv0)
{
    load_opts lo = { .argv0 = argv0 };
    tge_options o = { 0 };
    bool verbose = false;
    for (int i = 0; i < argc; i++) {
        int got = load_option(argc, argv, &i, &lo);
        if (got > 0) continue;
        if (!got && !strcmp(argv[i], "--verbose")) {
            verbose = true;
            continue;
        }
        const char **slot = got < 0                             ? NULL
                            : !strcmp(argv[i], "--native")      ? &lo.native
                            : !strcmp(argv[i], "--derivatives") ? &lo.derivs
                            : !strcmp(argv[i], "--templates")   ? &o.templates_dir
                            : !strcmp(argv[i], "--out")         ? &o.out_dir
                            : !strcmp(argv[i], "--docs")        ? &o.docs_dir
                                                                : NULL;
        if (!slot || i + 1 >= argc) {
            fprintf(stderr, "tgen: %s '%s'\n%s",
                    slot || got < 0 ? "missing value after" : "unknown option", argv[i], usage);
            return 2;
        }
        *slot = argv[++i];
    }
    if (lo.nselect + lo.nbackend > 1) {
        fprintf(stderr, "tgen: --gen takes one --select or --backend (generate each into its "
                        "own --out; --check takes several)\n");
        return 2;
    }
    tgm_model m = { .arena = tgm_arena_new() };
    if (!o.templates_dir) o.templates_dir = shipped_path(m.arena, argv0, "templates", "templates");
    if (lo.base) {
        fputs("tgen: --base is a --check option: --gen generates a file's own operators, not a "
              "base's\n",
              stderr);
        tgm_arena_free(m.arena);
        return 2;
    }
    if (!lo.native || !o.templates_dir || !o.out_dir) {
        fprintf(stderr, "tgen: --gen needs --native and --out%s\n%s",
                o.templates_dir ? "" : ", and --templates (none found beside tgen)", usage);
        tgm_arena_free(m.arena);
        return 2;
    }
    if (!namespace_options(m.arena, &lo)) {
        tgm_arena_free(m.arena);
        return 2;
    }
    int errors = load(&m, &lo);
    if (!errors && lo.nbackend)
        errors = tgb_cli_gen(&m, lo.backend[0], lo.backend_name[0], lo.native, o.templates_dir,
                             o.out_dir);
    else if (!errors) {
        o.source_desc = lo.derivs ? tgs_fmt(m.arena, "%s, %s", lo.native, lo.derivs) : lo.native;
        errors = lo.nselect ? tgk_cli_gen(&m, lo.select[0], lo.select_objects, &o)
                            : tge_emit_all(&m, &o);
    }
    if (!errors && verbose) print_other_keys(&m);
    tgm_arena_free(m.arena);
    return errors ? 1 : 0;
}

int tgen_main(int argc, char **argv)
{
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        fputs(usage, stdout);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "--check")) return run_check(argc - 2, argv + 2, argv[0]);
    if (argc >= 2 && !strcmp(argv[1], "--gen")) return run_gen(argc - 2, argv + 2, argv[0]);
    fputs(usage, stderr);
    return 2;
}

/* tgen's command line: parse and validate the spec files, then (with --gen) hand the model to
 * the emitters. A function rather than main() so that the fuzz harnesses (tests/fuzz/) can run
 * the whole pipeline many times in one process: each call owns its arena and frees it, and
 * error counts are taken as differences, so no state carries from one call to the next. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "emit.h"
#include "formula.h"
#include "frontend.h"

static const char usage[] =
    "usage: tgen --check [--strict | --gen-limits] [--verbose] [--autograd-functions FILE]\n"
    "                  NATIVE.yaml [DERIVATIVES.yaml]\n"
    "       tgen --gen --native NATIVE.yaml [--derivatives DERIVATIVES.yaml]\n"
    "                  [--autograd-functions FILE] --templates DIR --out DIR [--docs DIR]\n"
    "       tgen --help\n"
    "\n"
    "  --check   parse and validate the spec files; parse every derivative formula (syntax\n"
    "            only) and print a one-line summary with how many parsed\n"
    "  --strict  with --check: also type-check every formula against the schemas, as --gen\n"
    "            does; a formula that does not parse or check is an error\n"
    "  --verbose with --check: list the formulas that do not parse, with the reason\n"
    "  --gen-limits\n"
    "            --strict, and also report as errors what type-checks but --gen cannot\n"
    "            generate yet (docs/autograd.md, \"Limits of generated nodes\")\n"
    "  --autograd-functions FILE\n"
    "            the functions formulas may call besides operators (docs/autograd.md);\n"
    "            default: autograd_functions.yaml beside the derivatives file, else the\n"
    "            project's specs/autograd_functions.yaml (found from tgen's own path)\n"
    "  --gen     parse, validate, then write the generated sources into --out (only files\n"
    "            whose text changed) and the operator reference into --docs\n"
    "\n"
    "Errors are printed as `file:line:col: error: message`. Exit status: 0 ok, 1 errors in\n"
    "the specs, 2 bad command line.\n";

/* Parses both files and validates them. Validation only runs on cleanly parsed files: an entry
 * that failed to parse is missing from the model, and checks against it would only repeat the
 * first error in other words. Returns the number of errors. */
static int load(tgm_model *m, const char *native, const char *derivs)
{
    int errors = tgm_parse_native_functions(m, native);
    if (derivs) errors += tgm_parse_derivatives(m, derivs);
    if (errors == 0) errors = tgm_validate(m);
    return errors;
}

static int explicit_funcs(const tgm_model *m)
{
    int n = 0;
    for (int i = 0; i < m->nfuncs; i++) n += !m->funcs[i]->is_autogen;
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

/* The vocabulary file: the one given, else the default (formula.h). */
static const char *vocab_path(tgm_arena *a, const char *given, const char *derivs,
                              const char *argv0)
{
    return given ? given : tgf_vocab_default_path(a, derivs, argv0);
}

static int run_check(int argc, char **argv, const char *argv0)
{
    bool strict = false, verbose = false, gen_limits = false;
    const char *vocab = NULL;
    for (; argc > 0 && argv[0][0] == '-'; argc--, argv++) {
        if (!strcmp(argv[0], "--strict")) strict = true;
        else if (!strcmp(argv[0], "--verbose")) verbose = true;
        else if (!strcmp(argv[0], "--gen-limits")) strict = gen_limits = true;
        else if (!strcmp(argv[0], "--autograd-functions") && argc > 1) {
            vocab = argv[1];
            argc--, argv++;
        } else break;
    }
    if (argc < 1 || argc > 2 || argv[0][0] == '-' || (argc == 2 && argv[1][0] == '-')) {
        fputs(usage, stderr);
        return 2;
    }
    tgm_model m = { .arena = tgm_arena_new() };
    m.autograd_functions = vocab_path(m.arena, vocab, argc == 2 ? argv[1] : NULL, argv0);
    int errors, unchecked = 0, skipped = 0, limited = 0;
    if (strict && argc == 2) {
        /* The formulas are checked even when the native file has errors, so that the state of
         * the derivatives can be measured on specs that do not yet validate: entries that
         * failed to parse are already dropped from the model, and the checker skips, silently,
         * the derivative entries whose own operator has no C view. */
        errors = tgm_parse_native_functions(&m, argv[0]);
        errors += tgm_parse_derivatives(&m, argv[1]);
        errors += tgm_validate(&m);
        errors += tgf_check_model(&m, gen_limits, &unchecked, &skipped, &limited);
    } else {
        errors = load(&m, argv[0], argc == 2 ? argv[1] : NULL);
        if (!errors && strict)
            errors = tgf_check_model(&m, gen_limits, &unchecked, &skipped, &limited);
    }
    /* What --strict could not check, so that a clean check is not mistaken for more than it
     * is: formulas using types without a C mapping, entries of operators without a C view. */
    if (unchecked || skipped)
        printf("not checked: %d formulas using types without a C mapping, %d derivative "
               "entries whose operator has no C view\n",
               unchecked, skipped);
    if (limited)
        printf("checked, but not generatable yet: %d derivative entries past the limits of "
               "generated nodes (docs/autograd.md)\n",
               limited);
    /* --verbose lists the unparsed formulas even when the specs have errors (with --strict
     * the derivatives are read either way; see above). */
    if (!errors || (verbose && strict && argc == 2)) {
        int total, parsed = parse_formulas(&m, verbose, &total);
        if (!errors) {
            printf("ok: %d functions, %d derivatives", explicit_funcs(&m), m.nderivs);
            if (argc == 2) printf(", %d/%d formulas parsed", parsed, total);
            printf("\n");
        }
    }
    tgm_arena_free(m.arena);
    return errors ? 1 : 0;
}

static int run_gen(int argc, char **argv, const char *argv0)
{
    const char *native = NULL, *derivs = NULL, *vocab = NULL;
    tge_options o = { 0 };
    for (int i = 0; i < argc; i++) {
        const char **slot = !strcmp(argv[i], "--native")               ? &native
                            : !strcmp(argv[i], "--derivatives")        ? &derivs
                            : !strcmp(argv[i], "--templates")          ? &o.templates_dir
                            : !strcmp(argv[i], "--out")                ? &o.out_dir
                            : !strcmp(argv[i], "--docs")               ? &o.docs_dir
                            : !strcmp(argv[i], "--autograd-functions") ? &vocab
                                                                       : NULL;
        if (!slot || i + 1 >= argc) {
            fprintf(stderr, "tgen: %s '%s'\n%s", slot ? "missing value after" : "unknown option",
                    argv[i], usage);
            return 2;
        }
        *slot = argv[++i];
    }
    if (!native || !o.templates_dir || !o.out_dir) {
        fprintf(stderr, "tgen: --gen needs --native, --templates and --out\n%s", usage);
        return 2;
    }
    tgm_model m = { .arena = tgm_arena_new() };
    m.autograd_functions = vocab_path(m.arena, vocab, derivs, argv0);
    int errors = load(&m, native, derivs);
    if (!errors) {
        o.source_desc = derivs ? tgs_fmt(m.arena, "%s, %s", native, derivs) : native;
        errors = tge_emit_all(&m, &o);
    }
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

/* Fuzz harness: the template engine (codegen/emit/template.c). The input is a template, rendered
 * against a fixed environment that defines every hole the real templates/ use (a name that
 * stands alone on a line there is a list, the others strings), plus a few of each kind, so
 * that the seeds (the templates themselves) render as they do in tgen. Oracle: the count of
 * errors returned is the count printed; rendering is deterministic; a template without '$' is
 * copied as it is (a last line gains its newline). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/diag.h"
#include "fuzz_common.h"
#include "emit/template.h"

static tgm_arena *g_arena; /* the environment's, for the whole process */
static tgt_env *g_env;

/* Defines the holes of one template: `${name}` alone on its line (spaces around) as a list,
 * elsewhere as a string, unless already a list. */
static void define_holes(const char *text, tgs_list *lists, tgs_list *strings)
{
    for (const char *p = strstr(text, "${"); p; p = strstr(p + 2, "${")) {
        const char *close = strchr(p, '}');
        if (!close || memchr(p, '\n', (size_t)(close - p))) continue;
        const char *ls = p, *le = close + 1;
        while (ls > text && (ls[-1] == ' ' || ls[-1] == '\t')) ls--;
        while (*le == ' ' || *le == '\t') le++;
        bool alone = (ls == text || ls[-1] == '\n') && (*le == '\n' || !*le);
        char *name = tgm_strndup(g_arena, p + 2, (size_t)(close - p - 2));
        tgs_list_add(alone ? lists : strings, g_arena, name);
    }
}

static void build_env(void)
{
    g_arena = tgm_arena_new();
    g_env = tgt_env_new(g_arena);
    tgs_list lists = { 0 }, strings = { 0 }, items = { 0 };
    const char *fixed_strings[] = { "s", "name", "empty", "source" };
    for (size_t i = 0; i < sizeof fixed_strings / sizeof *fixed_strings; i++)
        tgs_list_add(&strings, g_arena, fixed_strings[i]);
    tgs_list_add(&lists, g_arena, "list");
    char *dir = fuzz_path("templates");
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!strstr(e->d_name, ".in")) continue;
        tgt_template t = tgt_load(g_arena, dir, e->d_name);
        if (t.text) define_holes(t.text, &lists, &strings);
    }
    if (d) closedir(d);
    free(dir);
    /* A list item of two lines, an empty one and a plain one: the lone-hole indentation paths. */
    tgs_list_add(&items, g_arena, "item(1);");
    tgs_list_add(&items, g_arena, "two(2);\nlines(2);");
    tgs_list_add(&items, g_arena, "");
    for (int i = 0; i < strings.n; i++) tgt_setf(g_env, strings.items[i], "v_%s", strings.items[i]);
    tgt_set(g_env, "empty", "");
    tgt_set(g_env, "multi", "first\n  second\n");
    for (int i = 0; i < lists.n; i++) tgt_set_list(g_env, lists.items[i], &items);
    tgs_list none = { 0 };
    tgt_set_list(g_env, "none", &none);
}

static char *render(const tgt_template *t, int *errors)
{
    tgs_buf b;
    tgs_buf_init(&b);
    int before = tgm_error_count();
    *errors = tgt_render(t, g_env, &b);
    if (*errors != tgm_error_count() - before)
        fuzz_fail("tgt_render returned %d errors but printed %d", *errors,
                  tgm_error_count() - before);
    char *s = strdup(b.data ? b.data : "");
    tgs_buf_free(&b);
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!g_env) build_env();
    char *text = fuzz_strndup(data, size);
    tgt_template t = { "<fuzz>.in", text };
    int e1, e2;
    char *first = render(&t, &e1), *second = render(&t, &e2);
    if (e1 != e2 || strcmp(first, second)) fuzz_fail("rendering the same template twice differs");
    if (!strchr(text, '$')) {
        size_t n = strlen(text);
        bool same = !strncmp(first, text, n) &&
                    !strcmp(first + n, n == 0 || text[n - 1] == '\n' ? "" : "\n");
        if (!same) fuzz_fail("a template without holes was not copied as it is");
    }
    free(first);
    free(second);
    free(text);
    return 0;
}

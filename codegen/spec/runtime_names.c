/* The names the runtime declares, so that no generated operator takes one (`item` would be
 * `tg_item`, which runtime/tg_core.h declares; `_version` would be `tg__version`, core.h's).
 * `--runtime DIR` points tgen at the runtime's headers: every identifier starting with `tg_`
 * declared at file scope of DIR/ *.h and DIR/ * / *.h is collected. File scope is brace depth 0
 * outside comments, string and character literals and preprocessor lines: a declaration, a
 * typedef name or a parameter type, never a call inside an inline function's body (those name
 * generated operators on purpose). The braces of `extern "C" { ... }` do not count. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "spec/frontend.h"
#include "base/strbuf.h"

static bool ident_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/* Adds the `tg_` identifiers of `text` (the file `path`) at file scope to `names`, each
 * mapped to a tgm_loc of its first declaration. */
static void scan_header(tgm_arena *a, const char *path, const char *text, tgm_name_map *names)
{
    int depth = 0, line = 1;
    bool line_start = true;
    const char *line_at = text; /* where the current line begins, for columns */
    int extern_c = 0;           /* open `extern "C" {` blocks, which stay at file scope */
    bool after_extern = false;  /* the last token was `extern`, then maybe "C" */
    const char *file = tgm_strdup(a, path);
    for (const char *p = text; *p;) {
        char c = *p;
        if (c == '\n') {
            line++;
            line_start = true;
            line_at = ++p;
        } else if (c == ' ' || c == '\t' || c == '\r') {
            p++;
        } else if (c == '#' && line_start) { /* a directive, with its continuation lines */
            while (*p && !(*p == '\n' && p[-1] != '\\'))
                if (*p++ == '\n') line++, line_at = p;
        } else if (c == '/' && p[1] == '*') {
            const char *e = strstr(p + 2, "*/");
            for (const char *q = p; q < (e ? e : p + strlen(p)); q++)
                if (*q == '\n') line++, line_at = q + 1;
            p = e ? e + 2 : p + strlen(p);
        } else if (c == '/' && p[1] == '/') {
            while (*p && *p != '\n') p++;
        } else if (c == '"' || c == '\'') {
            bool extern_c_string = after_extern && c == '"' && p[1] == 'C' && p[2] == '"';
            for (p++; *p && *p != c && *p != '\n'; p++)
                if (*p == '\\' && p[1]) p++;
            if (*p == c) p++;
            after_extern = extern_c_string;
        } else {
            line_start = false;
            bool extern_c_brace = c == '{' && after_extern && depth == 0;
            after_extern = false;
            if (extern_c_brace) extern_c++;
            else if (c == '{') depth++;
            else if (c == '}' && depth > 0) depth--;
            else if (c == '}' && extern_c > 0) extern_c--;
            if (!ident_char(c)) {
                p++;
                continue;
            }
            const char *s = p;
            while (ident_char(*p)) p++;
            size_t n = (size_t)(p - s);
            after_extern = n == 6 && !strncmp(s, "extern", 6);
            if (depth == 0 && n > 3 && !strncmp(s, "tg_", 3)) {
                char *name = tgm_alloc(a, n - 2);
                memcpy(name, s + 3, n - 3); /* without `tg_`: the C name it would take */
                name[n - 3] = '\0';
                if (!tgm__map_get(names, name)) {
                    tgm_loc *loc = tgm_alloc(a, sizeof *loc);
                    *loc = (tgm_loc){ file, line, (int)(s - line_at) + 1 };
                    tgm__map_put(names, name, loc);
                }
            }
        }
    }
}

static int scan_file(tgm_arena *a, const char *path, tgm_name_map *names)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        tgm_error((tgm_loc){ path, 0, 0 }, "cannot read runtime header");
        return 1;
    }
    tgs_buf b;
    tgs_buf_init(&b);
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) tgs_putn(&b, chunk, got);
    fclose(f);
    const char *text = tgs_finish(&b, a);
    scan_header(a, path, text, names);
    return 0;
}

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* The headers of `dir` and of its subdirectories (one level: runtime/core/, runtime/dispatch/,
 * ...), in name order so that a name's reported location does not depend on readdir. */
static int scan_dir(tgm_arena *a, const char *dir, int levels, tgm_name_map *names)
{
    struct dirent **ents;
    int n = scandir(dir, &ents, NULL, alphasort);
    if (n < 0) {
        tgm_error((tgm_loc){ dir, 0, 0 }, "cannot read the runtime directory");
        return 1;
    }
    int errors = 0;
    for (int i = 0; i < n; i++) {
        const char *e = ents[i]->d_name;
        const char *path = tgs_fmt(a, "%s/%s", dir, e);
        struct stat st;
        if (e[0] == '.') {
        } else if (ends_with(e, ".h")) {
            errors += scan_file(a, path, names);
        } else if (levels > 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
            errors += scan_dir(a, path, levels - 1, names);
        }
        free(ents[i]);
    }
    free(ents);
    return errors;
}

int tgm_read_runtime_names(tgm_model *m, const char *dir)
{
    m->runtime_names = tgm__map_new(m->arena);
    return scan_dir(m->arena, dir, 1, m->runtime_names);
}

/* Loading a spec file with libyaml's document API, and turning libyaml's marks into tgm_locs.
 *
 * The document API (a node tree with a start mark per node) is fast enough for PyTorch's
 * 520 KB file and keeps the parsers simple: they look fields up in a mapping instead of
 * tracking a state machine over events. The file's bytes are kept so that an offset inside a
 * quoted or folded scalar can be mapped back to its line and column (tgm_text_loc). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/frontend.h"

static bool read_file(tgm_arena *a, const char *path, tgm_yaml_doc *d)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        tgm_error((tgm_loc){ d->path, 0, 0 }, "cannot open file: %s", strerror(errno));
        return false;
    }
    size_t cap = 1 << 16, len = 0;
    char *buf = malloc(cap);
    for (size_t n; buf && (n = fread(buf + len, 1, cap - len - 1, f)) > 0;) {
        len += n;
        if (cap - len - 1 == 0) {
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
    }
    bool ok = buf && !ferror(f);
    fclose(f);
    if (!ok) {
        free(buf);
        tgm_error((tgm_loc){ d->path, 0, 0 }, "cannot read file");
        return false;
    }
    d->src = tgm_strndup(a, buf, len);
    d->len = len;
    free(buf);
    return true;
}

static void index_lines(tgm_arena *a, tgm_yaml_doc *d)
{
    int n = 1;
    for (size_t i = 0; i < d->len; i++) n += d->src[i] == '\n';
    d->line_start = tgm_alloc(a, (size_t)(n + 1) * sizeof *d->line_start);
    d->nlines = 0;
    d->line_start[d->nlines++] = 0;
    for (size_t i = 0; i < d->len; i++)
        if (d->src[i] == '\n') d->line_start[d->nlines++] = i + 1;
}

static tgm_loc mark_loc(const tgm_yaml_doc *d, yaml_mark_t m)
{
    return (tgm_loc){ d->path, (int)m.line + 1, (int)m.column + 1 };
}

static void report_yaml_error(const tgm_yaml_doc *d, const yaml_parser_t *p)
{
    if (p->error == YAML_MEMORY_ERROR) {
        tgm_error((tgm_loc){ d->path, 0, 0 }, "out of memory while parsing YAML");
        return;
    }
    if (p->error == YAML_READER_ERROR) {
        /* Reader errors (bad UTF-8, control characters) only have a byte offset. */
        size_t off = p->problem_offset;
        int line = 0;
        while (line + 1 < d->nlines && d->line_start[line + 1] <= off) line++;
        tgm_loc loc = { d->path, line + 1, (int)(off - d->line_start[line]) + 1 };
        tgm_error(loc, "invalid YAML input: %s", p->problem ? p->problem : "unreadable byte");
        return;
    }
    tgm_loc loc = mark_loc(d, p->problem_mark);
    const char *problem = p->problem ? p->problem : "malformed YAML";
    if (p->context)
        tgm_error(loc, "%s (%s at %d:%d)", problem, p->context, (int)p->context_mark.line + 1,
                  (int)p->context_mark.column + 1);
    else tgm_error(loc, "%s", problem);
}

/* Every stage reads scalars as NUL-terminated strings, so a scalar with a NUL inside (the
 * `"\0"` escape) would silently lose the rest of its text: it is an error at the NUL. */
static bool check_nul(tgm_arena *a, const tgm_yaml_doc *d)
{
    bool ok = true;
    for (const yaml_node_t *n = d->doc.nodes.start; n < d->doc.nodes.top; n++) {
        if (n->type != YAML_SCALAR_NODE) continue;
        const char *text = (const char *)n->data.scalar.value;
        size_t len = strlen(text);
        if (len == n->data.scalar.length) continue;
        tgm_error(tgm_text_loc(tgm__text_start(d, n), tgm__node_span(a, d, n), text, len),
                  "a NUL character (\\0) cannot be part of a string");
        ok = false;
    }
    return ok;
}

/* How deeply lists and mappings may nest in a spec file (PyTorch's files nest 4 deep). */
enum { YAML_MAX_DEPTH = 64 };

/* Walks the file's events before loading it, stopping at the first list or mapping nested
 * deeper than YAML_MAX_DEPTH: libyaml's scanner rescans every open flow level at each token,
 * so `[[[[...` deep input costs time quadratic in its depth (minutes for a few MB), and the
 * parsers below would not know what to make of it anyway. Bounding the depth here keeps the
 * scan linear. Returns false after an error; syntax errors are reported as the loader would. */
static bool check_depth(tgm_yaml_doc *d)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        tgm_error((tgm_loc){ d->path, 0, 0 }, "cannot initialise the YAML parser");
        return false;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)d->src, d->len);
    bool ok = true, done = false;
    for (int depth = 0; ok && !done;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            report_yaml_error(d, &p);
            ok = false;
            break;
        }
        if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
            if (++depth > YAML_MAX_DEPTH) {
                tgm_error(mark_loc(d, ev.start_mark),
                          "lists and mappings nest more than %d levels deep here", YAML_MAX_DEPTH);
                ok = false;
            }
        } else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
            depth--;
        }
        done = ev.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return ok;
}

bool tgm__yaml_load(tgm_arena *a, const char *path, tgm_yaml_doc *d)
{
    memset(d, 0, sizeof *d);
    d->path = tgm_strdup(a, path);
    if (!read_file(a, path, d)) return false;
    index_lines(a, d);
    if (!check_depth(d)) return false;
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        tgm_error((tgm_loc){ d->path, 0, 0 }, "cannot initialise the YAML parser");
        return false;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)d->src, d->len);
    bool ok = yaml_parser_load(&p, &d->doc) != 0;
    if (ok) d->loaded = true;
    else report_yaml_error(d, &p);
    yaml_parser_delete(&p);
    return ok && check_nul(a, d);
}

void tgm__yaml_done(tgm_yaml_doc *d)
{
    if (d->loaded) yaml_document_delete(&d->doc);
    d->loaded = false;
}

tgm_loc tgm__node_loc(const tgm_yaml_doc *d, const yaml_node_t *n)
{
    return mark_loc(d, n->start_mark);
}

/* Byte offset of a mark: libyaml counts columns in characters, so walk UTF-8 lead bytes. */
static size_t mark_offset(const tgm_yaml_doc *d, yaml_mark_t m)
{
    if ((int)m.line >= d->nlines) return d->len;
    size_t off = d->line_start[m.line];
    for (size_t c = 0; c < m.column && off < d->len; c++) {
        off++;
        while (off < d->len && ((unsigned char)d->src[off] & 0xC0) == 0x80) off++;
    }
    return off;
}

static bool is_block_scalar(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE && (n->data.scalar.style == YAML_LITERAL_SCALAR_STYLE ||
                                           n->data.scalar.style == YAML_FOLDED_SCALAR_STYLE);
}

static bool is_quoted(const yaml_node_t *n)
{
    return n->type == YAML_SCALAR_NODE &&
           (n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
            n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE);
}

/* Where the text of a scalar starts, as a byte offset and a loc. */
static size_t text_start(const tgm_yaml_doc *d, const yaml_node_t *n, tgm_loc *loc)
{
    size_t off = mark_offset(d, n->start_mark);
    *loc = tgm__node_loc(d, n);
    if (is_quoted(n)) {
        loc->col++;
        return off + 1;
    }
    if (is_block_scalar(n)) {
        /* `|` or `>` ends its line; the text starts at the first non-blank after it. */
        while (off < d->len && d->src[off] != '\n') off++;
        while (off < d->len && (d->src[off] == '\n' || d->src[off] == ' ')) {
            if (d->src[off] == '\n') {
                loc->line++;
                loc->col = 1;
            } else {
                loc->col++;
            }
            off++;
        }
    }
    return off;
}

tgm_loc tgm__text_start(const tgm_yaml_doc *d, const yaml_node_t *n)
{
    tgm_loc loc;
    text_start(d, n, &loc);
    return loc;
}

const tgm_span *tgm__node_span(tgm_arena *a, const tgm_yaml_doc *d, const yaml_node_t *n)
{
    if (!is_quoted(n) && !is_block_scalar(n) && n->start_mark.line == n->end_mark.line) return NULL;
    tgm_span *sp = tgm_alloc(a, sizeof *sp);
    tgm_loc unused;
    sp->src = d->src;
    sp->start = text_start(d, n, &unused);
    sp->quote = n->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE   ? '\''
                : n->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE ? '"'
                                                                          : 0;
    return sp;
}

/* Walks the file bytes and the decoded text side by side: an escape (`''` in single quotes,
 * `\x` in double quotes) is one text character, equal bytes advance both, anything else in
 * the file (line breaks and indentation folded into one space, an escaped line break) is
 * skipped. That is exact for everything schemas and formulas contain. */
tgm_loc tgm_text_loc(tgm_loc start, const tgm_span *span, const char *text, size_t offset)
{
    tgm_loc loc = start;
    if (!span) {
        loc.col += (int)offset;
        return loc;
    }
    const char *r = span->src + span->start;
    size_t v = 0;
    for (;;) {
        if (!*r) break;
        int esc = 0; /* bytes of an escape sequence that stands for one text character */
        if (span->quote == '\'' && r[0] == '\'' && r[1] == '\'') esc = 2;
        else if (span->quote == '"' && r[0] == '\\' && r[1] && r[1] != '\n') esc = 2;
        if (esc) {
            if (v == offset) break;
            v += text[v] != 0;
            r += esc;
            loc.col += esc;
            continue;
        }
        bool match = text[v] && *r == text[v];
        if (match && v == offset) break;
        if (!text[v] && v == offset) break;
        if (match) v++;
        if (*r == '\n') {
            loc.line++;
            loc.col = 1;
        } else if (((unsigned char)*r & 0xC0) != 0x80) {
            loc.col++;
        }
        r++;
    }
    return loc;
}

const char *tgm__scalar(const yaml_node_t *n) { return (const char *)n->data.scalar.value; }

const char *tgm__node_kind(const yaml_node_t *n)
{
    switch (n->type) {
    case YAML_SCALAR_NODE: return "a scalar";
    case YAML_SEQUENCE_NODE: return "a list";
    case YAML_MAPPING_NODE: return "a mapping";
    default: return "nothing";
    }
}

bool tgm__node_bool(const tgm_yaml_doc *d, const yaml_node_t *n, const char *field, bool *out)
{
    if (n->type == YAML_SCALAR_NODE && !is_quoted(n)) {
        const char *s = tgm__scalar(n);
        if (!strcmp(s, "True") || !strcmp(s, "true")) {
            *out = true;
            return true;
        }
        if (!strcmp(s, "False") || !strcmp(s, "false")) {
            *out = false;
            return true;
        }
    }
    if (n->type == YAML_SCALAR_NODE)
        tgm_error(tgm__node_loc(d, n), "'%s' must be True or False, not '%s'", field,
                  tgm__scalar(n));
    else
        tgm_error(tgm__node_loc(d, n), "'%s' must be True or False, not %s", field,
                  tgm__node_kind(n));
    return false;
}

int tgm__node_names(tgm_arena *a, const tgm_yaml_doc *d, const yaml_node_t *n, const char *field,
                    const char ***out, tgm_loc **locs)
{
    const char **names = NULL;
    tgm_loc *ls = NULL;
    int count = 0, cap = 0, lcap = 0, lcount = 0;
    if (n->type == YAML_SCALAR_NODE) {
        const char *s = tgm__scalar(n);
        tgm_loc start = tgm__text_start(d, n);
        const tgm_span *span = tgm__node_span(a, d, n);
        for (const char *p = s;;) {
            const char *e = strchr(p, ',');
            size_t len = e ? (size_t)(e - p) : strlen(p), lead;
            char *name = tgm__trim_dup(a, p, len, &lead);
            tgm_loc loc = tgm_text_loc(start, span, s, (size_t)(p - s) + lead);
            if (!*name) {
                tgm_error(loc, "empty name in '%s'", field);
                return -1;
            }
            *TGS_PUSH(a, names, count, cap) = name;
            *TGS_PUSH(a, ls, lcount, lcap) = loc;
            if (!e) break;
            p = e + 1;
        }
    } else if (n->type == YAML_SEQUENCE_NODE) {
        for (yaml_node_item_t *it = n->data.sequence.items.start; it < n->data.sequence.items.top;
             it++) {
            yaml_node_t *item = tgm__yaml_node(d, *it);
            if (item->type != YAML_SCALAR_NODE || !*tgm__scalar(item)) {
                tgm_error(tgm__node_loc(d, item), "'%s' items must be names, not %s", field,
                          item->type == YAML_SCALAR_NODE ? "an empty string"
                                                         : tgm__node_kind(item));
                return -1;
            }
            *TGS_PUSH(a, names, count, cap) = tgm_strdup(a, tgm__scalar(item));
            *TGS_PUSH(a, ls, lcount, lcap) = tgm__text_start(d, item);
        }
    } else {
        tgm_error(tgm__node_loc(d, n), "'%s' must be a comma-separated string or a list, not %s",
                  field, tgm__node_kind(n));
        return -1;
    }
    *out = names;
    if (locs) *locs = ls;
    return count;
}

static void for_each_item(tgm_parse_ctx *c, const yaml_node_t *list, const char *first_key,
                          void (*entry)(tgm_parse_ctx *c, const yaml_node_t *item))
{
    for (yaml_node_item_t *it = list->data.sequence.items.start; it < list->data.sequence.items.top;
         it++) {
        yaml_node_t *item = tgm__yaml_node(c->d, *it);
        if (item->type == YAML_MAPPING_NODE) entry(c, item);
        else
            tgm_error(tgm__node_loc(c->d, item),
                      "expected an entry (a mapping with '%s:'), found %s", first_key,
                      tgm__node_kind(item));
    }
}

int tgm__parse_entries(tgm_model *m, const char *path, const char *first_key,
                       void (*entry)(tgm_parse_ctx *c, const yaml_node_t *item))
{
    int before = tgm_error_count();
    tgm_yaml_doc d;
    tgm_parse_ctx c = { .m = m, .a = m->arena, .d = &d };
    if (tgm__yaml_load(m->arena, path, &d)) {
        yaml_node_t *root = yaml_document_get_root_node(&d.doc);
        if (root && root->type == YAML_MAPPING_NODE)
            tgm__parse_sections(&c, root, first_key, entry);
        else if (root && root->type != YAML_SEQUENCE_NODE)
            tgm_error(tgm__node_loc(&d, root), "expected a list of '- %s:' entries, found %s",
                      first_key, tgm__node_kind(root));
        else if (root) for_each_item(&c, root, first_key, entry);
    }
    tgm__yaml_done(&d);
    return tgm_error_count() - before;
}

static bool is_known(const char *name, const char *const *known)
{
    for (int i = 0; known[i]; i++)
        if (!strcmp(name, known[i])) return true;
    return false;
}

const char *tgm__key_text(const tgm_yaml_doc *d, const yaml_node_t *k, const char *what)
{
    if (k->type == YAML_SCALAR_NODE) return tgm__scalar(k);
    tgm_error(tgm__node_loc(d, k), "%s must be strings, not %s", what, tgm__node_kind(k));
    return NULL;
}

const char *tgm__field_name(const tgm_yaml_doc *d, const yaml_node_pair_t *pairs,
                            const yaml_node_pair_t *p, const char *const *known)
{
    yaml_node_t *k = tgm__yaml_node(d, p->key);
    const char *name = tgm__key_text(d, k, "field names");
    if (!name) return NULL;
    if (known && !is_known(name, known)) {
        tgm_error(tgm__node_loc(d, k), "unknown field '%s'", name);
        return NULL;
    }
    for (const yaml_node_pair_t *q = pairs; q < p; q++) {
        yaml_node_t *qk = tgm__yaml_node(d, q->key);
        if (qk->type == YAML_SCALAR_NODE && !strcmp(tgm__scalar(qk), name)) {
            tgm_error(tgm__node_loc(d, k), "field '%s' appears twice", name);
            break;
        }
    }
    return name;
}

yaml_node_t *tgm__yaml_node(const tgm_yaml_doc *d, int id)
{
    return yaml_document_get_node((yaml_document_t *)&d->doc, id);
}

/* ---- small helpers ---- */

bool tgm__is_ident(const char *s)
{
    if (!s || !(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))) return false;
    for (s++; *s; s++)
        if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
              (*s >= '0' && *s <= '9')))
            return false;
    return true;
}

char *tgm__trim_dup(tgm_arena *a, const char *s, size_t n, size_t *lead)
{
    size_t b = 0;
    while (b < n && (s[b] == ' ' || s[b] == '\t')) b++;
    while (n > b && (s[n - 1] == ' ' || s[n - 1] == '\t')) n--;
    if (lead) *lead = b;
    return tgm_strndup(a, s + b, n - b);
}

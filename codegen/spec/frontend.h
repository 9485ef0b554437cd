/* Internals shared by tgen's front end (arena.c, model.c, yaml_doc.c, parse_*.c, validate.c,
 * autogen.c).
 * Nothing here is part of the model contract in model.h; emitters should not need it. */
#ifndef TGEN_FRONTEND_H
#define TGEN_FRONTEND_H

#include <yaml.h>

#include "spec/model.h"
#include "base/strbuf.h"

/* ---- where a YAML scalar's text came from (see tgm_text_loc in model.h) ---- */
struct tgm_span {
    const char *src; /* the whole file, NUL-terminated */
    size_t start;    /* byte offset of the text's first character (after a quote) */
    char quote;      /* '\'', '"' or 0: how escapes are spelled */
};

/* ---- a loaded YAML file ---- */
typedef struct tgm_yaml_doc {
    const char *path; /* interned file name used in every tgm_loc */
    char *src;        /* the file's bytes, NUL-terminated, in the arena */
    size_t len;
    size_t *line_start; /* byte offset of each line (0-based line index) */
    int nlines;
    yaml_document_t doc;
    bool loaded; /* doc must be deleted */
} tgm_yaml_doc;

/* Reads and parses `path`. Reports I/O and YAML syntax errors (at libyaml's mark) and returns
 * false; on success the root node is yaml_document_get_root_node(&d->doc) (NULL if empty). */
bool tgm__yaml_load(tgm_arena *a, const char *path, tgm_yaml_doc *d);
void tgm__yaml_done(tgm_yaml_doc *d);
tgm_loc tgm__node_loc(const tgm_yaml_doc *d, const yaml_node_t *n);
/* The node numbered `id` (a mapping's key or value, a list's item) of the file's document. */
yaml_node_t *tgm__yaml_node(const tgm_yaml_doc *d, int id);

/* What a spec file's parser (parse_native.c, parse_derivatives.c) carries through the file:
 * the model it appends to, its arena and the loaded file. */
typedef struct tgm_parse_ctx {
    tgm_model *m;
    tgm_arena *a;
    tgm_yaml_doc *d;
    bool sectioned; /* the file is sectioned: derivatives entries have `version:` */
    /* Set by a reader whose entries may carry a vendor's own fields (a backend file's custom
     * sections, codegen/backend/): a field a native entry does not have goes to it, to be
     * counted, instead of being an error. */
    void (*vendor_field)(void *ctx, const char *key);
    void *vendor_ctx;
} tgm_parse_ctx;
/* Loads `path` and calls entry(c, item) for each item of its top-level list, with c naming m
 * and the loaded file. A root that is not a list is reported as "expected a list of
 * '- <first_key>:' entries, found ...", an item that is not a mapping as "expected an entry (a
 * mapping with '<first_key>:'), found ...". The file is released before returning. Returns the
 * number of errors reported meanwhile. */
int tgm__parse_entries(tgm_model *m, const char *path, const char *first_key,
                       void (*entry)(tgm_parse_ctx *c, const yaml_node_t *item));
/* The text of a mapping key, or NULL after an error (`<what> must be strings, not a list`) when
 * the key is a list or a mapping: YAML allows any node as a key, and such a node has no text
 * (libyaml's scalar fields of it are its item array). Every key read goes through this. */
const char *tgm__key_text(const tgm_yaml_doc *d, const yaml_node_t *k, const char *what);
/* The name of the field of pair p of a mapping whose pairs start at `pairs`, or NULL after an
 * error when it is not a string or (with a NULL-terminated `known` list) not a known field.
 * A name that an earlier pair already has is reported ("field 'x' appears twice") and returned. */
const char *tgm__field_name(const tgm_yaml_doc *d, const yaml_node_pair_t *pairs,
                            const yaml_node_pair_t *p, const char *const *known);
/* Position of the first character of a scalar's text (after the opening quote). */
tgm_loc tgm__text_start(const tgm_yaml_doc *d, const yaml_node_t *n);
/* The span of a scalar (NULL when plain and on one line: col + offset is exact). */
const tgm_span *tgm__node_span(tgm_arena *a, const tgm_yaml_doc *d, const yaml_node_t *n);
const char *tgm__scalar(const yaml_node_t *n);    /* NUL-terminated scalar text */
const char *tgm__node_kind(const yaml_node_t *n); /* "a mapping", "a list", ... for errors */
/* Scalar True/False/true/false; reports an error naming `field` otherwise. */
bool tgm__node_bool(const tgm_yaml_doc *d, const yaml_node_t *n, const char *field, bool *out);
/* A scalar split on commas ("function, method") or a list of scalars, trimmed, into an arena
 * array. Reports an error for other shapes or empty items; returns the count or -1. */
int tgm__node_names(tgm_arena *a, const tgm_yaml_doc *d, const yaml_node_t *n, const char *field,
                    const char ***out, tgm_loc **locs);

/* ---- fields read as data (data_fields.c) ---- */
/* Whether `name` is a native entry's field tensorgen reads as data (an older PyTorch's, a
 * vendor's); if so checks the value's shape (reporting errors) and counts it. */
bool tgm__data_field(tgm_parse_ctx *c, const char *name, const yaml_node_t *v);
/* Whether `name` is one of op-plugin's per-entry version fields (`op_api:`, `acl_op:`, ...). */
bool tgm__is_version_field(const char *name);

/* ---- sectioned files (parse_sections.c) ---- */
/* A spec file whose root is a mapping of sections (op-plugin's `all_version:`, `official:`,
 * `custom:`, ..., `backward:`): each section's entries go to entry(), those whose versions
 * exclude the chosen PyTorch version (m->reading) skipped. A mapping that is no sectioned file
 * is reported as tgm__parse_entries reports a root that is not a list. */
void tgm__parse_sections(tgm_parse_ctx *c, const yaml_node_t *root, const char *first_key,
                         void (*entry)(tgm_parse_ctx *c, const yaml_node_t *item));

/* ---- namespaces (namespaces.c) ---- */
/* Checks that the entries are the library's (m->ns) and makes them so; with --only-namespace
 * (m->reading.only_ns) first drops the other namespaces' entries. A file mixing namespaces
 * without it is one error. Returns the number of errors. */
int tgm__check_namespaces(tgm_model *m);

/* One `- func:` entry of native_functions.yaml, parsed into c->m (parse_native.c): what a
 * backend file's custom operators (codegen/backend/) are read with. */
void tgm__parse_native_entry(tgm_parse_ctx *c, const yaml_node_t *entry);
/* A native file parsed into *out (n entries) instead of m->funcs, which it leaves as they
 * were: --import's and --base's operators. Returns the number of errors. */
int tgm__parse_aside(tgm_model *m, const char *path, tgm_func ***out, int *n);
/* Whether `name` is a field of a native_functions.yaml entry. */
bool tgm__native_field_known(const char *name);

/* Appends to m->funcs / m->derivs (arrays of pointers whose capacity follows the count;
 * model.c). */
void tgm__add_func(tgm_model *m, tgm_func *f);
void tgm__add_deriv(tgm_model *m, tgm_derivative *d);

/* ---- small helpers (yaml_doc.c) ---- */
bool tgm__is_ident(const char *s); /* [A-Za-z_][A-Za-z0-9_]* */
/* A kernel name: an identifier, possibly namespace-qualified (`at::native::foo`); a `dispatch:`
 * kernel's and a kernel library's kernel_name (parse_native.c). */
bool tgm__is_kernel_name(const char *s);
char *tgm__trim_dup(tgm_arena *a, const char *s, size_t n, size_t *lead); /* strip spaces */

/* Schema parsing with a span for quoted/folded YAML scalars (tgm_parse_schema passes NULL). */
int tgm__parse_schema_span(tgm_arena *a, const char *text, tgm_loc loc, const tgm_span *span,
                           tgm_schema *out);
/* Derive kind from a parsed schema (functional/inplace/out/mutable/scratch). */
tgm_kind tgm__schema_kind(const tgm_schema *s);

/* autogen.c: synthesise the entries named by each func's `autogen:` (appended to m->funcs). */
int tgm__autogen_all(tgm_model *m);
/* `Tensor(a!)[]` etc. as the schema language writes it. */
char *tgm__type_str(tgm_arena *a, const tgm_type *t);
/* The base type spelt `len` bytes of text ("Tensor", "SymInt"); TGM_BASE_COUNT when none is. */
tgm_base tgm__base_named(const char *text, size_t len);
/* Returns true when `a` and `b` are the same type (alias annotations included). */
bool tgm__type_eq(const tgm_type *a, const tgm_type *b);

#endif

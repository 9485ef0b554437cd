/* Fields of native entries that tensorgen reads as data: written by PyTorch releases before
 * 1.13 (1.5's `use_c10_dispatcher`, `supports_named_tensor`, ...) or by a vendor beside
 * PyTorch's fields (torch_npu's `npu_dispatch`, op-plugin's `op_api`, `gen_opapi`, TensorPlay's `skip_implementation`, ...).
 * They mean nothing to tensorgen's generated code, so they are not compiled; but a field is
 * accepted only when it is one of these, with the shape its writers give it, so that a typo
 * (`dispach:`) stays an error and nothing is misread. Each is counted, and --check's summary
 * says once which were read as data (tgm_print_reading). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spec/frontend.h"

typedef enum shape {
    SHAPE_BOOL,     /* True / False */
    SHAPE_NAME,     /* one of `choices` */
    SHAPE_KERNELS,  /* a mapping of dispatch keys to kernel names, as `dispatch:` */
    SHAPE_VERSIONS, /* op-plugin's versions: `all_version`, `v2.1, v2.2` or `[v2.1, newest]`
                     * (checked against the file's `all_version:` by parse_sections.c) */
    SHAPE_MAPPING,  /* a mapping, whatever it holds (op-plugin's generator instructions) */
} shape;

static const struct {
    const char *name;
    shape shape;
    const char *choices[5];
} data_fields[] = {
    /* PyTorch 1.5 (and the releases around it): the dispatcher's and named tensors' flags. */
    { "use_c10_dispatcher",
      SHAPE_NAME,
      { "full", "unboxed_only", "with_codegenerated_unboxing_wrapper",
        "hacky_wrapper_for_legacy_signatures", NULL } },
    { "supports_named_tensor", SHAPE_BOOL, { NULL } },
    { "requires_tensor", SHAPE_BOOL, { NULL } },
    { "named_guard", SHAPE_BOOL, { NULL } },
    { "matches_jit_signature", SHAPE_BOOL, { NULL } },
    /* torch_npu's PyTorch 1.5: the NPU backend's kernels beside `dispatch:`. */
    { "npu_dispatch", SHAPE_KERNELS, { NULL } },
    { "npu_dispatch_only", SHAPE_KERNELS, { NULL } },
    /* op-plugin: which of its implementations an operator has, in which PyTorch versions. */
    { "acl_op", SHAPE_VERSIONS, { NULL } },
    { "op_api", SHAPE_VERSIONS, { NULL } },
    { "internal_format_opapi", SHAPE_VERSIONS, { NULL } },
    { "sparse", SHAPE_VERSIONS, { NULL } },
    { "dvm", SHAPE_VERSIONS, { NULL } },
    { "exposed", SHAPE_VERSIONS, { NULL } },
    { "gen_opapi", SHAPE_MAPPING, { NULL } },
    /* TensorPlay: its generator writes no implementation for the entry. */
    { "skip_implementation", SHAPE_BOOL, { NULL } },
};
enum { NDATA = sizeof data_fields / sizeof data_fields[0] };

static int field_index(const char *name)
{
    for (int i = 0; i < NDATA; i++)
        if (!strcmp(data_fields[i].name, name)) return i;
    return -1;
}

bool tgm__is_version_field(const char *name)
{
    int i = field_index(name);
    return i >= 0 && data_fields[i].shape == SHAPE_VERSIONS;
}

static void check_kernels(tgm_parse_ctx *c, const char *name, const yaml_node_t *v)
{
    if (v->type != YAML_MAPPING_NODE) {
        tgm_error(tgm__node_loc(c->d, v),
                  "'%s' must be a mapping of dispatch keys to kernels, not %s", name,
                  tgm__node_kind(v));
        return;
    }
    for (yaml_node_pair_t *p = v->data.mapping.pairs.start; p < v->data.mapping.pairs.top; p++) {
        yaml_node_t *k = tgm__yaml_node(c->d, p->key), *val = tgm__yaml_node(c->d, p->value);
        if (!tgm__key_text(c->d, k, "dispatch keys")) continue;
        if (val->type != YAML_SCALAR_NODE)
            tgm_error(tgm__node_loc(c->d, val), "the kernel of '%s' in '%s' must be a name, not %s",
                      tgm__scalar(k), name, tgm__node_kind(val));
    }
}

static void check_shape(tgm_parse_ctx *c, int i, const yaml_node_t *v)
{
    const char *name = data_fields[i].name;
    bool unused;
    switch (data_fields[i].shape) {
    case SHAPE_BOOL: tgm__node_bool(c->d, v, name, &unused); return;
    case SHAPE_NAME:
        if (v->type == YAML_SCALAR_NODE)
            for (int k = 0; data_fields[i].choices[k]; k++)
                if (!strcmp(tgm__scalar(v), data_fields[i].choices[k])) return;
        {
            tgs_list l = { 0 };
            for (int k = 0; data_fields[i].choices[k]; k++)
                tgs_list_add(&l, c->a, data_fields[i].choices[k]);
            tgm_error(tgm__node_loc(c->d, v), "unknown %s '%s' (expected %s)", name,
                      v->type == YAML_SCALAR_NODE ? tgm__scalar(v) : tgm__node_kind(v),
                      tgs_list_join(&l, c->a, ", "));
        }
        return;
    case SHAPE_KERNELS: check_kernels(c, name, v); return;
    case SHAPE_VERSIONS:
        if (v->type == YAML_MAPPING_NODE)
            tgm_error(tgm__node_loc(c->d, v), "'%s' must be versions (a name or a list), not %s",
                      name, tgm__node_kind(v));
        return;
    case SHAPE_MAPPING:
        if (v->type != YAML_MAPPING_NODE)
            tgm_error(tgm__node_loc(c->d, v), "'%s' must be a mapping, not %s", name,
                      tgm__node_kind(v));
        return;
    }
}

bool tgm__data_field(tgm_parse_ctx *c, const char *name, const yaml_node_t *v)
{
    int i = field_index(name);
    if (i < 0) return false;
    check_shape(c, i, v);
    tgm_reading *r = &c->m->reading;
    if (!r->data_fields) r->data_fields = tgm_alloc(c->a, NDATA * sizeof *r->data_fields);
    r->data_fields[i]++;
    return true;
}

static int by_count(const void *x, const void *y)
{
    const int *a = x, *b = y; /* {count, index} pairs */
    return a[0] != b[0] ? b[0] - a[0] : a[1] - b[1];
}

/* "not used: 3 fields read as data (npu_dispatch 817, supports_named_tensor 420, ...)". */
static void print_data_fields(const tgm_reading *r)
{
    int pairs[NDATA][2], n = 0;
    for (int i = 0; r->data_fields && i < NDATA; i++)
        if (r->data_fields[i]) {
            pairs[n][0] = r->data_fields[i];
            pairs[n++][1] = i;
        }
    if (!n) return;
    qsort(pairs, (size_t)n, sizeof pairs[0], by_count);
    printf("not used: %d field%s read as data (", n, n == 1 ? "" : "s");
    for (int k = 0; k < n; k++)
        printf("%s%s %d", k ? ", " : "", data_fields[pairs[k][1]].name, pairs[k][0]);
    printf(")\n");
}

void tgm_print_reading(const tgm_model *m)
{
    const tgm_reading *r = &m->reading;
    print_data_fields(r);
    if (r->versioned)
        printf("versions: entries for PyTorch %s; %d entr%s of other versions skipped\n",
               r->version_used, r->version_skipped, r->version_skipped == 1 ? "y" : "ies");
    if (r->restated)
        printf("restated: %d 'symint:'/'autograd:' entr%s naming a definition of the file\n",
               r->restated, r->restated == 1 ? "y" : "ies");
    if (r->base)
        printf("base: %d operators of %s known; %d entr%s restating one of them, not counted "
               "as functions\n",
               m->nimports, r->base, r->base_restated, r->base_restated == 1 ? "y" : "ies");
    if (r->ns_skipped)
        printf("namespaces: entries of '%s' taken; %d of other namespaces skipped (%s)\n",
               r->only_ns, r->ns_skipped, r->ns_skipped_names);
}

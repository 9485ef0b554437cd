/* tensorgen nn: state on disk. A tg_state is a set of named tensors and string metadata on
 * its way to or from one safetensors file (tg_io.h): the model's state dict, an optimizer's
 * moments, a scheduler's and a loader's position all go into one, each under its own prefix,
 * and a checkpoint is one file. Include <tensorgen.h> rather than this file.
 *
 *     tg_state *s = tg_state_new();
 *     tg_state_put_tensor(s, "model.fc.weight", w);        // retained until tg_state_free
 *     tg_state_put_int(s, "optimizer.step", 100);          // metadata, as text
 *     tg_state_save(s, "ckpt.safetensors");               // atomically (tg_save_safetensors)
 *     tg_state_free(s);
 *
 *     tg_state *r = tg_state_open("ckpt.safetensors");     // mmap'd, header checked
 *     tg_tensor *w2 = tg_state_tensor(r, "model.fc.weight"); // borrowed, lives with r
 *     int64_t step;
 *     tg_state_get_int(r, "optimizer.step", &step);
 *     tg_state_free(r);
 *
 * A state opened from a file can be added to (put) and saved again. Errors: NULL or -1 with a
 * message naming the call, the file and the key. */
#ifndef TG_NN_STATE_H
#define TG_NN_STATE_H

#include "tg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tg_state tg_state;

/* An empty state, or NULL on out of memory. */
tg_state *tg_state_new(void);
/* The tensors and metadata of a safetensors file (tensors read lazily, without a copy, from
 * the mapping), or NULL with an error naming the file and the problem. */
tg_state *tg_state_open(const char *path);
void tg_state_free(tg_state *s);
/* The file a state was opened from ("" for a new one), for messages. */
const char *tg_state_path(const tg_state *s);

/* Adds (or replaces) tensor `name`; the state holds a reference. 0 or -1. */
int tg_state_put_tensor(tg_state *s, const char *name, tg_tensor *t);
/* Adds (or replaces) a metadata entry; values are text (safetensors' metadata is a string
 * map): ints in decimal, doubles with 17 significant digits (they read back bit-exact). */
int tg_state_put_meta(tg_state *s, const char *key, const char *value);
int tg_state_put_int(tg_state *s, const char *key, int64_t value);
int tg_state_put_double(tg_state *s, const char *key, double value);
/* Writes every tensor and entry to `path` atomically (a failed save leaves an older file). */
int tg_state_save(tg_state *s, const char *path);

/* The number of tensors and the i-th name (in insertion order, or the file's for an opened
 * state). */
int64_t tg_state_num_tensors(const tg_state *s);
const char *tg_state_tensor_name(const tg_state *s, int64_t i);
bool tg_state_has_tensor(const tg_state *s, const char *name);
/* Tensor `name`, borrowed (it lives as long as s), or NULL with an error naming it. */
tg_tensor *tg_state_tensor(tg_state *s, const char *name);
/* Metadata `key`, or NULL (no error) when absent. */
const char *tg_state_meta(const tg_state *s, const char *key);
/* Metadata parsed: 0, or -1 with an error naming the key when absent or not a number. */
int tg_state_get_int(const tg_state *s, const char *key, int64_t *out);
int tg_state_get_double(const tg_state *s, const char *key, double *out);

/* ---- state dicts: a module's parameters and persistent buffers by PyTorch's names ---- */
typedef struct tg_module tg_module;

/* Options of saving a state dict. Tied tensors (one tensor in two slots: a GPT's embedding and
 * head) are saved once, under the first name, as Hugging Face does, unless .keep_tied (then
 * under each name, as torch.save's state dict has them). */
typedef struct tg_state_dict_opts {
    const char *prefix; /* added to every key: "model." */
    bool keep_tied;
} tg_state_dict_opts;
/* Puts m's state dict into s (tensors shared, not copied: save before changing them). */
int tg_module_state_dict_fn(tg_module *m, tg_state *s, tg_state_dict_opts opts);
#define tg_module_state_dict(m, s, ...) \
    tg_module_state_dict_fn((m), (s), (tg_state_dict_opts){ .prefix = "", __VA_ARGS__ })
/* The same into a new safetensors file at path. */
int tg_module_save_fn(tg_module *m, const char *path, tg_state_dict_opts opts);
#define tg_module_save(m, path, ...) \
    tg_module_save_fn((m), (path), (tg_state_dict_opts){ .prefix = "", __VA_ARGS__ })

/* What loading found: keys the module has and the state lacks (missing), keys the state has
 * and the module lacks (unexpected), and keys whose shapes differ ("fc.weight: [10, 512] in
 * the file, [1000, 512] in the model"). Strings owned by the report: tg_load_report_free. */
typedef struct tg_load_report {
    char **missing;
    int64_t n_missing;
    char **unexpected;
    int64_t n_unexpected;
    char **mismatched;
    int64_t n_mismatched;
} tg_load_report;
void tg_load_report_free(tg_load_report *r);

/* A key rename: a state key starting with `from` has that start replaced by `to` before it is
 * matched ({ "module.", "" } strips DataParallel's prefix; { "gamma", "weight" } an old name). */
typedef struct tg_key_rename {
    const char *from, *to;
} tg_key_rename;

/* Options of loading. `.prefix`: only the state's keys that start with it are read, without
 * it ("model." out of a checkpoint); `.rename`: n_rename rules, the first that matches
 * applies; `.strict` (the default, as PyTorch's): missing or unexpected keys are an error;
 * `.report` (may be NULL) receives what was found, on success and on failure. Shapes must
 * match always; dtypes and devices convert (copy_). A key the module holds in tied slots is
 * satisfied when any of its names is in the state. */
typedef struct tg_load_opts {
    bool strict;
    const char *prefix;
    const tg_key_rename *rename;
    int n_rename;
    tg_load_report *report;
} tg_load_opts;
/* Copies the state's tensors into m's parameters and buffers, all or nothing: every check is
 * done and every tensor converted before the first is written, so a failure (a mismatch, a
 * corrupt file) leaves m unchanged. 0, or -1 with an error naming the key (and both shapes). */
int tg_module_load_state_dict_fn(tg_module *m, tg_state *s, tg_load_opts opts);
#define tg_module_load_state_dict(m, s, ...) \
    tg_module_load_state_dict_fn((m), (s),   \
                                 (tg_load_opts){ .strict = true, .prefix = "", __VA_ARGS__ })
/* The same from a safetensors file (errors name the file). */
int tg_module_load_fn(tg_module *m, const char *path, tg_load_opts opts);
#define tg_module_load(m, path, ...) \
    tg_module_load_fn((m), (path), (tg_load_opts){ .strict = true, .prefix = "", __VA_ARGS__ })

#ifdef __cplusplus
}
#endif
#endif

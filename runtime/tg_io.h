/* tensorgen I/O: tensors to and from files in the safetensors format
 * (https://github.com/huggingface/safetensors), the format of Hugging Face's model weights.
 *
 *     const char *names[] = { "wte.weight", "lm_head.weight" };
 *     tg_tensor *ts[] = { wte, head };
 *     if (tg_save_safetensors("gpt.safetensors", names, ts, 2)) fprintf(stderr, "%s\n", tg_last_error());
 *
 *     tg_safetensors *f = tg_safetensors_open("gpt.safetensors");   // mmap, header parsed
 *     tg_tensor *w = tg_safetensors_get(f, "wte.weight");            // zero-copy CPU tensor
 *     tg_safetensors_load_into(f, "lm_head.weight", head);            // copy into a parameter
 *     tg_safetensors_close(f);                                       // w stays valid
 *     tg_release(w);
 *
 * Errors follow the library's rules: a failing call returns NULL or -1 and records a message
 * naming the call, the file and the problem (tg_last_error()). docs/safetensors.md says more. */
#ifndef TG_IO_H
#define TG_IO_H

#include "tg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Writes n tensors (any dtype, device and strides; names unique, non-empty, not
 * "__metadata__") to `path` as one safetensors file, atomically: the bytes go to a temporary
 * file beside it that is renamed over `path` once complete, so a failed save leaves any
 * previous file intact. Tensors are laid out as the reference writer does (by dtype, widest
 * first, then by name), each at an offset aligned to its element size; the data block starts
 * 64-byte aligned. Returns 0, or -1 with an error (bad argument, I/O failure with strerror). */
int tg_save_safetensors(const char *path, const char *const *names, tg_tensor *const *tensors,
                        int64_t n);
/* The same with string metadata, the header's "__metadata__" object: n_meta key/value pairs
 * (keys unique; keys and values are UTF-8 strings). */
int tg_save_safetensors_metadata(const char *path, const char *const *names,
                                 tg_tensor *const *tensors, int64_t n, const char *const *meta_keys,
                                 const char *const *meta_values, int64_t n_meta);

/* An open safetensors file: the file mapped into memory (copy-on-write, read-only on disk)
 * with its validated header. */
typedef struct tg_safetensors tg_safetensors;

/* Maps `path` and validates its header (every entry's dtype, shape and byte range, no overlap,
 * no duplicate names). NULL with an error naming the file and the problem otherwise. */
tg_safetensors *tg_safetensors_open(const char *path);
/* Unmaps the file once the tensors tg_safetensors_get returned are gone too: they keep the
 * mapping alive and stay valid after close. NULL is a no-op. */
void tg_safetensors_close(tg_safetensors *f);

/* The number of tensors, and the i-th name (0 <= i < count, in the order of their data in the
 * file); NULL with an error for a bad i. Names live as long as f. */
int64_t tg_safetensors_count(const tg_safetensors *f);
const char *tg_safetensors_name(const tg_safetensors *f, int64_t i);
/* Whether the file holds a tensor of that name (no error either way). */
bool tg_safetensors_contains(const tg_safetensors *f, const char *name);

/* The tensor `name` as a new reference (a CPU tensor). When its bytes are aligned for its
 * dtype in the mapping (always so for files written by tensorgen or the reference writer) it is
 * a view of the mapping without a copy; writing to it changes this process's copy of the pages
 * only (MAP_PRIVATE), never the file. Otherwise a copy. NULL with an error for an unknown name. */
tg_tensor *tg_safetensors_get(tg_safetensors *f, const char *name);
/* Copies the tensor `name` into `dst` (any device and strides), which must have the file's
 * shape and dtype exactly; bumps dst's version. 0, or -1 with an error naming the tensor. */
int tg_safetensors_load_into(tg_safetensors *f, const char *name, tg_tensor *dst);

/* The header's "__metadata__" value for `key`, or NULL (no error) when absent. */
const char *tg_safetensors_metadata(const tg_safetensors *f, const char *key);
/* The number of metadata pairs and the i-th key (file order); NULL with an error for a bad i. */
int64_t tg_safetensors_metadata_count(const tg_safetensors *f);
const char *tg_safetensors_metadata_key(const tg_safetensors *f, int64_t i);

#ifdef __cplusplus
}
#endif

#endif

/* Device backends and dispatch keys: the keys a call dispatches on, the hooks a device backend
 * provides (memory and raw byte copies) and its registration (docs/extending.md, "A backend of
 * your own"). tg_library.h includes it; so does the runtime's core, which keeps the devices'
 * hooks, without seeing the registry of operators and kernels. */
#ifndef TG_BACKEND_H
#define TG_BACKEND_H

#include "tg_core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ dispatch keys */
/* Keys in priority order: the highest key of a call's key set that has a kernel runs. A
 * call's key set is the union of its tensors' keys (the key of the tensor's device type, plus
 * Autograd when grad mode is on and the tensor requires grad). Keys 2 to 7 belong to backends
 * registered at run time; a backend's key is its device type. */
typedef enum tg_dispatch_key {
    TG_KEY_CPU = 0,
    TG_KEY_CUDA = 1,
    TG_KEY_BACKEND_FIRST = 2,
    TG_KEY_BACKEND_LAST = 7,
    TG_KEY_AUTOGRAD = 8, /* the generated kernels that record backward nodes */
    TG_NUM_KEYS = 9
} tg_dispatch_key;
typedef uint64_t tg_keyset;
/* "CPU", "CUDA", "Autograd", or a backend's name. */
const char *tg_dispatch_key_name(int key);

/* ------------------------------------------------------------------ device backends */
/* What a device backend provides: memory on its devices and raw byte copies between the host
 * and a device (and within a device). `op` names the operator for error messages. alloc
 * returns NULL after recording an error (or leaves a generic out-of-memory error to the
 * caller); copy returns 0, or -1 with an error. */
typedef struct tg_device_hooks {
    void *(*alloc)(const char *op, size_t nbytes, tg_device device);
    void (*free)(void *p, size_t nbytes, tg_device device);
    int (*copy)(void *dst, tg_device dst_device, const void *src, tg_device src_device,
                size_t nbytes);
} tg_device_hooks;

/* Registers a device backend named `name` (an identifier, not "cpu" or "cuda"; shown in
 * messages and printed tensors as "name:0"). Returns its device type, which is also its
 * dispatch key (TG_KEY_BACKEND_FIRST..TG_KEY_BACKEND_LAST), or -1 with an error (a bad or taken
 * name, missing hooks, all six backend slots used). Tensors are made on it through any
 * factory's `.device = TG_DEVICE_OF(type, 0)` or tg_to_device; operators on them run the
 * kernels registered for its key, else its fallback, else fail naming the operator and key.
 * `hooks` must outlive the process. */
int tg_backend_register(const char *name, const tg_device_hooks *hooks);
#define TG_DEVICE_OF(type, index) ((tg_device){ (int8_t)(type), (int8_t)(index) })

#ifdef __cplusplus
}
#endif

#endif

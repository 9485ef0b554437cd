/* Devices other than the CPU: the hooks a device backend registers, and the backends
 * registered at run time (tg_backend_register, tg_backend.h).
 *
 * The core never calls a device's runtime or its kernels by name. A backend registers its hooks
 * (memory and raw byte copies, given the operator's name for errors), and the device's copy_
 * kernel registers the strided copy (runtime/cuda/cuda_device.c and kernels/cuda/copy.cu do
 * so for CUDA when libtensorgen_cuda loads). Until a device has registered, tensors cannot be
 * made on it and the error says so. A device type is also the dispatch key of its kernels. */
#include "core/rt_private.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define NUM_DEVICE_TYPES (TG_KEY_BACKEND_LAST + 1)
#define MAX_BACKEND_NAME 31

static const tg_device_hooks *device_hooks[NUM_DEVICE_TYPES];
static tg_device_copy_fn device_copies[NUM_DEVICE_TYPES];
/* Backends' names, set once under the lock and never freed (a backend stays for the process). */
static char backend_names[NUM_DEVICE_TYPES][MAX_BACKEND_NAME + 1];
static pthread_mutex_t backend_lock = PTHREAD_MUTEX_INITIALIZER;

void tg__register_device_hooks(tg_device_type type, const tg_device_hooks *h)
{
    if (tg__valid_device_type(type)) __atomic_store_n(&device_hooks[type], h, __ATOMIC_RELEASE);
}

const tg_device_hooks *tg__device_hooks(tg_device_type type)
{
    if (!tg__valid_device_type(type)) return NULL;
    return __atomic_load_n(&device_hooks[type], __ATOMIC_ACQUIRE);
}

void tg__register_device_copy(tg_device_type type, tg_device_copy_fn fn)
{
    if (tg__valid_device_type(type)) __atomic_store_n(&device_copies[type], fn, __ATOMIC_RELEASE);
}

tg_device_copy_fn tg__device_copy(tg_device_type type)
{
    if (!tg__valid_device_type(type)) return NULL;
    return __atomic_load_n(&device_copies[type], __ATOMIC_ACQUIRE);
}

const char *tg__device_type_name(tg_device_type type)
{
    if (type == TG_CPU) return "cpu";
    if (type == TG_CUDA) return "cuda";
    /* A backend's name is written before its hooks are published (release), so a type whose
     * hooks are visible has its name. */
    if (tg__valid_device_type(type) && tg__device_hooks(type)) return backend_names[type];
    return "unknown";
}

/* A backend's name: a lower-case identifier, so that "name:0" reads as a device. */
static bool valid_name(const char *name)
{
    size_t n = name ? strlen(name) : 0;
    if (n == 0 || n > MAX_BACKEND_NAME || (name[0] >= '0' && name[0] <= '9')) return false;
    for (size_t i = 0; i < n; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) return false;
    }
    return true;
}

int tg_backend_register(const char *name, const tg_device_hooks *hooks)
{
    const char *op = "backend_register";
    if (!valid_name(name))
        return tg__fail(op,
                        "invalid backend name '%s': expected a lower-case identifier of at "
                        "most %d characters",
                        name ? name : "(null)", MAX_BACKEND_NAME);
    if (!strcmp(name, "cpu") || !strcmp(name, "cuda"))
        return tg__fail(op, "the backend name '%s' is tensorgen's own", name);
    if (!hooks || !hooks->alloc || !hooks->free || !hooks->copy)
        return tg__fail(op, "backend '%s': its hooks need alloc, free and copy", name);
    pthread_mutex_lock(&backend_lock);
    int type = -1;
    for (int t = TG_KEY_BACKEND_FIRST; t <= TG_KEY_BACKEND_LAST; t++) {
        if (!tg__device_hooks(t)) {
            if (type < 0) type = t;
        } else if (!strcmp(backend_names[t], name)) {
            pthread_mutex_unlock(&backend_lock);
            return tg__fail(op, "a backend named '%s' is already registered", name);
        }
    }
    if (type >= 0) {
        strcpy(backend_names[type], name);
        tg__register_device_hooks(type, hooks);
    }
    pthread_mutex_unlock(&backend_lock);
    if (type < 0)
        return tg__fail(op, "cannot register backend '%s': all %d backend slots are taken", name,
                        TG_KEY_BACKEND_LAST - TG_KEY_BACKEND_FIRST + 1);
    return type;
}

/* The device type named `name` (n characters): cpu, cuda, a registered backend; -1. */
static int type_named(const char *name, size_t n)
{
    for (int t = TG_CPU; t <= TG_KEY_BACKEND_LAST; t++) {
        const char *known = tg__device_type_name(t);
        if (strcmp(known, "unknown") && strlen(known) == n && !strncmp(known, name, n)) return t;
    }
    return -1;
}

int tg_device_parse(const char *text, tg_device *out)
{
    const char *colon = text ? strchr(text, ':') : NULL;
    size_t n = text ? (colon ? (size_t)(colon - text) : strlen(text)) : 0;
    int type = n ? type_named(text, n) : -1;
    long index = 0;
    if (type >= 0 && colon) {
        char *end;
        index = strtol(colon + 1, &end, 10);
        if (end == colon + 1 || *end || index < 0 || index > INT8_MAX) type = -1;
    }
    if (type < 0 || (type == TG_CPU && index != 0))
        return tg__fail("device_parse",
                        "unknown device '%s' (expected cpu, cuda, cuda:N or a registered "
                        "backend's name)",
                        text ? text : "(null)");
    *out = (tg_device){ (int8_t)type, (int8_t)index };
    return 0;
}

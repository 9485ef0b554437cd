/* Devices other than the CPU: the hooks a device backend registers when the library loads.
 *
 * The core never calls a device's runtime or its kernels by name. A backend (runtime/cuda)
 * registers its allocator (memory and raw byte copies), and the device's copy_ kernel
 * registers the strided copy, each with a constructor in an object that the library always
 * links (see runtime/cuda/cuda_device.c and kernels/cuda/copy.cu). Until a device has
 * registered, tensors cannot be made on it and the error says so. */
#include "core/rt_private.h"

#define NUM_DEVICE_TYPES 2

static const tg_device_allocator *device_allocators[NUM_DEVICE_TYPES];
static tg_device_copy_fn device_copies[NUM_DEVICE_TYPES];

static bool valid_type(tg_device_type type) { return type >= 0 && type < NUM_DEVICE_TYPES; }

void tg__register_device_allocator(tg_device_type type, const tg_device_allocator *a)
{
    if (valid_type(type)) __atomic_store_n(&device_allocators[type], a, __ATOMIC_RELEASE);
}

const tg_device_allocator *tg__device_allocator(tg_device_type type)
{
    if (!valid_type(type)) return NULL;
    return __atomic_load_n(&device_allocators[type], __ATOMIC_ACQUIRE);
}

void tg__register_device_copy(tg_device_type type, tg_device_copy_fn fn)
{
    if (valid_type(type)) __atomic_store_n(&device_copies[type], fn, __ATOMIC_RELEASE);
}

tg_device_copy_fn tg__device_copy(tg_device_type type)
{
    if (!valid_type(type)) return NULL;
    return __atomic_load_n(&device_copies[type], __ATOMIC_ACQUIRE);
}

const char *tg__device_type_name(tg_device_type type) { return type == TG_CUDA ? "cuda" : "cpu"; }

/* Private to runtime/dispatch (dispatch.c, boxed.c, registry.c). */
#ifndef TG_DISPATCH_DISPATCH_PRIVATE_H
#define TG_DISPATCH_DISPATCH_PRIVATE_H

#include "core/rt_private.h"
#include "dispatch/dispatch.h"

/* registry.c: out-of-tree operators by full ("ns::name") or bare name; NULL if none. */
const tg_op_entry *tg__registry_find(const char *name);

#endif

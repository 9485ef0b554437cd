/* Grad mode (thread-local, on by default). The dispatcher adds the autograd key only when it
 * is on and an input requires grad. */
#include "core/rt_private.h"

_Thread_local bool tg__grad_enabled_tls = true;

bool tg_is_grad_enabled(void) { return tg__grad_enabled_tls; }

bool tg_set_grad_enabled(bool enabled)
{
    bool prev = tg__grad_enabled_tls;
    tg__grad_enabled_tls = enabled;
    return prev;
}

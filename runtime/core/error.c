/* Errors and warnings.
 *
 * Each thread keeps the FIRST error recorded since its last tg_clear_error(): in a chain of
 * calls the root cause is what the user sees, and later NULL-in-NULL-out calls add nothing.
 * Warnings go to a process-wide handler (stderr by default); tg__warn_once remembers keys. */
#include "core/rt_private.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TG__ERROR_CAP 1024

static _Thread_local bool has_error;
static _Thread_local char error_buf[TG__ERROR_CAP];

const char *tg_last_error(void) { return has_error ? error_buf : NULL; }
void tg_clear_error(void) { has_error = false; }
bool tg__has_error(void) { return has_error; }

void *tg__verror(const char *op, const char *fmt, va_list ap)
{
    if (has_error) return NULL;
    int n = 0;
    if (op && *op) n = snprintf(error_buf, TG__ERROR_CAP, "%s: ", op);
    if (n < 0 || n >= TG__ERROR_CAP) n = 0;
    vsnprintf(error_buf + n, (size_t)(TG__ERROR_CAP - n), fmt, ap);
    has_error = true;
    return NULL;
}

void *tg_set_error(const char *op, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tg__verror(op, fmt, ap);
    va_end(ap);
    return NULL;
}

/* The runtime's and kernels' name for it (public: tg_set_error). */
void *tg__error(const char *op, const char *fmt, ...) __attribute__((alias("tg_set_error")));

/* ---- warnings ---- */

static pthread_mutex_t warn_lock = PTHREAD_MUTEX_INITIALIZER;
static tg_warning_handler warn_fn; /* NULL: print to stderr */
static void *warn_user;

/* warn_once keys: a small list, searched linearly (warnings are rare and few). */
typedef struct seen_key {
    struct seen_key *next;
    char key[];
} seen_key;
static seen_key *seen_keys;

void tg_set_warning_handler(tg_warning_handler fn, void *user)
{
    pthread_mutex_lock(&warn_lock);
    warn_fn = fn;
    warn_user = user;
    pthread_mutex_unlock(&warn_lock);
}

static void vwarn(const char *fmt, va_list ap)
{
    char msg[TG__ERROR_CAP];
    vsnprintf(msg, sizeof msg, fmt, ap);
    pthread_mutex_lock(&warn_lock);
    tg_warning_handler fn = warn_fn;
    void *user = warn_user;
    pthread_mutex_unlock(&warn_lock);
    if (fn) fn(msg, user);
    else fprintf(stderr, "tensorgen warning: %s\n", msg);
}

void tg__warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vwarn(fmt, ap);
    va_end(ap);
}

void tg__misuse(const char *op, const char *fmt, ...)
{
    char msg[TG__ERROR_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    tg__error(op, "%s", msg);
    tg__warn("%s: %s", op, msg);
}

void tg__warn_once(const char *key, const char *fmt, ...)
{
    bool first = true;
    pthread_mutex_lock(&warn_lock);
    for (seen_key *k = seen_keys; k; k = k->next)
        if (strcmp(k->key, key) == 0) {
            first = false;
            break;
        }
    if (first) {
        size_t len = strlen(key) + 1;
        seen_key *k = malloc(sizeof *k + len);
        if (k) { /* out of memory: warn again next time, harmlessly */
            memcpy(k->key, key, len);
            k->next = seen_keys;
            seen_keys = k;
        }
    }
    pthread_mutex_unlock(&warn_lock);
    if (!first) return;
    va_list ap;
    va_start(ap, fmt);
    vwarn(fmt, ap);
    va_end(ap);
}

/* One registered gradcheck case run by a check in its own process (test_gradcheck.c,
 * test_fwgradcheck.c): its inputs from the seed its index fixes (gc_case_inputs), the options
 * seeded the same way, warnings counted rather than printed, and at the end everything released
 * and the live counts compared with those before. */
#ifndef GC_RUN_H
#define GC_RUN_H

#include "gradcheck.h"
#include "kt_util.h"

typedef struct gc_run {
    const gc_case *c;
    gc_func f;
    gc_opts o;
    tg_tensor *in[GC_MAX_INPUTS];
    int n;
    int warnings;
    kt_live base;
    char msg[512];
} gc_run;

/* Sets up the index-th registered case in *r (which must stay put until gc_run_end). */
static inline void gc_run_begin(gc_run *r, int index)
{
    *r = (gc_run){ .c = gc_case_at(index) };
    r->f = gc_case_func(r->c);
    tg_set_warning_handler(gc_count_warning, &r->warnings);
    r->base = kt_live_now();
    r->n = gc_case_inputs(r->c, index, r->in, r->msg, sizeof r->msg);
    cr_assert(r->n >= 0, "%s", r->msg);
    r->o = (gc_opts){ .eps = r->c->eps, .seed = (uint64_t)index + 1 };
}

/* Clears the error, releases the inputs and checks that nothing leaked (naming the case). */
static inline void gc_run_end(gc_run *r)
{
    tg_clear_error();
    kt_release_n(r->in, (size_t)r->n);
    kt_expect_no_leak(r->base, r->c->label);
}

#endif

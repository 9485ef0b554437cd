/* Checkpoints (tg_nn_checkpoint.h): the parts' states under their prefixes in one tg_state,
 * with metadata "checkpoint.parts" naming the parts the file holds. */
#include <stdio.h>
#include <string.h>

#include "nn_private.h"

/* The parts a checkpoint asks for, as "model,optimizer,..." in buf. */
static const char *parts(const tg_checkpoint *c, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s%s%s%srng", c->model ? "model," : "", c->optimizer ? "optimizer," : "",
             c->scheduler ? "scheduler," : "", c->loader ? "loader," : "");
    return buf;
}

int tg_checkpoint_save(const char *path, const tg_checkpoint *c)
{
    if (!path || !c) {
        tg_set_error("checkpoint_save", "path or checkpoint is NULL");
        return -1;
    }
    char buf[64];
    tg_state *s = tg_state_new();
    tg_tensor *rng = NULL;
    TG__NN_OWN rng = tg_get_rng_state(NULL);
    int rc = s && rng ? 0 : -1;
    if (rc == 0 && c->model) rc = tg_module_state_dict(c->model, s, .prefix = "model.");
    if (rc == 0 && c->optimizer) rc = tg_optimizer_save_state(c->optimizer, s, "optimizer.");
    if (rc == 0 && c->scheduler) rc = tg_lr_scheduler_save_state(c->scheduler, s, "scheduler.");
    if (rc == 0 && c->loader) rc = tg_loader_state_save(c->loader, s, "loader.");
    if (rc == 0) rc = tg_state_put_tensor(s, "rng", rng);
    if (rc == 0) rc = tg_state_put_int(s, "checkpoint.step", c->step);
    if (rc == 0) rc = tg_state_put_meta(s, "checkpoint.parts", parts(c, buf, sizeof buf));
    if (rc == 0) rc = tg_state_save(s, path);
    tg_release(rng);
    tg_state_free(s);
    return rc;
}

/* Whether the comma-separated list has `part`. */
static bool has_part(const char *list, const char *part)
{
    size_t n = strlen(part);
    for (const char *p = list; p && *p;) {
        const char *comma = strchr(p, ',');
        size_t len = comma ? (size_t)(comma - p) : strlen(p);
        if (len == n && strncmp(p, part, n) == 0) return true;
        p = comma ? comma + 1 : NULL;
    }
    return false;
}

int tg_checkpoint_load(const char *path, tg_checkpoint *c)
{
    if (!path || !c) {
        tg_set_error("checkpoint_load", "path or checkpoint is NULL");
        return -1;
    }
    tg_state *s = tg_state_open(path);
    if (!s) return -1;
    const char *have = tg_state_meta(s, "checkpoint.parts");
    char want[64];
    parts(c, want, sizeof want);
    int rc = 0;
    for (const char *p = want; rc == 0 && *p;) {
        const char *comma = strchr(p, ',');
        char part[16];
        snprintf(part, sizeof part, "%.*s", (int)(comma ? comma - p : (long)strlen(p)), p);
        if (!have) {
            tg_set_error("checkpoint_load", "%s is not a checkpoint (no checkpoint.parts)", path);
            rc = -1;
        } else if (!has_part(have, part)) {
            tg_set_error("checkpoint_load", "%s has no %s state", path, part);
            rc = -1;
        }
        p = comma ? comma + 1 : p + strlen(p);
    }
    int64_t step = 0;
    if (rc == 0) rc = tg_state_get_int(s, "checkpoint.step", &step);
    if (rc == 0 && c->model) rc = tg_module_load_state_dict(c->model, s, .prefix = "model.");
    if (rc == 0 && c->optimizer) rc = tg_optimizer_load_state(c->optimizer, s, "optimizer.");
    if (rc == 0 && c->scheduler) rc = tg_lr_scheduler_load_state(c->scheduler, s, "scheduler.");
    if (rc == 0 && c->loader) rc = tg_loader_state_load(c->loader, s, "loader.");
    if (rc == 0) rc = tg_set_rng_state(NULL, tg_state_tensor(s, "rng"));
    if (rc == 0) c->step = step;
    tg_state_free(s);
    return rc;
}

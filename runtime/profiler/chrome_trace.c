/* The Chrome trace export: the trace event format's JSON object form ({"traceEvents": [...]}),
 * which chrome://tracing and ui.perfetto.dev open. Times are µs from the session's start.
 *
 *   - every operator, backward node and user range: a complete event ("ph": "X") on its
 *     thread's track (pid = this process, tid = the OS thread id), args with the device,
 *     input shapes and dtypes, the sequence number;
 *   - CUDA time of an operator: a complete event on a track of its own per device and stream
 *     (pid "CUDA device N", tid = the stream);
 *   - allocations and frees: instant events ("ph": "i") with the bytes;
 *   - forward -> backward: a flow ("ph": "s" in the forward op, "ph": "f" in the backward
 *     node, cat "fwdbwd") for every backward node whose forward call was recorded. */
#include "profiler/profiler_private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GPU_PID_BASE 1000000 /* pids of the CUDA device tracks */

static void put_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

static double us_of(int64_t ns) { return (double)(ns - tg__prof_session.start_ns) / 1e3; }

/* The forward op of each (thread, sequence number), for the flows. */
typedef struct fwd_key {
    uint32_t thread;
    int64_t seq;
    const prof_thread *t;
    const prof_event *e;
} fwd_key;

static int fwd_cmp(const void *a, const void *b)
{
    const fwd_key *x = a, *y = b;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    if (x->seq != y->seq) return x->seq < y->seq ? -1 : 1;
    return 0;
}

static const char *kind_cat(uint8_t k)
{
    return k == PROF_OP ? "cpu_op" : k == PROF_BACKWARD ? "autograd" : "user_annotation";
}

static void put_event(FILE *f, int pid, const prof_thread *t, const prof_event *e)
{
    char buf[1024];
    fprintf(f, ",\n{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", kind_cat(e->kind));
    put_json_string(f, e->name);
    fprintf(f, ", \"pid\": %d, \"tid\": %lld, \"ts\": %.3f, \"dur\": %.3f, \"args\": {", pid,
            (long long)tg__prof_tid(t), us_of(e->start_ns), (double)e->dur_ns / 1e3);
    fprintf(f, "\"Self CPU (us)\": %.3f", (double)(e->dur_ns - e->child_ns) / 1e3);
    if (e->kind == PROF_OP && e->device_type == TG_CUDA)
        fprintf(f, ", \"Device\": \"cuda:%d\"", e->device_index < 0 ? 0 : e->device_index);
    else if (e->kind == PROF_OP) fprintf(f, ", \"Device\": \"cpu\"");
    if (e->seq >= 0) fprintf(f, ", \"Sequence number\": %lld", (long long)e->seq);
    if (e->kind == PROF_BACKWARD && e->fwd_thread)
        fprintf(f, ", \"Fwd thread id\": %u", e->fwd_thread);
    if (e->shapes >= 0) {
        tg__prof_shapes_str(t, e, buf, sizeof buf);
        fprintf(f, ", \"Input Dims\": %s", buf);
        fprintf(f, ", \"Input type\": [");
        for (int k = 0; k < e->ninputs; k++) {
            const prof_shape *s = &t->shapes[e->shapes + k];
            fprintf(f, "%s\"%s\"", k ? ", " : "",
                    s->ndim < 0 ? "" : tg_dtype_name((tg_dtype)s->dtype));
        }
        fputc(']', f);
    }
    if (tg__prof_session.opts.profile_memory)
        fprintf(f, ", \"Self Mem (bytes)\": %lld", (long long)e->mem_self);
    fprintf(f, "}}");
    if (e->gpu_dur_us >= 0) {
        fprintf(f, ",\n{\"ph\": \"X\", \"cat\": \"kernel\", \"name\": ");
        put_json_string(f, e->name);
        fprintf(f,
                ", \"pid\": %d, \"tid\": %lld, \"ts\": %.3f, \"dur\": %.3f, \"args\": "
                "{\"device\": %d, \"stream\": %lld}}",
                GPU_PID_BASE + e->device_index, (long long)e->gpu_stream,
                e->gpu_start_us - (double)tg__prof_session.start_ns / 1e3, e->gpu_dur_us,
                e->device_index, (long long)e->gpu_stream);
    }
}

static void put_memory(FILE *f, int pid, const prof_thread *t, const prof_event *e)
{
    fprintf(f,
            ",\n{\"ph\": \"i\", \"s\": \"t\", \"cat\": \"cpu_instant_event\", \"name\": "
            "\"[memory]\", \"pid\": %d, \"tid\": %lld, \"ts\": %.3f, \"args\": {\"Bytes\": %lld, "
            "\"Device Type\": \"%s\", \"Device Id\": %d}}",
            pid, (long long)tg__prof_tid(t), us_of(e->start_ns), (long long)e->mem_self,
            tg__device_type_name((tg_device_type)e->device_type), e->device_index);
}

/* Track names: "thread N (tid)" and "CUDA device D" / "stream S". */
static void put_metadata(FILE *f, int pid)
{
    fprintf(f,
            "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"args\": {\"name\": "
            "\"tensorgen (CPU)\"}}",
            pid);
    for (const prof_thread *t = tg__prof_session.threads; t; t = t->next) {
        if (t->nev == 0) continue;
        fprintf(f,
                ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %lld, "
                "\"args\": {\"name\": \"thread %u (tid %lld)\"}}",
                pid, (long long)tg__prof_tid(t), t->id, (long long)tg__prof_tid(t));
        fprintf(f,
                ",\n{\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": %d, \"tid\": %lld, "
                "\"args\": {\"sort_index\": %u}}",
                pid, (long long)tg__prof_tid(t), t->id);
    }
    bool seen[128] = { false };
    for (const prof_thread *t = tg__prof_session.threads; t; t = t->next)
        for (int32_t i = 0; i < t->nev; i++) {
            const prof_event *e = &t->ev[i];
            if (e->gpu_dur_us < 0 || e->device_index < 0 || seen[e->device_index & 127]) continue;
            seen[e->device_index & 127] = true;
            fprintf(f,
                    ",\n{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, \"args\": "
                    "{\"name\": \"CUDA device %d\"}}",
                    GPU_PID_BASE + e->device_index, e->device_index);
            fprintf(f,
                    ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, \"tid\": %lld, "
                    "\"args\": {\"name\": \"stream %lld\"}}",
                    GPU_PID_BASE + e->device_index, (long long)e->gpu_stream,
                    (long long)e->gpu_stream);
        }
}

/* The flows: one id per backward node whose forward op is in the trace. */
static int put_flows(FILE *f, int pid)
{
    int64_t n = 0;
    for (const prof_thread *t = tg__prof_session.threads; t; t = t->next)
        for (int32_t i = 0; i < t->nev; i++) n += t->ev[i].kind == PROF_OP && t->ev[i].seq >= 0;
    if (n == 0) return 0;
    fwd_key *keys = malloc((size_t)n * sizeof *keys);
    if (!keys) return tg__fail("export_chrome_trace", "out of memory");
    int64_t k = 0;
    for (const prof_thread *t = tg__prof_session.threads; t; t = t->next)
        for (int32_t i = 0; i < t->nev; i++)
            if (t->ev[i].kind == PROF_OP && t->ev[i].seq >= 0)
                keys[k++] = (fwd_key){ t->id, t->ev[i].seq, t, &t->ev[i] };
    qsort(keys, (size_t)n, sizeof *keys, fwd_cmp);
    int64_t id = 0;
    for (const prof_thread *t = tg__prof_session.threads; t; t = t->next)
        for (int32_t i = 0; i < t->nev; i++) {
            const prof_event *b = &t->ev[i];
            if (b->kind != PROF_BACKWARD || b->seq < 0 || !b->fwd_thread) continue;
            fwd_key want = { b->fwd_thread, b->seq, NULL, NULL };
            const fwd_key *fw = bsearch(&want, keys, (size_t)n, sizeof *keys, fwd_cmp);
            if (!fw) continue;
            id++;
            fprintf(f,
                    ",\n{\"ph\": \"s\", \"id\": %lld, \"cat\": \"fwdbwd\", \"name\": \"fwdbwd\", "
                    "\"pid\": %d, \"tid\": %lld, \"ts\": %.3f}",
                    (long long)id, pid, (long long)tg__prof_tid(fw->t), us_of(fw->e->start_ns));
            fprintf(f,
                    ",\n{\"ph\": \"f\", \"bp\": \"e\", \"id\": %lld, \"cat\": \"fwdbwd\", "
                    "\"name\": \"fwdbwd\", \"pid\": %d, \"tid\": %lld, \"ts\": %.3f}",
                    (long long)id, pid, (long long)tg__prof_tid(t), us_of(b->start_ns));
        }
    free(keys);
    return 0;
}

int tg_profiler_export_chrome_trace(const char *path)
{
    const char *op = "export_chrome_trace";
    if (!path || !*path) return tg__fail(op, "no path given");
    if (tg__prof_check_results(op)) return -1;
    if (tg__prof_count_events() == 0)
        return tg__fail(op, "nothing was recorded (no operator ran while the profiler was on)");
    FILE *f = fopen(path, "w");
    if (!f) return tg__fail(op, "cannot open '%s' for writing: %s", path, strerror(errno));
    int pid = (int)getpid();
    fprintf(f, "{\"schemaVersion\": 1, \"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
    put_metadata(f, pid);
    for (const prof_thread *t = tg__prof_session.threads; t; t = t->next)
        for (int32_t i = 0; i < t->nev; i++) {
            if (t->ev[i].kind == PROF_MEMORY) put_memory(f, pid, t, &t->ev[i]);
            else put_event(f, pid, t, &t->ev[i]);
        }
    int rc = put_flows(f, pid);
    fprintf(f, "\n]}\n");
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0) bad = true;
    if (rc == 0 && bad) rc = tg__fail(op, "writing '%s' failed: %s", path, strerror(errno));
    return rc;
}

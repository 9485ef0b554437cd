/* The profiler's CUDA timer: an operator on a CUDA device gets a pair of CUDA events
 * recorded on the device's stream around it, so its device time is measured where the work
 * runs (the host-side time of a launch says little). cuda_device.c registers it with the
 * profiler at load, like the allocator; the profiler never calls CUDA by name.
 *
 * The first mark of a session on a device also records an anchor event and waits for it: the
 * host clock at that moment places the device's timeline on the profiler's (to within the
 * wait's latency). Events are pooled and reused across sessions (creating one costs about as
 * much as a launch); the pool lives for the process. Failures never become library errors:
 * the operator is then reported without CUDA time. */

#include "cuda/cuda_rt.h"
#include "profiler/profiler.h"

#include <pthread.h>
#include <stdlib.h>

#define MAX_DEVICES 64

typedef struct mark {
    cudaEvent_t start, stop;
    int device;
    cudaStream_t stream;
} mark;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static mark *marks; /* [0, nused) belong to the session; [nused, nmade) are spare */
static int64_t nused, nmade, cap;
static struct {
    cudaEvent_t ev;
    bool made, recorded;
    double host_us;
} anchors[MAX_DEVICES];

/* Anchors `device`'s stream to the host clock for this session (locked). */
static bool anchor(int device, cudaStream_t s)
{
    if (anchors[device].recorded) return true;
    if (!anchors[device].made) {
        if (cudaEventCreate(&anchors[device].ev) != cudaSuccess) return false;
        anchors[device].made = true;
    }
    if (cudaEventRecord(anchors[device].ev, s) != cudaSuccess ||
        cudaEventSynchronize(anchors[device].ev) != cudaSuccess)
        return false;
    anchors[device].host_us = (double)tg__prof_now_ns() / 1e3;
    anchors[device].recorded = true;
    return true;
}

static int64_t timer_start(int device)
{
    if (device < 0 || device >= MAX_DEVICES) return -1;
    pthread_mutex_lock(&lock);
    int64_t h = -1;
    int prev = -1;
    cudaGetDevice(&prev);
    cudaStream_t s = tg__cuda_stream(device);
    if (cudaSetDevice(device) != cudaSuccess || !anchor(device, s)) goto out;
    if (nused == nmade) {
        if (nmade == cap) {
            int64_t c = cap ? cap * 2 : 256;
            mark *m = realloc(marks, (size_t)c * sizeof *m);
            if (!m) goto out;
            marks = m;
            cap = c;
        }
        mark *m = &marks[nmade];
        if (cudaEventCreate(&m->start) != cudaSuccess) goto out;
        if (cudaEventCreate(&m->stop) != cudaSuccess) {
            cudaEventDestroy(m->start);
            goto out;
        }
        nmade++;
    }
    mark *m = &marks[nused];
    m->device = device;
    m->stream = s;
    if (cudaEventRecord(m->start, s) != cudaSuccess) goto out;
    h = nused++;
out:
    if (prev >= 0 && prev != device) cudaSetDevice(prev);
    (void)cudaGetLastError(); /* a failed timing is not the caller's error */
    pthread_mutex_unlock(&lock);
    return h;
}

static void timer_stop(int64_t h)
{
    pthread_mutex_lock(&lock);
    if (h >= 0 && h < nused) {
        mark *m = &marks[h];
        int prev = -1;
        cudaGetDevice(&prev);
        cudaSetDevice(m->device);
        cudaEventRecord(m->stop, m->stream);
        if (prev >= 0 && prev != m->device) cudaSetDevice(prev);
        (void)cudaGetLastError();
    }
    pthread_mutex_unlock(&lock);
}

static int timer_read(int64_t h, double *start_us, double *dur_us, int64_t *stream)
{
    int rc = -1;
    pthread_mutex_lock(&lock);
    if (h >= 0 && h < nused) {
        mark *m = &marks[h];
        float from_anchor = 0, dur = 0;
        if (cudaEventSynchronize(m->stop) == cudaSuccess &&
            cudaEventElapsedTime(&from_anchor, anchors[m->device].ev, m->start) == cudaSuccess &&
            cudaEventElapsedTime(&dur, m->start, m->stop) == cudaSuccess) {
            *start_us = anchors[m->device].host_us + 1e3 * (double)from_anchor;
            *dur_us = 1e3 * (double)dur;
            *stream = (int64_t)(uintptr_t)m->stream;
            rc = 0;
        }
        (void)cudaGetLastError();
    }
    pthread_mutex_unlock(&lock);
    return rc;
}

static void timer_reset(void)
{
    pthread_mutex_lock(&lock);
    nused = 0;
    for (int d = 0; d < MAX_DEVICES; d++) anchors[d].recorded = false;
    pthread_mutex_unlock(&lock);
}

const tg__prof_device_timer tg__cuda_profiler_timer = {
    .start = timer_start,
    .stop = timer_stop,
    .read = timer_read,
    .reset = timer_reset,
};

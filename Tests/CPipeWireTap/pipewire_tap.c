#include "pipewire_tap.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>

#define RATE 48000

struct pipewire_tap {
    struct pw_thread_loop *loop;
    struct pw_context *context;
    struct pw_core *core;
    struct pw_stream *stream;
    struct spa_hook listener;
    float *samples;
    uint32_t capacity;
    int stopped;
    // Written by the data thread only; read once the stream is disconnected, or through the
    // atomic `frames` while it runs.
    int started, has_last;
    uint64_t origin, expected;
    /// When the last call woke (CLOCK_MONOTONIC ns) and its frames, to judge whether the next
    /// was calm.
    int64_t last_woke_ns;
    uint32_t last_call_frames;
    uint32_t last_at, last_frames, moved_cycles, missed_frames;
    /// Calls that found more than one buffer waiting (pipewire_tap_stacked_calls).
    uint32_t stacked_calls;
    _Atomic uint32_t frames;
    /// Lateness to put on the tap itself (pipewire_tap_be_late_at_onsets): microseconds, one per
    /// onset still to come; the frames of silence seen since the last sound.
    uint32_t late_usecs[PIPEWIRE_TAP_MAX_LATE], quiet_frames;
    _Atomic uint32_t late_count, late_next;
    /// The graph's own time of each cycle recorded (pipewire_tap_cycle_times), written by the
    /// data thread, read once the stream is disconnected.
    pipewire_tap_cycle_time *cycle_times;
    uint32_t cycle_capacity, cycle_count;
    /// 1 for each frame recorded by a call in doubt, beside `samples`.
    uint8_t *doubtful;
};

void pipewire_tap_record_cycle(pipewire_tap *tap, uint64_t now, const float *interleaved, uint32_t frames,
                               int in_doubt) {
    if (!tap->started) {
        tap->started = 1;
        tap->origin = now;
    } else if (now > tap->expected) {
        tap->missed_frames += (uint32_t)(now - tap->expected);
    } else if (now < tap->expected && tap->has_last && tap->expected - now <= tap->last_at) {
        // The position is the driver's current cycle: a call that began late, after the driver
        // moved on, read the next one's, and the driver has now run that cycle too. The last
        // cycle belongs `back` frames earlier, where the jump before it left a hole.
        uint32_t back = (uint32_t)(tap->expected - now);
        memmove(tap->samples + tap->last_at - back, tap->samples + tap->last_at, tap->last_frames * sizeof(float));
        memmove(tap->doubtful + tap->last_at - back, tap->doubtful + tap->last_at, tap->last_frames);
        for (uint32_t f = tap->last_at - back + tap->last_frames; f < tap->last_at + tap->last_frames; f++) {
            tap->samples[f] = NAN;
            tap->doubtful[f] = 0;
        }
        tap->missed_frames -= back <= tap->missed_frames ? back : tap->missed_frames;
        tap->moved_cycles++;
    }
    tap->expected = now + frames;
    uint64_t at = now - tap->origin;
    if (at < tap->capacity && frames <= tap->capacity - at) {
        for (uint32_t f = 0; f < frames; f++) tap->samples[at + f] = interleaved[2 * f];
        memset(tap->doubtful + at, in_doubt ? 1 : 0, frames);
        tap->has_last = 1;
        tap->last_at = (uint32_t)at;
        tap->last_frames = frames;
        atomic_store_explicit(&tap->frames, (uint32_t)at + frames, memory_order_release);
    }
}

/// Whether channel 0 of the cycle holds a sound after half a second of silence (an onset).
static int onset_in(struct pipewire_tap *tap, const float *in, uint32_t frames) {
    int onset = 0;
    for (uint32_t frame = 0; frame < frames; frame++) {
        if (fabsf(in[2 * frame]) > 0.02f) {
            if (tap->quiet_frames >= 24000) onset = 1;
            tap->quiet_frames = 0;
        } else {
            tap->quiet_frames++;
        }
    }
    return onset;
}

/// The most buffers one call takes (`stacked_calls`).
#define STACK_MAX 8

static void on_process(void *data) {
    struct pipewire_tap *tap = data;
    struct timespec woke;
    clock_gettime(CLOCK_MONOTONIC, &woke);
    int64_t woke_ns = woke.tv_sec * 1000000000LL + woke.tv_nsec;
    // Every buffer waiting, oldest first. One a call, as a rule; were two waiting, taking one a
    // call would leave the tap a buffer behind for good, each placed a cycle after the graph
    // played it, with no hole to show it.
    struct pw_buffer *buffers[STACK_MAX];
    uint32_t count = 0;
    while (count < STACK_MAX && (buffers[count] = pw_stream_dequeue_buffer(tap->stream)) != NULL) count++;
    if (count == 0) return;
    if (count > 1) tap->stacked_calls++;
    struct spa_data *plane = &buffers[count - 1]->buffer->datas[0];
    uint32_t late_next = atomic_load_explicit(&tap->late_next, memory_order_relaxed);
    if (plane->data && plane->chunk->size > 0 && tap->started &&
        late_next < atomic_load_explicit(&tap->late_count, memory_order_acquire) &&
        onset_in(tap, (const float *)((const uint8_t *)plane->data + plane->chunk->offset),
                 plane->chunk->size / (2 * sizeof(float)))) {
        // A call that began late, before it reads the graph's position.
        usleep(tap->late_usecs[late_next]);
        atomic_store_explicit(&tap->late_next, late_next + 1, memory_order_relaxed);
    }
    struct pw_time time;
    memset(&time, 0, sizeof time);
    if (pw_stream_get_time_n(tap->stream, &time, sizeof time) == 0 && time.rate.num > 0 && time.rate.denom > 0) {
        uint64_t now = time.ticks * time.rate.num * RATE / time.rate.denom;
        // The position is the graph's current cycle's: a call that woke late, or one of a string
        // the graph ran back to back after its driver stood still, may read a cycle or two ahead
        // of the frames it holds (gong_handoff.h, gong_cycle_skips). Only a call that woke a
        // period after the last, give or take half, surely holds its own cycle's.
        int64_t period = (int64_t)tap->last_call_frames * 1000000000LL / RATE;
        int64_t gap = woke_ns - tap->last_woke_ns;
        int calm = tap->last_call_frames > 0 && 2 * gap >= period && 2 * gap <= 3 * period;
        // The newest buffer is this cycle's; each older one the cycle before the next. Those
        // are placed by that reckoning alone: in doubt. `later`: the frames of the buffers after
        // the one placed.
        uint64_t later = 0;
        for (uint32_t index = 0; index < count; index++) later += buffers[index]->buffer->datas[0].chunk->size;
        later /= 2 * sizeof(float);
        for (uint32_t index = 0; index < count; index++) {
            struct spa_data *held = &buffers[index]->buffer->datas[0];
            uint32_t frames = held->chunk->size / (2 * sizeof(float));
            later -= frames;
            if (!held->data || frames == 0 || later > now) continue;
            pipewire_tap_record_cycle(tap, now - later,
                                      (const float *)((const uint8_t *)held->data + held->chunk->offset), frames,
                                      !calm || index + 1 < count);
            tap->last_call_frames = frames;
            // The sink drives the graph: it takes in what it plays at the end of a cycle and
            // hands it to its monitor in the next, so the frames reaching the tap now were played
            // a cycle ago (measured against gong's account at two quanta: bench/RESULTS.md, stop
            // 53).
            if (tap->cycle_count < tap->cycle_capacity)
                tap->cycle_times[tap->cycle_count++] = (pipewire_tap_cycle_time){
                    (int64_t)(now - later - tap->origin),
                    time.now / 1000 - (int64_t)(later + frames) * 1000000 / RATE};
        }
        tap->last_woke_ns = woke_ns;
    }
    for (uint32_t index = 0; index < count; index++) pw_stream_queue_buffer(tap->stream, buffers[index]);
}

static const struct pw_stream_events events = {PW_VERSION_STREAM_EVENTS, .process = on_process};

pipewire_tap *pipewire_tap_new(uint32_t capacity) {
    struct pipewire_tap *tap = calloc(1, sizeof *tap);
    if (!tap) return NULL;
    tap->capacity = capacity;
    tap->samples = malloc((size_t)capacity * sizeof(float));
    tap->doubtful = calloc(capacity, 1);
    // A cycle is 64 frames at least (PipeWire's smallest quantum by default).
    tap->cycle_capacity = capacity / 64 + 1;
    tap->cycle_times = malloc((size_t)tap->cycle_capacity * sizeof *tap->cycle_times);
    if (!tap->samples || !tap->cycle_times || !tap->doubtful) {
        free(tap->samples);
        free(tap->cycle_times);
        free(tap->doubtful);
        free(tap);
        return NULL;
    }
    for (uint32_t f = 0; f < capacity; f++) tap->samples[f] = NAN;
    return tap;
}

pipewire_tap *pipewire_tap_open(const char *remote, const char *sink, uint32_t capacity, int timeout_ms) {
    pw_init(NULL, NULL);
    struct pipewire_tap *tap = pipewire_tap_new(capacity);
    if (!tap) return NULL;
    tap->loop = pw_thread_loop_new("pipewire-tap", NULL);
    if (!tap->loop) goto failed;
    // client-rt.conf: a real-time data thread, as gong's and pw-record's.
    tap->context = pw_context_new(pw_thread_loop_get_loop(tap->loop),
                                  pw_properties_new(PW_KEY_CONFIG_NAME, "client-rt.conf", NULL), 0);
    if (!tap->context || pw_thread_loop_start(tap->loop) < 0) goto failed;
    pw_thread_loop_lock(tap->loop);
    tap->core = pw_context_connect(
        tap->context, remote ? pw_properties_new(PW_KEY_REMOTE_NAME, remote, NULL) : NULL, 0);
    if (tap->core) {
        // A long latency: the recorder must not set the graph's quantum.
        struct pw_properties *props = pw_properties_new(
            PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Capture", PW_KEY_MEDIA_ROLE, "Music",
            PW_KEY_TARGET_OBJECT, sink, PW_KEY_STREAM_CAPTURE_SINK, "true", PW_KEY_NODE_LATENCY, "8192/48000", NULL);
        tap->stream = pw_stream_new(tap->core, "gong-test-tap", props);
    }
    if (tap->stream) {
        pw_stream_add_listener(tap->stream, &tap->listener, &events, tap);
        uint8_t pod_buffer[1024];
        struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(pod_buffer, sizeof pod_buffer);
        struct spa_audio_info_raw info = {.format = SPA_AUDIO_FORMAT_F32, .rate = RATE, .channels = 2};
        const struct spa_pod *params[1] = {spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &info)};
        if (pw_stream_connect(tap->stream, PW_DIRECTION_INPUT, PW_ID_ANY,
                              PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS,
                              params, 1) < 0) {
            pw_stream_destroy(tap->stream);
            tap->stream = NULL;
        }
    }
    pw_thread_loop_unlock(tap->loop);
    if (!tap->stream) goto failed;
    // Recording once cycles arrive, not after a guess at how long linking takes on a busy machine.
    for (int waited = 0; waited < timeout_ms; waited += 10) {
        if (atomic_load_explicit(&tap->frames, memory_order_acquire) > 0) return tap;
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
failed:
    pipewire_tap_close(tap);
    return NULL;
}

void pipewire_tap_be_late_at_onsets(pipewire_tap *tap, const uint32_t *usecs, uint32_t count) {
    if (count > PIPEWIRE_TAP_MAX_LATE) count = PIPEWIRE_TAP_MAX_LATE;
    memcpy(tap->late_usecs, usecs, count * sizeof *usecs);
    atomic_store_explicit(&tap->late_count, count, memory_order_release);
}

uint32_t pipewire_tap_late_calls(pipewire_tap *tap) {
    return atomic_load_explicit(&tap->late_next, memory_order_relaxed);
}

void pipewire_tap_stop(pipewire_tap *tap) {
    if (tap->stopped || !tap->loop) return;
    tap->stopped = 1;
    pw_thread_loop_lock(tap->loop);
    if (tap->stream) pw_stream_disconnect(tap->stream);
    pw_thread_loop_unlock(tap->loop);
}

const float *pipewire_tap_samples(pipewire_tap *tap) { return tap->samples; }

const uint8_t *pipewire_tap_doubtful(pipewire_tap *tap) { return tap->doubtful; }

uint32_t pipewire_tap_frames(pipewire_tap *tap) { return atomic_load_explicit(&tap->frames, memory_order_acquire); }

uint32_t pipewire_tap_missed_frames(pipewire_tap *tap) { return tap->missed_frames; }

uint32_t pipewire_tap_moved_cycles(pipewire_tap *tap) { return tap->moved_cycles; }

uint32_t pipewire_tap_stacked_calls(pipewire_tap *tap) { return tap->stacked_calls; }

const pipewire_tap_cycle_time *pipewire_tap_cycle_times(pipewire_tap *tap, uint32_t *count) {
    *count = tap->cycle_count;
    return tap->cycle_times;
}

void pipewire_tap_close(pipewire_tap *tap) {
    pipewire_tap_stop(tap);
    if (tap->loop) {
        pw_thread_loop_lock(tap->loop);
        if (tap->stream) pw_stream_destroy(tap->stream);
        if (tap->core) pw_core_disconnect(tap->core);
        pw_thread_loop_unlock(tap->loop);
        pw_thread_loop_stop(tap->loop);
    }
    if (tap->context) pw_context_destroy(tap->context);
    if (tap->loop) pw_thread_loop_destroy(tap->loop);
    free(tap->samples);
    free(tap->cycle_times);
    free(tap->doubtful);
    free(tap);
}

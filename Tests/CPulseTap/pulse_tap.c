#include "pulse_tap.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pulse/pulseaudio.h>

#define RATE 48000

struct pulse_tap {
    pa_threaded_mainloop *loop;
    pa_context *context;
    pa_stream *stream;
    // Written on the mainloop's thread under its lock; read under it while it runs, freely once
    // it is stopped.
    float *samples;
    uint32_t capacity, frames, hole_frames, dropped_frames;
    pulse_tap_timing *timings;
    pulse_tap_arrival *arrivals;
    uint32_t timing_capacity, timing_count, arrival_count;
    int asking, failed, stopped;
};

static void on_context_state(pa_context *context, void *userdata) {
    pulse_tap *tap = userdata;
    pa_context_state_t state = pa_context_get_state(context);
    if (state == PA_CONTEXT_FAILED || state == PA_CONTEXT_TERMINATED) tap->failed = 1;
    pa_threaded_mainloop_signal(tap->loop, 0);
}

static void on_stream_state(pa_stream *stream, void *userdata) {
    pulse_tap *tap = userdata;
    pa_stream_state_t state = pa_stream_get_state(stream);
    if (state == PA_STREAM_FAILED || state == PA_STREAM_TERMINATED) tap->failed = 1;
    pa_threaded_mainloop_signal(tap->loop, 0);
}

static void on_timing(pa_stream *stream, int success, void *userdata) {
    pulse_tap *tap = userdata;
    tap->asking = 0;
    const pa_timing_info *info = success ? pa_stream_get_timing_info(stream) : NULL;
    // Only replies the server sent with its own clock: the same machine's, so the instants are
    // this system's CLOCK_REALTIME.
    if (!info || info->write_index_corrupt || !info->synchronized_clocks || tap->timing_count == tap->timing_capacity)
        return;
    tap->timings[tap->timing_count++] = (pulse_tap_timing){
        .usec = (int64_t)info->timestamp.tv_sec * 1000000 + info->timestamp.tv_usec,
        .write_index = info->write_index,
        .sink_usec = info->sink_usec,
        .source_usec = info->source_usec,
    };
}

static void on_read(pa_stream *stream, size_t bytes, void *userdata) {
    pulse_tap *tap = userdata;
    const void *data;
    while (pa_stream_readable_size(stream) > 0) {
        if (pa_stream_peek(stream, &data, &bytes) < 0 || bytes == 0) break;
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        uint32_t frames = (uint32_t)(bytes / sizeof(float));
        if (tap->arrival_count < tap->timing_capacity)
            tap->arrivals[tap->arrival_count++] = (pulse_tap_arrival){
                .first_frame = tap->frames + tap->dropped_frames,
                .frames = frames,
                .usec = (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000,
            };
        uint32_t room = tap->capacity - tap->frames;
        uint32_t kept = frames < room ? frames : room;
        if (data) {
            memcpy(tap->samples + tap->frames, data, kept * sizeof(float));
        } else {
            for (uint32_t f = 0; f < kept; f++) tap->samples[tap->frames + f] = NAN;
            tap->hole_frames += frames;
        }
        tap->frames += kept;
        tap->dropped_frames += frames - kept;
        pa_stream_drop(stream);
    }
    // One question at a time: the replies come about a block apart.
    if (!tap->asking && tap->timing_count < tap->timing_capacity) {
        pa_operation *asked = pa_stream_update_timing_info(stream, on_timing, tap);
        if (asked) {
            tap->asking = 1;
            pa_operation_unref(asked);
        }
    }
    pa_threaded_mainloop_signal(tap->loop, 0);
}

/// Waits (the loop locked) until `ready` holds, the tap failed, or `timeout_ms` passed.
static int wait_for(pulse_tap *tap, int (*ready)(pulse_tap *), int timeout_ms) {
    for (int waited = 0; !ready(tap); waited += 10) {
        if (tap->failed || waited >= timeout_ms) return 0;
        pa_threaded_mainloop_unlock(tap->loop);
        usleep(10000);
        pa_threaded_mainloop_lock(tap->loop);
    }
    return 1;
}

static int context_ready(pulse_tap *tap) { return pa_context_get_state(tap->context) == PA_CONTEXT_READY; }
static int first_block(pulse_tap *tap) { return tap->frames > 0; }

pulse_tap *pulse_tap_open(
    const char *server, const char *sink, uint32_t capacity, uint32_t timing_capacity, uint32_t fragment_ms,
    int timeout_ms) {
    pulse_tap *tap = calloc(1, sizeof *tap);
    if (!tap) return NULL;
    tap->samples = malloc((size_t)capacity * sizeof(float));
    tap->timings = malloc((size_t)timing_capacity * sizeof(pulse_tap_timing));
    tap->arrivals = malloc((size_t)timing_capacity * sizeof(pulse_tap_arrival));
    tap->capacity = capacity;
    tap->timing_capacity = timing_capacity;
    tap->loop = pa_threaded_mainloop_new();
    if (!tap->samples || !tap->timings || !tap->arrivals || !tap->loop) {
        pulse_tap_close(tap);
        return NULL;
    }
    tap->context = pa_context_new(pa_threaded_mainloop_get_api(tap->loop), "gong_test_pulse_tap");
    if (!tap->context || pa_threaded_mainloop_start(tap->loop) < 0) {
        pulse_tap_close(tap);
        return NULL;
    }
    pa_threaded_mainloop_lock(tap->loop);
    pa_context_set_state_callback(tap->context, on_context_state, tap);
    int ok = pa_context_connect(tap->context, server, PA_CONTEXT_NOAUTOSPAWN, NULL) >= 0 &&
             wait_for(tap, context_ready, timeout_ms);
    pa_sample_spec spec = {.format = PA_SAMPLE_FLOAT32LE, .rate = RATE, .channels = 1};
    if (ok) {
        tap->stream = pa_stream_new(tap->context, "gong_test_pulse_tap", &spec, NULL);
        ok = tap->stream != NULL;
    }
    if (ok) {
        char monitor[256];
        snprintf(monitor, sizeof monitor, "%s.monitor", sink);
        pa_buffer_attr attr = {
            .maxlength = (uint32_t)-1,
            .fragsize = (uint32_t)pa_usec_to_bytes((pa_usec_t)fragment_ms * 1000, &spec),
        };
        pa_stream_set_state_callback(tap->stream, on_stream_state, tap);
        pa_stream_set_read_callback(tap->stream, on_read, tap);
        // As parec --latency-msec asks: blocks of that size, the source's latency set by them.
        ok = pa_stream_connect_record(tap->stream, monitor, &attr, PA_STREAM_ADJUST_LATENCY) >= 0 &&
             wait_for(tap, first_block, timeout_ms);
    }
    pa_threaded_mainloop_unlock(tap->loop);
    if (!ok) {
        pulse_tap_close(tap);
        return NULL;
    }
    return tap;
}

void pulse_tap_stop(pulse_tap *tap) {
    if (tap->stopped || !tap->loop) return;
    tap->stopped = 1;
    pa_threaded_mainloop_lock(tap->loop);
    if (tap->stream) pa_stream_disconnect(tap->stream);
    if (tap->context) pa_context_disconnect(tap->context);
    pa_threaded_mainloop_unlock(tap->loop);
    pa_threaded_mainloop_stop(tap->loop);
}

const float *pulse_tap_samples(pulse_tap *tap) { return tap->samples; }
uint32_t pulse_tap_frames(pulse_tap *tap) { return tap->frames; }
const pulse_tap_timing *pulse_tap_timings(pulse_tap *tap) { return tap->timings; }
uint32_t pulse_tap_timing_count(pulse_tap *tap) { return tap->timing_count; }
const pulse_tap_arrival *pulse_tap_arrivals(pulse_tap *tap) { return tap->arrivals; }
uint32_t pulse_tap_arrival_count(pulse_tap *tap) { return tap->arrival_count; }
uint32_t pulse_tap_hole_frames(pulse_tap *tap) { return tap->hole_frames; }
uint32_t pulse_tap_dropped_frames(pulse_tap *tap) { return tap->dropped_frames; }

void pulse_tap_close(pulse_tap *tap) {
    if (!tap) return;
    pulse_tap_stop(tap);
    if (tap->stream) pa_stream_unref(tap->stream);
    if (tap->context) pa_context_unref(tap->context);
    if (tap->loop) pa_threaded_mainloop_free(tap->loop);
    free(tap->samples);
    free(tap->timings);
    free(tap->arrivals);
    free(tap);
}

#include "jack_tap.h"

#include <jack/jack.h>
#include <jack/statistics.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct jack_tap {
    jack_client_t *client;
    jack_port_t *port;
    float *samples;
    uint32_t capacity;
    // Written by JACK's process thread only; read once it has been deactivated (jack_deactivate
    // returns after the last cycle), or through the atomic `frames` while it runs.
    int started;
    jack_nframes_t origin;
    jack_nframes_t expected;
    uint32_t missed_frames;
    /// Cycles read twice (see on_process), and cycles not placed because the server moved on
    /// while they were copied.
    uint32_t reread_cycles, doubtful_cycles;
    _Atomic uint32_t frames;
    /// The server's xrun reports (its notification thread): the frame time at each, and the
    /// delay jack2 keeps of the last driver xrun then.
    jack_nframes_t xrun_times[JACK_TAP_MAX_XRUNS];
    float xrun_delays[JACK_TAP_MAX_XRUNS];
    /// The delay jack2 kept when the tap opened (of a driver xrun before it, if any).
    float opening_delay;
    _Atomic uint32_t xruns;
    /// Lateness to put on the tap itself (jack_tap_be_late_at_onsets): microseconds, one entry
    /// per onset still to come; the frames of silence seen since the last sound.
    uint32_t late_usecs[JACK_TAP_MAX_LATE];
    uint32_t quiet_frames;
    _Atomic uint32_t late_count, late_next;
    /// When each call began (jack_tap_note_cycle_time), written by the process thread,
    /// read once it has been deactivated.
    jack_tap_cycle_time *cycle_times;
    uint32_t cycle_capacity, cycle_count;
};

/// On JACK's notification thread. jack2 tells every client when one of them had not finished
/// a cycle when the next began (or a driver xrun): the server's own word that a cycle went
/// wrong, whatever the late client says of it.
static int on_xrun(void *data) {
    struct jack_tap *tap = data;
    uint32_t count = atomic_load_explicit(&tap->xruns, memory_order_relaxed);
    if (count < JACK_TAP_MAX_XRUNS) {
        tap->xrun_times[count] = jack_frame_time(tap->client);
        tap->xrun_delays[count] = jack_get_xrun_delayed_usecs(tap->client);
        atomic_store_explicit(&tap->xruns, count + 1, memory_order_release);
    }
    return 0;
}

void jack_tap_record_cycle(jack_tap *tap, uint32_t frame_time, const float *samples, uint32_t frames) {
    if (!tap->started) {
        tap->started = 1;
        tap->origin = frame_time;
    } else {
        // Frame times wrap at 2^32 (a day at 48 kHz); the difference of two does not.
        int32_t step = (int32_t)(frame_time - tap->expected);
        if (step > 0) {
            tap->missed_frames += (uint32_t)step;
        } else if (step < 0) {
            // The cycle the last call read, read again: that call began late, after the server
            // had moved on, and read this cycle's frame time and this cycle's port buffer (gong
            // had written it by then), and the server now runs the tap for it once more. The
            // cycle the late call was for is a hole: its frames were overwritten unseen.
            tap->reread_cycles++;
        }
    }
    tap->expected = frame_time + frames;
    uint32_t at = frame_time - tap->origin;
    if (at < tap->capacity && frames <= tap->capacity - at) {
        memcpy(tap->samples + at, samples, frames * sizeof(float));
        atomic_store_explicit(&tap->frames, at + frames, memory_order_release);
    }
}

void jack_tap_leave_out_cycle(jack_tap *tap, uint32_t frame_time, uint32_t frames) {
    uint32_t at = frame_time - tap->origin;
    if (!tap->started || at >= tap->capacity || frames > tap->capacity - at) return;
    for (uint32_t frame = at; frame < at + frames; frame++) tap->samples[frame] = NAN;
    tap->doubtful_cycles++;
}

/// Whether the port's buffer holds a sound after half a second of silence (an onset).
static int onset_in(struct jack_tap *tap, const float *in, jack_nframes_t nframes) {
    int onset = 0;
    for (jack_nframes_t frame = 0; frame < nframes; frame++) {
        if (fabsf(in[frame]) > 0.02f) {
            if (tap->quiet_frames >= 24000) onset = 1;
            tap->quiet_frames = 0;
        } else {
            tap->quiet_frames++;
        }
    }
    return onset;
}

static int on_process(jack_nframes_t nframes, void *data) {
    struct jack_tap *tap = data;
    // When the call began, read after the frame time: never before the cycle began. On
    // CLOCK_MONOTONIC, the clock a test's key presses are read on (jack2's own clock,
    // jack_get_time, reads CLOCK_MONOTONIC_RAW, which runs apart from it).
    jack_nframes_t woken_for = jack_last_frame_time(tap->client);
    struct timespec woken;
    clock_gettime(CLOCK_MONOTONIC, &woken);
    jack_tap_note_cycle_time(tap, woken_for, (int64_t)woken.tv_sec * 1000000 + woken.tv_nsec / 1000);
    uint32_t late_next = atomic_load_explicit(&tap->late_next, memory_order_relaxed);
    if (late_next < atomic_load_explicit(&tap->late_count, memory_order_acquire) && tap->started &&
        onset_in(tap, jack_port_get_buffer(tap->port, nframes), nframes)) {
        // A call that began late: the server may move on meanwhile, and the port's buffer with it.
        usleep(tap->late_usecs[late_next]);
        atomic_store_explicit(&tap->late_next, late_next + 1, memory_order_relaxed);
    }
    jack_nframes_t now = jack_last_frame_time(tap->client);
    jack_tap_record_cycle(tap, now, jack_port_get_buffer(tap->port, nframes), nframes);
    // A call that lost the processor between reading the frame time and copying may have copied
    // the next cycle's frames.
    if (jack_last_frame_time(tap->client) != now) jack_tap_leave_out_cycle(tap, now, nframes);
    return 0;
}

void jack_tap_note_cycle_time(jack_tap *tap, uint32_t frame_time, int64_t usecs) {
    // Placed as the cycle's frames will be: the first cycle recorded is the recording's frame 0.
    uint32_t origin = tap->started ? tap->origin : frame_time;
    if (tap->cycle_count < tap->cycle_capacity)
        tap->cycle_times[tap->cycle_count++] = (jack_tap_cycle_time){(int32_t)(frame_time - origin), usecs};
}

jack_tap *jack_tap_new(uint32_t capacity) {
    struct jack_tap *tap = calloc(1, sizeof *tap);
    if (!tap) return NULL;
    tap->capacity = capacity;
    tap->samples = malloc((size_t)capacity * sizeof(float));
    // A cycle is 16 frames at the least JACK allows.
    tap->cycle_capacity = capacity / 16 + 1;
    tap->cycle_times = malloc((size_t)tap->cycle_capacity * sizeof *tap->cycle_times);
    if (!tap->samples || !tap->cycle_times) {
        free(tap->samples);
        free(tap->cycle_times);
        free(tap);
        return NULL;
    }
    for (uint32_t frame = 0; frame < capacity; frame++) tap->samples[frame] = NAN;
    return tap;
}

jack_tap *jack_tap_open(const char *server, const char *name, uint32_t capacity) {
    struct jack_tap *tap = jack_tap_new(capacity);
    if (!tap) return NULL;
    jack_status_t status;
    tap->client = jack_client_open(name, JackNoStartServer | JackServerName, &status, server);
    if (!tap->client) {
        jack_tap_close(tap);
        return NULL;
    }
    tap->opening_delay = jack_get_xrun_delayed_usecs(tap->client);
    tap->port = jack_port_register(tap->client, "in", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
    if (!tap->port || jack_set_process_callback(tap->client, on_process, tap) != 0 ||
        jack_set_xrun_callback(tap->client, on_xrun, tap) != 0 || jack_activate(tap->client) != 0) {
        jack_tap_close(tap);
        return NULL;
    }
    return tap;
}

void jack_tap_be_late_at_onsets(jack_tap *tap, const uint32_t *usecs, uint32_t count) {
    if (count > JACK_TAP_MAX_LATE) count = JACK_TAP_MAX_LATE;
    memcpy(tap->late_usecs, usecs, count * sizeof *usecs);
    atomic_store_explicit(&tap->late_count, count, memory_order_release);
}

uint32_t jack_tap_late_calls(jack_tap *tap) { return atomic_load_explicit(&tap->late_next, memory_order_relaxed); }

const char *jack_tap_port_name(jack_tap *tap) { return jack_port_name(tap->port); }

void jack_tap_stop(jack_tap *tap) {
    if (tap->client) jack_deactivate(tap->client);
}

const float *jack_tap_samples(jack_tap *tap) { return tap->samples; }

uint32_t jack_tap_frames(jack_tap *tap) { return atomic_load_explicit(&tap->frames, memory_order_acquire); }

uint32_t jack_tap_reread_cycles(jack_tap *tap) { return tap->reread_cycles; }

uint32_t jack_tap_doubtful_cycles(jack_tap *tap) { return tap->doubtful_cycles; }

uint32_t jack_tap_missed_frames(jack_tap *tap) { return tap->missed_frames; }

const jack_tap_cycle_time *jack_tap_cycle_times(jack_tap *tap, uint32_t *count) {
    *count = tap->cycle_count;
    return tap->cycle_times;
}

uint32_t jack_tap_xruns(jack_tap *tap, int64_t *frames, int *driver, uint32_t max) {
    uint32_t count = atomic_load_explicit(&tap->xruns, memory_order_acquire);
    if (count > max) count = max;
    float last_delay = tap->opening_delay;
    for (uint32_t index = 0; index < count; index++) {
        frames[index] = tap->started ? (int32_t)(tap->xrun_times[index] - tap->origin) : 0;
        driver[index] = tap->xrun_delays[index] != last_delay;
        last_delay = tap->xrun_delays[index];
    }
    return count;
}

void jack_tap_close(jack_tap *tap) {
    if (tap->client) {
        jack_deactivate(tap->client);
        jack_client_close(tap->client);
    }
    free(tap->samples);
    free(tap->cycle_times);
    free(tap);
}

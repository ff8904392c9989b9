#include "jack_tap.h"

#include <jack/jack.h>
#include <jack/statistics.h>
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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
    /// Cycles found placed a cycle late, and moved back (see on_process).
    uint32_t moved_cycles;
    int has_last;
    uint32_t last_at, last_frames;
    _Atomic uint32_t frames;
    /// The server's xrun reports (its notification thread): the frame time at each, and the
    /// delay jack2 keeps of the last driver xrun then.
    jack_nframes_t xrun_times[JACK_TAP_MAX_XRUNS];
    float xrun_delays[JACK_TAP_MAX_XRUNS];
    /// The delay jack2 kept when the tap opened (of a driver xrun before it, if any).
    float opening_delay;
    _Atomic uint32_t xruns;
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

static int on_process(jack_nframes_t nframes, void *data) {
    struct jack_tap *tap = data;
    jack_nframes_t now = jack_last_frame_time(tap->client);
    if (!tap->started) {
        tap->started = 1;
        tap->origin = now;
    } else {
        // Frame times wrap at 2^32 (a day at 48 kHz); the difference of two does not.
        int32_t step = (int32_t)(now - tap->expected);
        if (step > 0) {
            tap->missed_frames += (uint32_t)step;
        } else if (step < 0 && tap->has_last && (uint32_t)-step <= tap->last_at) {
            // The frame time is the server's current cycle: a call that began late, after the
            // server moved on, read the next one's, and the server has now run that cycle too.
            // The last cycle belongs `-step` frames earlier, where the jump before it left a hole.
            uint32_t back = (uint32_t)-step;
            memmove(tap->samples + tap->last_at - back, tap->samples + tap->last_at, tap->last_frames * sizeof(float));
            for (uint32_t frame = tap->last_at - back + tap->last_frames; frame < tap->last_at + tap->last_frames; frame++)
                tap->samples[frame] = NAN;
            tap->missed_frames -= back <= tap->missed_frames ? back : tap->missed_frames;
            tap->moved_cycles++;
        }
    }
    tap->expected = now + nframes;
    uint32_t at = now - tap->origin;
    if (at < tap->capacity && nframes <= tap->capacity - at) {
        memcpy(tap->samples + at, jack_port_get_buffer(tap->port, nframes), nframes * sizeof(float));
        tap->has_last = 1;
        tap->last_at = at;
        tap->last_frames = nframes;
        atomic_store_explicit(&tap->frames, at + nframes, memory_order_release);
    }
    return 0;
}

jack_tap *jack_tap_open(const char *server, const char *name, uint32_t capacity) {
    struct jack_tap *tap = calloc(1, sizeof *tap);
    if (!tap) return NULL;
    tap->capacity = capacity;
    tap->samples = malloc((size_t)capacity * sizeof(float));
    jack_status_t status;
    tap->client = tap->samples ? jack_client_open(name, JackNoStartServer | JackServerName, &status, server) : NULL;
    if (!tap->client) {
        free(tap->samples);
        free(tap);
        return NULL;
    }
    for (uint32_t frame = 0; frame < capacity; frame++) tap->samples[frame] = NAN;
    tap->opening_delay = jack_get_xrun_delayed_usecs(tap->client);
    tap->port = jack_port_register(tap->client, "in", JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput, 0);
    if (!tap->port || jack_set_process_callback(tap->client, on_process, tap) != 0 ||
        jack_set_xrun_callback(tap->client, on_xrun, tap) != 0 ||
        jack_activate(tap->client) != 0) {
        jack_client_close(tap->client);
        free(tap->samples);
        free(tap);
        return NULL;
    }
    return tap;
}

const char *jack_tap_port_name(jack_tap *tap) { return jack_port_name(tap->port); }

void jack_tap_stop(jack_tap *tap) { jack_deactivate(tap->client); }

const float *jack_tap_samples(jack_tap *tap) { return tap->samples; }

uint32_t jack_tap_frames(jack_tap *tap) { return atomic_load_explicit(&tap->frames, memory_order_acquire); }

uint32_t jack_tap_moved_cycles(jack_tap *tap) { return tap->moved_cycles; }

uint32_t jack_tap_missed_frames(jack_tap *tap) { return tap->missed_frames; }

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
    jack_deactivate(tap->client);
    jack_client_close(tap->client);
    free(tap->samples);
    free(tap);
}

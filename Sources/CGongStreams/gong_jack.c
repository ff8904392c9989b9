// gong's JACK client (see gong_jack.h).
//
// JACK calls `on_process` on its real-time thread once a cycle. It allocates nothing, takes no
// lock and never waits: it claims frames from the hand-off's ring (gong_handoff_callback.h) into
// a scratch buffer allocated at open, deinterleaves them into the port buffers (silence where
// the ring runs short), and records the cycle's timing there. The other callbacks (latency,
// shutdown) come on JACK's notification thread and only store atomics.
//
// JACK's own xrun notices are not taken for lost audio: jack2 sends one whenever any client is
// late, or its driver wakes a few microseconds late, neither of which lost a frame of gong's.
// Cycles JACK ran without this client show as a jump in its frame time, and are.
//
// A call that begins late, after the server has moved to the next cycle, reads that cycle's
// frame time, and the server then runs the client again for it at once: the same frame time
// twice. The late call's buffer is not heard in the cycle it was late for; the server takes one
// of the two buffers for the cycle it runs, which one depending on who wakes first (traced on
// PipeWire's JACK, with the graph's own recording: a cue in the late buffer was heard from the
// second buffer's start, cut). So the second call plays the late call's frames again, and the
// jump is told whole: those frames are heard one cycle late, to the frame, whichever buffer is
// taken, and gong renders what it still holds again on its time.
//
// Time: each cycle's frames are placed by when the callback woke, not by JACK's DLL. The frame
// time says which cycle runs and the wake-up when: a callback wakes at its cycle's start or after
// it, never before, so the earliest of a second's wake-ups, less their frame times, is the
// moment frame 0 was played (gong's device clock takes the earliest of its reports). Not jack2's
// DLL: after its driver starts its timeline again the filter rings for seconds, misplacing frames
// by milliseconds either way, and an exact cue read by it looks off its frame (bench/RESULTS.md,
// "JACK"). Its clock is also not necessarily CLOCK_MONOTONIC (jack2 reads CLOCK_MONOTONIC_RAW);
// the wake-up is read on gong's.

#include "gong_jack.h"
#include "gong_handoff_callback.h"

#include <errno.h>
#include <jack/jack.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/// The most channels a client opens ports for.
#define GONG_JACK_MAX_CHANNELS 64
/// The scratch buffer's size in frames: JACK's largest buffer size. A larger one is still
/// served, in pieces of this many frames.
#define GONG_JACK_SCRATCH_FRAMES 8192
struct gong_jack_stream {
    jack_client_t *client;
    jack_port_t *ports[GONG_JACK_MAX_CHANNELS];
    uint32_t channels, frame_bytes, rate, buffer_size;

    struct gong_handoff handoff;
    /// Interleaved frames claimed from the ring, before they are spread over the ports.
    float *scratch;

    // The process callback's own.
    gong_cycle_skips skips;
    /// Where the first call whose frame time ran ahead began in the ring: the loss, told at the
    /// next calm call, landed before it.
    uint64_t jump_began;
    /// When the server's clock expected the next cycle to begin, to judge a restart.
    gong_clock_prediction prediction;
    /// A restart or a jump seen in a cycle whose timing was in doubt, for the next cycle timed to
    /// measure.
    int stop_unmeasured;
    /// When frame 0 was played, by each cycle's wake-up, and the stops measured in it.
    gong_clock_origin origin;

    /// The frames the last call claimed, still in `scratch` to play again; 0: none.
    uint32_t replayable;
    /// The ports' playback latency (the largest), kept by the latency callback.
    _Atomic uint32_t latency_frames;

    /// GONG_JACK_TRACE=FILE: every callback, written to FILE as the client closes.
    gong_cycle_trace trace;
};

// libjack prints to standard error when no server runs ("Cannot connect to server socket…"):
// gong says what went wrong in its own words.
static void quiet(const char *message) { (void)message; }
static pthread_once_t jack_quieted = PTHREAD_ONCE_INIT;
static void quiet_jack(void) {
    jack_set_error_function(quiet);
    jack_set_info_function(quiet);
}

// MARK: JACK's real-time thread

/// Frames as nanoseconds at `rate`, in two parts so that no count of frames overflows.
static int64_t frames_ns(uint64_t frames, uint32_t rate) {
    return (int64_t)(frames / rate) * 1000000000LL + (int64_t)((frames % rate) * 1000000000ULL / rate);
}

/// Whether jack2's clock may have begun this cycle elsewhere than it had predicted, the client
/// woken at `now` (gong_clock_prediction in gong_handoff.h says how it is judged).
static int clock_restarted(struct gong_jack_stream *self, jack_nframes_t nframes, int64_t now) {
    jack_nframes_t current_frames;
    jack_time_t current_usecs, next_usecs;
    float period_usecs;
    if (jack_get_cycle_times(self->client, &current_frames, &current_usecs, &next_usecs, &period_usecs) != 0) {
        self->prediction.wakeup_usecs = 0;
        return 0;
    }
    return gong_clock_prediction_step(&self->prediction, current_frames, current_usecs, next_usecs, nframes,
                                      self->rate, now / 1000);
}

/// Spreads `frames` interleaved frames of the scratch buffer over the ports' buffers, from
/// `offset` on.
static void spread(struct gong_jack_stream *self, float **outputs, uint32_t offset, uint32_t frames) {
    for (uint32_t channel = 0; channel < self->channels; channel++) {
        float *out = outputs[channel] + offset;
        const float *in = self->scratch + channel;
        for (uint32_t frame = 0; frame < frames; frame++) out[frame] = in[(size_t)frame * self->channels];
    }
}

static void silence(struct gong_jack_stream *self, float **outputs, uint32_t offset, uint32_t frames) {
    for (uint32_t channel = 0; channel < self->channels; channel++)
        memset(outputs[channel] + offset, 0, (size_t)frames * sizeof(float));
}

/// The cycle's frames from the ring, silence where it runs short.
static void play_from_ring(struct gong_jack_stream *self, float **outputs, uint32_t nframes) {
    uint32_t done = 0;
    while (done < nframes) {
        uint32_t chunk = nframes - done;
        if (chunk > GONG_JACK_SCRATCH_FRAMES) chunk = GONG_JACK_SCRATCH_FRAMES;
        uint32_t got = gong_handoff_read(&self->handoff, self->scratch, chunk);
        spread(self, outputs, done, got);
        done += got;
        if (got < chunk) break;
    }
    if (done < nframes) {
        silence(self, outputs, done, nframes - done);
        gong_handoff_short(&self->handoff, nframes - done);
    }
    // Only what stayed in the scratch buffer whole can be played again.
    self->replayable = nframes <= GONG_JACK_SCRATCH_FRAMES ? done : 0;
}

/// The last call began late, after the server had moved on: the same frames again, so that they
/// are heard in this cycle whichever of the two buffers the server takes, and the ring's next
/// frames in the next cycle's.
static void play_again(struct gong_jack_stream *self, float **outputs, uint32_t nframes) {
    uint32_t frames = self->replayable < nframes ? self->replayable : nframes;
    spread(self, outputs, 0, frames);
    silence(self, outputs, frames, nframes - frames);
    self->replayable = 0;
}

static int on_process(jack_nframes_t nframes, void *data) {
    struct gong_jack_stream *self = data;
    int64_t now = gong_monotonic_ns();
    jack_nframes_t frame_time = jack_last_frame_time(self->client);
    // Cycles the server ran without this client (it was stopped, or too late) show as the frame
    // time moving on by more than the frames handed over (gong_handoff.h says when it is told).
    uint64_t began = self->handoff.consumed;
    self->skips.replays = self->replayable > 0;
    uint32_t missed = gong_cycle_skips_step(&self->skips, frame_time, nframes, now, self->rate);
    if (self->skips.jumped) self->jump_began = began;
    if (missed) gong_handoff_missed(&self->handoff, missed, self->jump_began);
    // A restart the prediction saw, or a jump (gong_clock_origin says why), is measured by the
    // origins of the next cycles timed.
    if (clock_restarted(self, nframes, now) || self->skips.jumped) self->stop_unmeasured = 1;

    float *outputs[GONG_JACK_MAX_CHANNELS];
    for (uint32_t channel = 0; channel < self->channels; channel++)
        outputs[channel] = jack_port_get_buffer(self->ports[channel], nframes);

    uint32_t replayed_from = self->replayable;
    int played_again = self->skips.repeated && self->replayable > 0;
    if (played_again)
        play_again(self, outputs, nframes);
    else
        play_from_ring(self, outputs, nframes);

    // The first frame of this cycle's buffer is heard the ports' playback latency after the
    // cycle began (jack2's async mode counts the cycle's own period in it: two periods on a
    // dummy or ALSA driver), so the ring's next frame `nframes` after that. The cycle began at
    // the callback's wake-up or before: the device clock keeps the earliest.
    uint32_t latency = atomic_load_explicit(&self->latency_frames, memory_order_relaxed);
    int64_t heard = now + frames_ns((uint64_t)latency + nframes, self->rate);

    // A frame time in doubt (gong_handoff.h) may be a cycle ahead, and would place this cycle's
    // frames a cycle early: its timing is not reported, the last cycle's stands.
    if (self->skips.in_doubt) {
        gong_handoff_cycle_untimed(&self->handoff);
    } else {
        uint64_t stopped = gong_clock_origin_step(&self->origin, now, frame_time, self->rate, self->stop_unmeasured);
        if (stopped) gong_handoff_clock_stopped(&self->handoff, stopped);
        self->stop_unmeasured = 0;
        gong_handoff_cycle_done(&self->handoff, now, heard, nframes);
    }
    gong_cycle_trace_keep(&self->trace, outputs[0], 1, nframes,
                          (gong_traced_cycle){.woke_ns = now,
                                              .ring_frame = played_again ? began - replayed_from : began,
                                              .position = frame_time,
                                              .frames = nframes,
                                              .missed_told = missed,
                                              .in_doubt = (uint8_t)self->skips.in_doubt,
                                              .repeated = (uint8_t)self->skips.repeated,
                                              .played_again = (uint8_t)played_again});
    return 0;
}

// MARK: JACK's notification thread

static uint32_t playback_latency(struct gong_jack_stream *self) {
    uint32_t largest = 0;
    for (uint32_t channel = 0; channel < self->channels; channel++) {
        jack_latency_range_t range = {0, 0};
        jack_port_get_latency_range(self->ports[channel], JackPlaybackLatency, &range);
        if (range.max > largest) largest = range.max;
    }
    return largest;
}

static void on_latency(jack_latency_callback_mode_t mode, void *data) {
    struct gong_jack_stream *self = data;
    if (mode == JackPlaybackLatency)
        atomic_store_explicit(&self->latency_frames, playback_latency(self), memory_order_relaxed);
}

static void on_shutdown(jack_status_t code, const char *reason, void *data) {
    (void)code, (void)reason;
    struct gong_jack_stream *self = data;
    gong_handoff_lost(&self->handoff);
}

// MARK: Opening and closing

static jack_client_t *open_client(const char *name) {
    pthread_once(&jack_quieted, quiet_jack);
    jack_status_t status;
    return jack_client_open(name, JackNoStartServer, &status);
}

int gong_jack_server_answers(void) {
    jack_client_t *client = open_client("gong-probe");
    if (!client) return 0;
    jack_client_close(client);
    return 1;
}

int gong_jack_list_playback_ports(gong_jack_port *ports, int capacity) {
    jack_client_t *client = open_client("gong-probe");
    if (!client) return -EHOSTDOWN;
    const char **names = jack_get_ports(client, NULL, JACK_DEFAULT_AUDIO_TYPE, JackPortIsInput);
    int count = 0;
    for (; names && names[count]; count++) {
        if (count >= capacity) continue;
        snprintf(ports[count].name, sizeof ports[count].name, "%s", names[count]);
        jack_port_t *port = jack_port_by_name(client, names[count]);
        ports[count].physical = port && (jack_port_flags(port) & JackPortIsPhysical) ? 1 : 0;
    }
    if (names) jack_free(names);
    jack_client_close(client);
    return count;
}

int gong_jack_open(const char *client_name, const char *const *ports, int port_count, uint32_t channels,
                   uint32_t buffer_frames, gong_jack_stream **out, char *error, size_t error_size) {
    *out = NULL;
    if (channels == 0 || channels > GONG_JACK_MAX_CHANNELS || buffer_frames == 0 || port_count < 0) {
        gong_say(error, error_size, "the stream's shape is out of range");
        return -EINVAL;
    }
    struct gong_jack_stream *self = calloc(1, sizeof *self);
    if (!self) return -ENOMEM;
    self->channels = channels;
    self->frame_bytes = channels * sizeof(float);
    self->scratch = calloc((size_t)GONG_JACK_SCRATCH_FRAMES * channels, sizeof(float));
    int result = !self->scratch ? -ENOMEM : gong_handoff_init(&self->handoff, buffer_frames, self->frame_bytes);
    if (result < 0) {
        free(self->scratch);
        free(self);
        gong_say(error, error_size, "out of memory");
        return result;
    }

    self->client = open_client(client_name);
    if (!self->client) {
        gong_say(error, error_size, "no JACK server answers");
        gong_jack_close(self);
        return -EHOSTDOWN;
    }
    self->rate = jack_get_sample_rate(self->client);
    gong_clock_origin_init(&self->origin);
    gong_cycle_trace_open(&self->trace, getenv("GONG_JACK_TRACE"), self->rate);
    self->buffer_size = jack_get_buffer_size(self->client);

    // Named ports must exist, and take audio: checked before anything is registered.
    for (int index = 0; index < port_count; index++) {
        jack_port_t *port = jack_port_by_name(self->client, ports[index]);
        if (!port || !(jack_port_flags(port) & JackPortIsInput)) {
            snprintf(error, error_size, port ? "port '%s' does not take audio (it is not an input port)"
                                             : "no such port '%s'",
                     ports[index]);
            gong_jack_close(self);
            return -ENOENT;
        }
    }

    for (uint32_t channel = 0; channel < channels; channel++) {
        char name[32];
        snprintf(name, sizeof name, "out_%u", channel + 1);
        self->ports[channel] = jack_port_register(self->client, name, JACK_DEFAULT_AUDIO_TYPE, JackPortIsOutput, 0);
        if (!self->ports[channel]) {
            snprintf(error, error_size, "JACK would not register port %s", name);
            gong_jack_close(self);
            return -EIO;
        }
    }
    jack_set_process_callback(self->client, on_process, self);
    jack_set_latency_callback(self->client, on_latency, self);
    jack_on_info_shutdown(self->client, on_shutdown, self);
    if (jack_activate(self->client) != 0) {
        gong_say(error, error_size, "JACK would not activate the client");
        gong_jack_close(self);
        return -EIO;
    }

    // Where to connect: the ports named, else the first physical playback ports (two at least,
    // so a mono stream is heard on both).
    const char **physical = NULL;
    const char *const *targets = ports;
    int target_count = port_count;
    if (port_count == 0) {
        physical = jack_get_ports(self->client, NULL, JACK_DEFAULT_AUDIO_TYPE, JackPortIsPhysical | JackPortIsInput);
        int available = 0;
        while (physical && physical[available]) available++;
        if (available == 0) {
            if (physical) jack_free(physical);
            gong_say(error, error_size, "the JACK server has no physical playback ports; name ports with jack:PORT,PORT");
            gong_jack_close(self);
            return -ENODEV;
        }
        targets = physical;
        target_count = (int)(channels > 2 ? channels : 2);
        if (target_count > available) target_count = available;
    }
    int connect_count = target_count > (int)channels ? target_count : (int)channels;
    for (int index = 0; index < connect_count; index++) {
        if (index >= target_count) break;  // more channels than ports: the rest stay unconnected
        const char *source = jack_port_name(self->ports[index % channels]);
        int connected = jack_connect(self->client, source, targets[index]);
        if (connected != 0 && connected != EEXIST) {
            snprintf(error, error_size, "JACK would not connect %s to %s", source, targets[index]);
            if (physical) jack_free(physical);
            gong_jack_close(self);
            return -EIO;
        }
    }
    if (physical) jack_free(physical);
    // The latency callback follows changes; until it first comes, ask now.
    jack_recompute_total_latencies(self->client);
    atomic_store(&self->latency_frames, playback_latency(self));
    *out = self;
    return 0;
}

void gong_jack_close(gong_jack_stream *self) {
    if (!self) return;
    if (self->client) {
        // Deactivating first: the process callback is done with the ring before it is freed.
        jack_deactivate(self->client);
        jack_client_close(self->client);
        self->client = NULL;
    }
    gong_cycle_trace_close(&self->trace, getenv("GONG_JACK_TRACE"));
    gong_handoff_destroy(&self->handoff);
    free(self->scratch);
    free(self);
}

uint32_t gong_jack_rate(gong_jack_stream *self) { return self->rate; }
uint32_t gong_jack_buffer_size(gong_jack_stream *self) { return self->buffer_size; }
const char *gong_jack_client_name(gong_jack_stream *self) { return jack_get_client_name(self->client); }

// MARK: gong's side

gong_handoff *gong_jack_handoff(gong_jack_stream *self) { return &self->handoff; }

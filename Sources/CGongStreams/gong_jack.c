// gong's JACK client (see gong_jack.h).
//
// JACK calls `on_process` on its real-time thread once a cycle. It allocates nothing, takes no
// lock and never waits: it claims frames from the ring into a scratch buffer allocated at open,
// deinterleaves them into the port buffers (silence where the ring runs short), records the
// cycle's timing in a seqlock, and rings an eventfd only when gong's audio thread asked to be
// woken. The other callbacks (xrun, latency, buffer size, shutdown) come on JACK's notification
// thread and only store atomics.
//
// Time: JACK's own clock is not necessarily CLOCK_MONOTONIC (jack2 1.9.21 reads
// CLOCK_MONOTONIC_RAW, found 247 ms apart from CLOCK_MONOTONIC on a VM here, and NTP's slewing
// moves them apart; PipeWire's JACK reads CLOCK_MONOTONIC). Each cycle reads both clocks at one
// instant (vDSO calls, no system call) and carries the moment a frame is heard from one to the
// other, so neither the offset nor any drift between them reaches gong.
#include "gong_jack.h"
#include "gong_frame_ring.h"

#include <errno.h>
#include <jack/jack.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
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
    uint32_t channels, frame_bytes, buffer_frames, rate, buffer_size;

    gong_frame_ring ring;
    /// Interleaved frames claimed from the ring, before they are spread over the ports.
    float *scratch;

    /// 0 while the client may play, -1 once the server shut it down.
    _Atomic int state;
    /// Rung by the process callback when `wake_frames` can be written, and on shutdown.
    int room_fd;
    _Atomic uint32_t wake_frames;

    // The process callback's own.
    uint64_t consumed;
    jack_nframes_t previous_frame_time;
    jack_nframes_t previous_nframes;
    int has_previous;
    int playing;

    /// The ports' playback latency (the largest), kept by the latency callback.
    _Atomic uint32_t latency_frames;
    _Atomic uint64_t ring_underruns, ring_silent_frames, skipped_cycles, skipped_frames, server_xruns;
    _Atomic uint32_t largest_nframes;

    /// Seqlock: odd while the process callback writes the timing.
    _Atomic uint64_t timing_sequence;
    _Atomic uint64_t timing_cycles, timing_next_frame;
    _Atomic int64_t timing_now, timing_heard;
    _Atomic uint32_t timing_nframes, timing_latency;
};

static int64_t monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static void say(char *error, size_t size, const char *sentence) {
    if (error && size) snprintf(error, size, "%s", sentence);
}

static void ring_room(struct gong_jack_stream *self) {
    uint64_t one = 1;
    ssize_t ignored = write(self->room_fd, &one, sizeof one);
    (void)ignored;
}

// libjack prints to standard error when no server runs ("Cannot connect to server socket…"):
// gong says what went wrong in its own words.
static void quiet(const char *message) { (void)message; }
static pthread_once_t jack_quieted = PTHREAD_ONCE_INIT;
static void quiet_jack(void) {
    jack_set_error_function(quiet);
    jack_set_info_function(quiet);
}

// MARK: JACK's real-time thread

/// CLOCK_MONOTONIC and JACK's clock at (nearly) one instant: JACK's read between two reads of
/// CLOCK_MONOTONIC, their midpoint taken. A thread preempted in between (a busy machine, a
/// virtual machine's host) reads again, at most three times, and keeps the tightest bracket:
/// one preemption there would otherwise shift the moment a frame is heard by as long.
static void jack_clock_now(int64_t *monotonic, int64_t *jack_ns) {
    int64_t best_width = INT64_MAX;
    for (int attempt = 0; attempt < 3; attempt++) {
        int64_t before = monotonic_ns();
        int64_t jack = (int64_t)jack_get_time() * 1000;
        int64_t after = monotonic_ns();
        if (after - before < best_width) {
            best_width = after - before;
            *monotonic = before + (after - before) / 2;
            *jack_ns = jack;
        }
        if (best_width < 20000) break;
    }
}

static int on_process(jack_nframes_t nframes, void *data) {
    struct gong_jack_stream *self = data;
    jack_nframes_t frame_time = jack_last_frame_time(self->client);
    // Cycles the server ran without this client (it was stopped, or too late) show as the frame
    // time moving on by more than the last cycle's frames.
    if (self->has_previous) {
        int32_t skipped = (int32_t)(frame_time - (self->previous_frame_time + self->previous_nframes));
        if (skipped > 0 && self->playing) {
            atomic_fetch_add_explicit(&self->skipped_cycles, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&self->skipped_frames, (uint64_t)skipped, memory_order_relaxed);
        }
    }
    self->has_previous = 1;
    self->previous_frame_time = frame_time;
    self->previous_nframes = nframes;

    float *outputs[GONG_JACK_MAX_CHANNELS];
    for (uint32_t channel = 0; channel < self->channels; channel++)
        outputs[channel] = jack_port_get_buffer(self->ports[channel], nframes);

    uint32_t done = 0, got_total = 0;
    while (done < nframes) {
        uint32_t chunk = nframes - done;
        if (chunk > GONG_JACK_SCRATCH_FRAMES) chunk = GONG_JACK_SCRATCH_FRAMES;
        uint32_t got = gong_frame_ring_read(&self->ring, self->scratch, chunk);
        for (uint32_t channel = 0; channel < self->channels; channel++) {
            float *out = outputs[channel] + done;
            const float *in = self->scratch + channel;
            for (uint32_t frame = 0; frame < got; frame++) out[frame] = in[(size_t)frame * self->channels];
        }
        got_total += got;
        done += got;
        if (got < chunk) break;
    }
    if (done < nframes) {
        for (uint32_t channel = 0; channel < self->channels; channel++)
            memset(outputs[channel] + done, 0, (size_t)(nframes - done) * sizeof(float));
        if (self->playing) {
            atomic_fetch_add_explicit(&self->ring_underruns, 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&self->ring_silent_frames, nframes - done, memory_order_relaxed);
        }
    }
    if (got_total > 0) self->playing = 1;
    self->consumed += got_total;

    // The first frame of this cycle's buffer is heard the ports' playback latency after the
    // cycle's frame time (jack2's async mode counts the cycle's own period in it: two periods
    // on a dummy or ALSA driver), so the ring's next frame `nframes` after that. JACK's DLL
    // maps the frame time to its clock; both clocks read now carry it to CLOCK_MONOTONIC.
    uint32_t latency = atomic_load_explicit(&self->latency_frames, memory_order_relaxed);
    jack_time_t heard_jack = jack_frames_to_time(self->client, frame_time + latency + nframes);
    int64_t now, now_jack_ns;
    jack_clock_now(&now, &now_jack_ns);
    int64_t heard = now + ((int64_t)heard_jack * 1000 - now_jack_ns);

    uint64_t sequence = atomic_load_explicit(&self->timing_sequence, memory_order_relaxed);
    atomic_store_explicit(&self->timing_sequence, sequence + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&self->timing_cycles, atomic_load_explicit(&self->timing_cycles, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&self->timing_now, now, memory_order_relaxed);
    atomic_store_explicit(&self->timing_heard, heard, memory_order_relaxed);
    atomic_store_explicit(&self->timing_next_frame, self->consumed, memory_order_relaxed);
    atomic_store_explicit(&self->timing_nframes, nframes, memory_order_relaxed);
    atomic_store_explicit(&self->timing_latency, latency, memory_order_relaxed);
    atomic_store_explicit(&self->timing_sequence, sequence + 2, memory_order_release);

    if (nframes > atomic_load_explicit(&self->largest_nframes, memory_order_relaxed))
        atomic_store_explicit(&self->largest_nframes, nframes, memory_order_relaxed);

    uint32_t wanted = atomic_load_explicit(&self->wake_frames, memory_order_acquire);
    if (wanted && self->buffer_frames - gong_frame_ring_filled(&self->ring) >= wanted) {
        atomic_store_explicit(&self->wake_frames, 0, memory_order_relaxed);
        ring_room(self);
    }
    return 0;
}

// MARK: JACK's notification thread

static int on_xrun(void *data) {
    struct gong_jack_stream *self = data;
    atomic_fetch_add_explicit(&self->server_xruns, 1, memory_order_relaxed);
    return 0;
}

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

// The scratch buffer already serves any size (in pieces): nothing to reallocate.
static int on_buffer_size(jack_nframes_t nframes, void *data) {
    struct gong_jack_stream *self = data;
    if (nframes > atomic_load_explicit(&self->largest_nframes, memory_order_relaxed))
        atomic_store_explicit(&self->largest_nframes, nframes, memory_order_relaxed);
    return 0;
}

static void on_shutdown(jack_status_t code, const char *reason, void *data) {
    (void)code, (void)reason;
    struct gong_jack_stream *self = data;
    atomic_store(&self->state, -1);
    ring_room(self);
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
        say(error, error_size, "the stream's shape is out of range");
        return -EINVAL;
    }
    struct gong_jack_stream *self = calloc(1, sizeof *self);
    if (!self) return -ENOMEM;
    self->channels = channels;
    self->frame_bytes = channels * sizeof(float);
    self->buffer_frames = buffer_frames;
    self->room_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    self->scratch = calloc((size_t)GONG_JACK_SCRATCH_FRAMES * channels, sizeof(float));
    int result = self->room_fd < 0 ? -errno
                 : !self->scratch  ? -ENOMEM
                                   : gong_frame_ring_init(&self->ring, buffer_frames, self->frame_bytes);
    if (result < 0) {
        if (self->room_fd >= 0) close(self->room_fd);
        free(self->scratch);
        free(self);
        say(error, error_size, "out of memory");
        return result;
    }

    self->client = open_client(client_name);
    if (!self->client) {
        say(error, error_size, "no JACK server answers");
        gong_jack_close(self);
        return -EHOSTDOWN;
    }
    self->rate = jack_get_sample_rate(self->client);
    self->buffer_size = jack_get_buffer_size(self->client);
    atomic_store(&self->largest_nframes, self->buffer_size);

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
    jack_set_xrun_callback(self->client, on_xrun, self);
    jack_set_latency_callback(self->client, on_latency, self);
    jack_set_buffer_size_callback(self->client, on_buffer_size, self);
    jack_on_info_shutdown(self->client, on_shutdown, self);
    if (jack_activate(self->client) != 0) {
        say(error, error_size, "JACK would not activate the client");
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
            say(error, error_size, "the JACK server has no physical playback ports; name ports with jack:PORT,PORT");
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
    gong_frame_ring_destroy(&self->ring);
    free(self->scratch);
    close(self->room_fd);
    free(self);
}

uint32_t gong_jack_rate(gong_jack_stream *self) { return self->rate; }
uint32_t gong_jack_buffer_size(gong_jack_stream *self) { return self->buffer_size; }
const char *gong_jack_client_name(gong_jack_stream *self) { return jack_get_client_name(self->client); }

// MARK: gong's side

uint32_t gong_jack_writable(gong_jack_stream *self) {
    uint32_t filled = gong_frame_ring_filled(&self->ring);
    return filled >= self->buffer_frames ? 0 : self->buffer_frames - filled;
}

uint32_t gong_jack_write(gong_jack_stream *self, const float *frames, uint32_t count) {
    return gong_frame_ring_write(&self->ring, frames, count, self->buffer_frames);
}

uint32_t gong_jack_unclaimed(gong_jack_stream *self) { return gong_frame_ring_unclaimed(&self->ring); }

uint32_t gong_jack_take_back(gong_jack_stream *self, uint32_t frames) {
    return gong_frame_ring_take_back(&self->ring, frames);
}

uint32_t gong_jack_filled(gong_jack_stream *self) { return gong_frame_ring_filled(&self->ring); }

int gong_jack_state(gong_jack_stream *self) { return atomic_load(&self->state) < 0 ? -ENODEV : 0; }

int gong_jack_wait(gong_jack_stream *self, uint32_t frames, int wake_fd, int timeout_ms) {
    int64_t deadline = monotonic_ns() + (int64_t)timeout_ms * 1000000;
    for (;;) {
        if (atomic_load(&self->state) < 0) return -ENODEV;
        // Ask to be woken first, then look: room freed in between still rings.
        atomic_store_explicit(&self->wake_frames, frames ? frames : 1, memory_order_release);
        if (gong_jack_writable(self) >= frames) {
            atomic_store_explicit(&self->wake_frames, 0, memory_order_relaxed);
            return 1;
        }
        int64_t left = deadline - monotonic_ns();
        if (left <= 0) {
            atomic_store_explicit(&self->wake_frames, 0, memory_order_relaxed);
            return 0;
        }
        struct pollfd watched[2] = {{.fd = self->room_fd, .events = POLLIN}, {.fd = wake_fd, .events = POLLIN}};
        int ready = poll(watched, wake_fd >= 0 ? 2 : 1, (int)((left + 999999) / 1000000));
        if (ready < 0 && errno != EINTR) return -errno;
        uint64_t count;
        if (watched[0].revents & POLLIN) {
            ssize_t ignored = read(self->room_fd, &count, sizeof count);
            (void)ignored;
        }
        if (wake_fd >= 0 && (watched[1].revents & POLLIN)) {
            atomic_store_explicit(&self->wake_frames, 0, memory_order_relaxed);
            char drained[64];
            while (read(wake_fd, drained, sizeof drained) > 0) {
            }
            return 2;
        }
    }
}

void gong_jack_timing_read(gong_jack_stream *self, gong_jack_timing *timing) {
    for (;;) {
        uint64_t before = atomic_load_explicit(&self->timing_sequence, memory_order_acquire);
        if (before & 1) continue;
        timing->cycles = atomic_load_explicit(&self->timing_cycles, memory_order_relaxed);
        timing->now_ns = atomic_load_explicit(&self->timing_now, memory_order_relaxed);
        timing->heard_ns = atomic_load_explicit(&self->timing_heard, memory_order_relaxed);
        timing->next_frame = atomic_load_explicit(&self->timing_next_frame, memory_order_relaxed);
        timing->nframes = atomic_load_explicit(&self->timing_nframes, memory_order_relaxed);
        timing->latency_frames = atomic_load_explicit(&self->timing_latency, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&self->timing_sequence, memory_order_relaxed) == before) return;
    }
}

void gong_jack_counters_read(gong_jack_stream *self, gong_jack_counters *counters) {
    counters->ring_underruns = atomic_load_explicit(&self->ring_underruns, memory_order_relaxed);
    counters->ring_silent_frames = atomic_load_explicit(&self->ring_silent_frames, memory_order_relaxed);
    counters->skipped_cycles = atomic_load_explicit(&self->skipped_cycles, memory_order_relaxed);
    counters->skipped_frames = atomic_load_explicit(&self->skipped_frames, memory_order_relaxed);
    counters->server_xruns = atomic_load_explicit(&self->server_xruns, memory_order_relaxed);
    counters->largest_nframes = atomic_load_explicit(&self->largest_nframes, memory_order_relaxed);
}

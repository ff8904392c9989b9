// gong's PipeWire stream (see gong_pipewire.h).
//
// Two threads of PipeWire's own serve it: the thread loop (connection, state, registry) and the
// data thread, which calls `on_process` once a graph cycle. The callback allocates nothing,
// takes no lock and never waits: it claims the quantum from the hand-off's ring and records the
// cycle's timing there (gong_handoff_callback.h).
#define _GNU_SOURCE  // gettid
#include "gong_pipewire.h"
#include "gong_handoff_callback.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>
#include <spa/utils/result.h>

struct gong_pw_stream {
    struct pw_thread_loop *loop;
    struct pw_context *context;
    struct pw_core *core;
    struct spa_hook core_listener;
    struct pw_stream *stream;
    struct spa_hook stream_listener;

    struct gong_handoff handoff;
    uint32_t rate, channels, frame_bytes;

    /// Written by the thread loop: 1 once the stream is linked and running, -1 once it failed or went.
    _Atomic int linked;
    char error[256];

    // The callback's own.
    gong_cycle_skips skips;
    /// Where the first call whose position ran ahead began in the ring: the loss, told at the
    /// next calm call, landed before it.
    uint64_t jump_began;
    int named;
    /// The largest quantum seen, in frames (for GONG_PIPEWIRE_TRACE).
    _Atomic uint32_t largest_quantum;
    /// GONG_PIPEWIRE_TRACE=FILE: every call, written to FILE as the stream closes.
    gong_cycle_trace trace;
};

static pthread_once_t pw_ready = PTHREAD_ONCE_INIT;
static void initialise_pipewire(void) { pw_init(NULL, NULL); }

// MARK: The data thread

static void on_process(void *data) {
    struct gong_pw_stream *self = data;
    // When the call woke: a position is believed only in a call that came a period after the last
    // (gong_cycle_skips in gong_handoff.h).
    int64_t woke = gong_monotonic_ns();
    if (!self->named) {
        // Named once, for `top -H` and the tests: it inherits whatever name its creator had.
        prctl(PR_SET_NAME, "pipewire-data");
        self->named = 1;
    }
    struct pw_buffer *buffer = pw_stream_dequeue_buffer(self->stream);
    if (!buffer) return;
    struct spa_data *plane = &buffer->buffer->datas[0];
    if (!plane->data) {
        pw_stream_queue_buffer(self->stream, buffer);
        return;
    }
    uint32_t capacity = plane->maxsize / self->frame_bytes;
    uint32_t frames = buffer->requested ? (uint32_t)buffer->requested : capacity;
    if (frames > capacity) frames = capacity;

    uint64_t began = self->handoff.consumed;
    uint32_t got = gong_handoff_read(&self->handoff, plane->data, frames);
    if (got < frames) {
        memset((uint8_t *)plane->data + (size_t)got * self->frame_bytes, 0,
               (size_t)(frames - got) * self->frame_bytes);
        gong_handoff_short(&self->handoff, frames - got);
    }
    plane->chunk->offset = 0;
    plane->chunk->stride = (int32_t)self->frame_bytes;
    plane->chunk->size = frames * self->frame_bytes;
    buffer->size = frames;
    if (frames > atomic_load_explicit(&self->largest_quantum, memory_order_relaxed))
        atomic_store_explicit(&self->largest_quantum, frames, memory_order_relaxed);

    // When the first frame of this buffer is heard (pw_stream.h: the delay to the device, the
    // buffers still queued and the resampler's), and so when the ring's next frame is.
    struct pw_time time;
    memset(&time, 0, sizeof time);
    int timed = pw_stream_get_time_n(self->stream, &time, sizeof time) == 0 && time.now > 0 &&
                time.rate.denom > 0 && time.rate.num > 0;
    if (!timed) {
        pw_stream_queue_buffer(self->stream, buffer);
        return;
    }
    int64_t delay_ns = time.delay * (int64_t)time.rate.num * 1000000000LL / (int64_t)time.rate.denom;
    int64_t queued_ns = (int64_t)(time.queued + time.buffered) * 1000000000LL / self->rate;
    int64_t frames_ns = (int64_t)frames * 1000000000LL / self->rate;
    // A cycle the graph ran without us shows as the graph's clock moving on by more than we gave
    // (gong_handoff.h says when it is told). Its ticks counted in the stream's frames, modulo
    // 2^32 as the count wants; a year of ticks times the rate stays far inside 64 bits.
    uint32_t position = (uint32_t)(time.ticks * time.rate.num * self->rate / time.rate.denom);
    uint32_t missed = gong_cycle_skips_step(&self->skips, position, frames, woke, self->rate);
    if (self->skips.jumped) self->jump_began = began;
    if (missed) gong_handoff_missed(&self->handoff, missed, self->jump_began);
    // Before the buffer goes back to the server: the trace reads its samples.
    gong_cycle_trace_keep(&self->trace, plane->data, self->channels, frames,
                          (gong_traced_cycle){.woke_ns = woke,
                                              .ring_frame = began,
                                              .position = position,
                                              .frames = frames,
                                              .missed_told = missed,
                                              .in_doubt = (uint8_t)self->skips.in_doubt,
                                              .repeated = (uint8_t)self->skips.repeated});
    pw_stream_queue_buffer(self->stream, buffer);
    // A position in doubt may be a cycle ahead, and would place this cycle's frames a cycle late:
    // its timing is not reported, the last cycle's stands.
    if (self->skips.in_doubt)
        gong_handoff_cycle_untimed(&self->handoff);
    else
        gong_handoff_cycle_done(&self->handoff, time.now, time.now + delay_ns + queued_ns + frames_ns, frames);
}

// MARK: The thread loop

static void on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error) {
    (void)old;
    struct gong_pw_stream *self = data;
    switch (state) {
    case PW_STREAM_STATE_STREAMING:
        // Linked, and the graph runs it. Not PAUSED: a stream is paused as soon as the server has
        // made its node, whether anything links it or not (with no session manager running too),
        // so a server restarting was taken for back before its session manager had linked the
        // stream, and lost again a moment later: two losses told for one restart.
        if (atomic_load(&self->linked) == 0) atomic_store(&self->linked, 1);
        break;
    case PW_STREAM_STATE_ERROR:
        snprintf(self->error, sizeof self->error, "the stream failed: %s", error ? error : "unknown error");
        atomic_store(&self->linked, -1);
        gong_handoff_lost(&self->handoff);
        break;
    case PW_STREAM_STATE_UNCONNECTED: {
        // Once linked, a loss; while opening, a failure to open, at once rather than at the deadline.
        int linked = atomic_load(&self->linked);
        if (linked < 0) break;
        snprintf(self->error, sizeof self->error, "the stream was disconnected");
        atomic_store(&self->linked, -1);
        if (linked == 1) gong_handoff_lost(&self->handoff);
        break;
    }
    default:
        break;
    }
    pw_thread_loop_signal(self->loop, false);
}

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message) {
    (void)seq;
    struct gong_pw_stream *self = data;
    // The core itself failing (id 0), or the server going away (-EPIPE): the stream is lost.
    if (id == PW_ID_CORE || res == -EPIPE) {
        snprintf(self->error, sizeof self->error, "the PipeWire server went away (%s)",
                 message ? message : spa_strerror(res));
        atomic_store(&self->linked, -1);
        gong_handoff_lost(&self->handoff);
        pw_thread_loop_signal(self->loop, false);
    }
}

static const struct pw_stream_events stream_events = {
    PW_VERSION_STREAM_EVENTS,
    .state_changed = on_state_changed,
    .process = on_process,
};

static const struct pw_core_events core_events = {
    PW_VERSION_CORE_EVENTS,
    .error = on_core_error,
};

// MARK: The registry: sinks by name

struct sink_census {
    struct pw_thread_loop *loop;
    gong_pw_sink *sinks;
    int capacity, count, done, sync;
};

static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                      const struct spa_dict *props) {
    (void)id, (void)permissions, (void)version;
    struct sink_census *census = data;
    if (!props || strcmp(type, PW_TYPE_INTERFACE_Node) != 0) return;
    const char *class = spa_dict_lookup(props, PW_KEY_MEDIA_CLASS);
    if (!class || strcmp(class, "Audio/Sink") != 0) return;
    if (census->count < census->capacity) {
        gong_pw_sink *sink = &census->sinks[census->count];
        const char *name = spa_dict_lookup(props, PW_KEY_NODE_NAME);
        const char *description = spa_dict_lookup(props, PW_KEY_NODE_DESCRIPTION);
        const char *serial = spa_dict_lookup(props, PW_KEY_OBJECT_SERIAL);
        snprintf(sink->name, sizeof sink->name, "%s", name ? name : "");
        snprintf(sink->description, sizeof sink->description, "%s", description ? description : "");
        sink->serial = serial ? (uint32_t)strtoul(serial, NULL, 10) : 0;
    }
    census->count++;
}

static void on_core_done(void *data, uint32_t id, int seq) {
    struct sink_census *census = data;
    if (id == PW_ID_CORE && seq == census->sync) {
        census->done = 1;
        pw_thread_loop_signal(census->loop, false);
    }
}

static const struct pw_registry_events registry_events = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = on_global,
};

static const struct pw_core_events census_core_events = {
    PW_VERSION_CORE_EVENTS,
    .done = on_core_done,
};

/// Waits on the locked loop until `*flag` is set or the deadline passes.
static int wait_until(struct pw_thread_loop *loop, const int *flag, const _Atomic int *state, int64_t deadline_ns) {
    for (;;) {
        if (flag && *flag) return 0;
        if (state && atomic_load(state) != 0) return 0;
        int64_t left = deadline_ns - gong_monotonic_ns();
        if (left <= 0) return -ETIMEDOUT;
        struct timespec when;
        pw_thread_loop_get_time(loop, &when, left);
        pw_thread_loop_timed_wait_full(loop, &when);
    }
}

/// The server's sinks, on a connected core with its loop locked.
static int census_of_sinks(struct pw_thread_loop *loop, struct pw_core *core, gong_pw_sink *sinks, int capacity,
                           int64_t deadline_ns) {
    struct sink_census census = {.loop = loop, .sinks = sinks, .capacity = capacity};
    struct pw_registry *registry = pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
    if (!registry) return -ENOMEM;
    struct spa_hook registry_listener, core_listener;
    spa_zero(registry_listener);
    spa_zero(core_listener);
    pw_registry_add_listener(registry, &registry_listener, &registry_events, &census);
    pw_core_add_listener(core, &core_listener, &census_core_events, &census);
    census.sync = pw_core_sync(core, PW_ID_CORE, 0);
    int waited = wait_until(loop, &census.done, NULL, deadline_ns);
    spa_hook_remove(&core_listener);
    spa_hook_remove(&registry_listener);
    pw_proxy_destroy((struct pw_proxy *)registry);
    return waited < 0 ? waited : census.count;
}

/// A thread loop with a context connected to the server, or NULL (and the loop destroyed).
/// `realtime`: the context is PipeWire's real-time client's (client-rt.conf, as pw-play's), whose
/// module-rt raises the data thread that runs the process callback to SCHED_FIFO where the
/// system allows it (else to a raised nice value): the plain client configuration leaves it
/// at the priority of any thread, and a busy machine then delays the callback past its cycle.
static struct pw_core *connect_core(struct pw_thread_loop **loop_out, struct pw_context **context_out, int realtime) {
    pthread_once(&pw_ready, initialise_pipewire);
    struct pw_thread_loop *loop = pw_thread_loop_new("gong-pipewire", NULL);
    if (!loop) return NULL;
    struct pw_properties *properties = realtime ? pw_properties_new(PW_KEY_CONFIG_NAME, "client-rt.conf", NULL) : NULL;
    struct pw_context *context = pw_context_new(pw_thread_loop_get_loop(loop), properties, 0);
    if (!context || pw_thread_loop_start(loop) < 0) {
        if (context) pw_context_destroy(context);
        pw_thread_loop_destroy(loop);
        return NULL;
    }
    pw_thread_loop_lock(loop);
    struct pw_core *core = pw_context_connect(context, NULL, 0);
    pw_thread_loop_unlock(loop);
    if (!core) {
        pw_thread_loop_stop(loop);
        pw_context_destroy(context);
        pw_thread_loop_destroy(loop);
        return NULL;
    }
    *loop_out = loop;
    *context_out = context;
    return core;
}

static void disconnect_core(struct pw_thread_loop *loop, struct pw_context *context, struct pw_core *core) {
    pw_thread_loop_lock(loop);
    if (core) pw_core_disconnect(core);
    pw_thread_loop_unlock(loop);
    pw_thread_loop_stop(loop);
    pw_context_destroy(context);
    pw_thread_loop_destroy(loop);
}

int gong_pw_list_sinks(gong_pw_sink *sinks, int capacity, int timeout_ms) {
    struct pw_thread_loop *loop;
    struct pw_context *context;
    struct pw_core *core = connect_core(&loop, &context, 0);
    if (!core) return -EHOSTDOWN;
    pw_thread_loop_lock(loop);
    int count = census_of_sinks(loop, core, sinks, capacity, gong_monotonic_ns() + (int64_t)timeout_ms * 1000000);
    pw_thread_loop_unlock(loop);
    disconnect_core(loop, context, core);
    return count;
}

int gong_pw_server_answers(int timeout_ms) {
    gong_pw_sink ignored;
    return gong_pw_list_sinks(&ignored, 0, timeout_ms) >= 0;
}

// MARK: Opening and closing

/// GONG_PIPEWIRE_TRACE, for whoever chases an underrun or a cue heard elsewhere than gong says:
/// set, it says at the stream's end which side ran dry; set to a file's name (anything but 1),
/// every call of the data thread is written there too (gong_traced_cycle).
static const char *trace_variable(void) { return getenv("GONG_PIPEWIRE_TRACE"); }

static const char *trace_file(void) {
    const char *trace = trace_variable();
    return trace && *trace && strcmp(trace, "1") != 0 ? trace : NULL;
}

int gong_pw_open(const char *target, const char *client_name, uint32_t rate, uint32_t channels,
                 uint32_t latency_frames, uint32_t buffer_frames, int timeout_ms, gong_pw_stream **out, char *error,
                 size_t error_size) {
    *out = NULL;
    if (rate == 0 || channels == 0 || channels > SPA_AUDIO_MAX_CHANNELS || buffer_frames == 0) {
        gong_say(error, error_size, "the stream's shape is out of range");
        return -EINVAL;
    }
    struct gong_pw_stream *self = calloc(1, sizeof *self);
    if (!self) return -ENOMEM;
    self->rate = rate;
    self->channels = channels;
    self->frame_bytes = channels * sizeof(float);
    int result = gong_handoff_init(&self->handoff, buffer_frames, self->frame_bytes);
    if (result < 0) {
        free(self);
        gong_say(error, error_size, "out of memory");
        return result;
    }
    int64_t deadline = gong_monotonic_ns() + (int64_t)timeout_ms * 1000000;

    self->core = connect_core(&self->loop, &self->context, 1);
    if (!self->core) {
        gong_say(error, error_size, "no PipeWire server answers");
        gong_handoff_destroy(&self->handoff);
        free(self);
        return -EHOSTDOWN;
    }
    // From here on, gong_pw_close frees it.
    gong_cycle_trace_open(&self->trace, trace_file(), rate);
    pw_thread_loop_lock(self->loop);
    pw_core_add_listener(self->core, &self->core_listener, &core_events, self);

    // A named sink must exist: PipeWire links a stream whose target it lacks to the default sink
    // instead, which is not what was asked for.
    if (target && *target) {
        gong_pw_sink sinks[64];
        int count = census_of_sinks(self->loop, self->core, sinks, 64, deadline);
        int found = 0;
        for (int index = 0; index < count && index < 64; index++) {
            char serial[16];
            snprintf(serial, sizeof serial, "%u", sinks[index].serial);
            if (strcmp(sinks[index].name, target) == 0 || strcmp(serial, target) == 0) found = 1;
        }
        if (!found) {
            pw_thread_loop_unlock(self->loop);
            gong_say(error, error_size, count < 0 ? "the server did not list its sinks in time" : "no such sink");
            gong_pw_close(self);
            return count < 0 ? -ETIMEDOUT : -ENOENT;
        }
    }

    char latency[64], rate_text[32];
    snprintf(latency, sizeof latency, "%u/%u", latency_frames, rate);
    snprintf(rate_text, sizeof rate_text, "1/%u", rate);
    struct pw_properties *props = pw_properties_new(
        PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Playback", PW_KEY_MEDIA_ROLE, "Music",
        PW_KEY_APP_NAME, client_name, PW_KEY_NODE_NAME, client_name, PW_KEY_NODE_LATENCY, latency,
        PW_KEY_NODE_RATE, rate_text, NULL);
    if (target && *target) pw_properties_set(props, PW_KEY_TARGET_OBJECT, target);
    self->stream = pw_stream_new(self->core, client_name, props);
    if (!self->stream) {
        pw_thread_loop_unlock(self->loop);
        gong_say(error, error_size, "PipeWire refused a new stream");
        gong_pw_close(self);
        return -ENOMEM;
    }
    pw_stream_add_listener(self->stream, &self->stream_listener, &stream_events, self);

    uint8_t pod_bytes[1024];
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(pod_bytes, sizeof pod_bytes);
    struct spa_audio_info_raw info = {.format = SPA_AUDIO_FORMAT_F32, .rate = rate, .channels = channels};
    if (channels == 2) {
        info.position[0] = SPA_AUDIO_CHANNEL_FL;
        info.position[1] = SPA_AUDIO_CHANNEL_FR;
    } else if (channels == 1) {
        info.position[0] = SPA_AUDIO_CHANNEL_MONO;
    } else {
        info.flags = SPA_AUDIO_FLAG_UNPOSITIONED;
    }
    const struct spa_pod *params[1] = {spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &info)};
    // A sink named is the one wanted: if it goes, the stream is not moved elsewhere (the session
    // manager would move it to the default sink, on another clock) but lost, and gong's policy
    // for a lost device takes over. The default sink may change under a stream as on any desktop.
    enum pw_stream_flags flags = PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS;
    if (target && *target) flags |= PW_STREAM_FLAG_DONT_RECONNECT;
    int connected = pw_stream_connect(self->stream, PW_DIRECTION_OUTPUT, PW_ID_ANY, flags, params, 1);
    if (connected < 0) {
        pw_thread_loop_unlock(self->loop);
        snprintf(error, error_size, "the stream did not connect: %s", spa_strerror(connected));
        gong_pw_close(self);
        return connected;
    }
    int waited = wait_until(self->loop, NULL, &self->linked, deadline);
    pw_thread_loop_unlock(self->loop);
    if (waited < 0 || atomic_load(&self->linked) < 0) {
        if (waited < 0)
            gong_say(error, error_size, "nothing linked the stream to a sink in time (is the session manager running?)");
        else
            gong_say(error, error_size, self->error);
        gong_pw_close(self);
        return waited < 0 ? -ETIMEDOUT : -ENODEV;
    }
    *out = self;
    return 0;
}

void gong_pw_close(gong_pw_stream *self) {
    if (!self) return;
    const char *trace = trace_variable();
    if (trace && *trace) {
        gong_handoff_counters counters;
        gong_handoff_counters_read(&self->handoff, &counters);
        fprintf(stderr,
                "gong: PipeWire stream closed: ring ran short %llu times (%llu frames of silence), "
                "graph ran without it %llu times (%llu frames), largest quantum %u\n",
                (unsigned long long)counters.ring_underruns, (unsigned long long)counters.ring_silent_frames,
                (unsigned long long)counters.missed_cycles, (unsigned long long)counters.missed_frames,
                atomic_load(&self->largest_quantum));
    }
    if (self->loop) {
        pw_thread_loop_lock(self->loop);
        if (self->stream) {
            spa_hook_remove(&self->stream_listener);
            pw_stream_destroy(self->stream);
            self->stream = NULL;
        }
        if (self->core) {
            spa_hook_remove(&self->core_listener);
            pw_core_disconnect(self->core);
            self->core = NULL;
        }
        pw_thread_loop_unlock(self->loop);
        pw_thread_loop_stop(self->loop);
        pw_context_destroy(self->context);
        pw_thread_loop_destroy(self->loop);
    }
    gong_handoff_destroy(&self->handoff);
    gong_cycle_trace_close(&self->trace, trace_file());
    free(self);
}

// MARK: gong's side

gong_handoff *gong_pw_handoff(gong_pw_stream *self) { return &self->handoff; }

#include "gong_handoff_callback.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <time.h>

int gong_handoff_init(struct gong_handoff *handoff, uint32_t buffer_frames, uint32_t frame_bytes) {
    handoff->buffer_frames = buffer_frames;
    atomic_store(&handoff->loss_frame, UINT64_MAX);
    handoff->room_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (handoff->room_fd < 0) return -errno;
    int result = gong_frame_ring_init(&handoff->ring, buffer_frames, frame_bytes);
    if (result < 0) {
        close(handoff->room_fd);
        handoff->room_fd = -1;
    }
    return result;
}

void gong_handoff_destroy(struct gong_handoff *handoff) {
    gong_frame_ring_destroy(&handoff->ring);
    if (handoff->room_fd >= 0) close(handoff->room_fd);
    handoff->room_fd = -1;
}

uint32_t gong_handoff_writable(gong_handoff *handoff) {
    uint32_t filled = gong_frame_ring_filled(&handoff->ring);
    return filled >= handoff->buffer_frames ? 0 : handoff->buffer_frames - filled;
}

uint32_t gong_handoff_write(gong_handoff *handoff, const float *frames, uint32_t count) {
    return gong_frame_ring_write(&handoff->ring, frames, count, handoff->buffer_frames);
}

uint32_t gong_handoff_unclaimed(gong_handoff *handoff) { return gong_frame_ring_unclaimed(&handoff->ring); }

uint32_t gong_handoff_take_back(gong_handoff *handoff, uint32_t frames) {
    return gong_frame_ring_take_back(&handoff->ring, frames);
}

uint64_t gong_handoff_take_loss_frame(gong_handoff *handoff) {
    return atomic_exchange_explicit(&handoff->loss_frame, UINT64_MAX, memory_order_acquire);
}

uint32_t gong_handoff_filled(gong_handoff *handoff) { return gong_frame_ring_filled(&handoff->ring); }

void gong_handoff_drain_begins(gong_handoff *handoff) { atomic_store(&handoff->draining, 1); }

void gong_handoff_drain_ends(gong_handoff *handoff) { atomic_store(&handoff->draining, 0); }

int gong_handoff_state(gong_handoff *handoff) { return atomic_load(&handoff->state) < 0 ? -ENODEV : 0; }

/// Losses the callback counted so far: underruns of the ring and cycles missed.
static uint64_t losses(gong_handoff *handoff) {
    return atomic_load_explicit(&handoff->ring_underruns, memory_order_acquire)
           + atomic_load_explicit(&handoff->missed_cycles, memory_order_acquire);
}

int gong_handoff_wait(gong_handoff *handoff, uint32_t frames, int wake_fd, int timeout_ms) {
    int64_t deadline = gong_monotonic_ns() + (int64_t)timeout_ms * 1000000;
    uint64_t counted = losses(handoff);
    for (;;) {
        if (atomic_load(&handoff->state) < 0) return -ENODEV;
        if (losses(handoff) != counted) return 3;
        // Ask to be woken first, then look: room freed in between still rings.
        atomic_store_explicit(&handoff->wake_frames, frames ? frames : 1, memory_order_release);
        if (gong_handoff_writable(handoff) >= frames) {
            atomic_store_explicit(&handoff->wake_frames, 0, memory_order_relaxed);
            return 1;
        }
        int64_t left = deadline - gong_monotonic_ns();
        if (left <= 0) {
            atomic_store_explicit(&handoff->wake_frames, 0, memory_order_relaxed);
            return 0;
        }
        struct pollfd watched[2] = {{.fd = handoff->room_fd, .events = POLLIN}, {.fd = wake_fd, .events = POLLIN}};
        int ready = poll(watched, wake_fd >= 0 ? 2 : 1, (int)((left + 999999) / 1000000));
        if (ready < 0 && errno != EINTR) return -errno;
        uint64_t count;
        if (watched[0].revents & POLLIN) {
            ssize_t ignored = read(handoff->room_fd, &count, sizeof count);
            (void)ignored;
        }
        if (wake_fd >= 0 && (watched[1].revents & POLLIN)) {
            atomic_store_explicit(&handoff->wake_frames, 0, memory_order_relaxed);
            char drained[64];
            while (read(wake_fd, drained, sizeof drained) > 0) {
            }
            return 2;
        }
    }
}

void gong_handoff_timing_read(gong_handoff *handoff, gong_handoff_timing *timing) {
    for (;;) {
        uint64_t before = atomic_load_explicit(&handoff->timing_sequence, memory_order_acquire);
        if (before & 1) continue;  // the callback is writing: a few stores, done at once
        timing->cycles = atomic_load_explicit(&handoff->timing_cycles, memory_order_relaxed);
        timing->now_ns = atomic_load_explicit(&handoff->timing_now, memory_order_relaxed);
        timing->heard_ns = atomic_load_explicit(&handoff->timing_heard, memory_order_relaxed);
        timing->next_frame = atomic_load_explicit(&handoff->timing_next_frame, memory_order_relaxed);
        timing->frames = atomic_load_explicit(&handoff->timing_frames, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&handoff->timing_sequence, memory_order_relaxed) == before) return;
    }
}

// Acquire: a loss seen counted here has its frame in `loss_frame` (gong_handoff_take_loss_frame).
void gong_handoff_counters_read(gong_handoff *handoff, gong_handoff_counters *counters) {
    counters->ring_underruns = atomic_load_explicit(&handoff->ring_underruns, memory_order_acquire);
    counters->ring_silent_frames = atomic_load_explicit(&handoff->ring_silent_frames, memory_order_acquire);
    counters->missed_cycles = atomic_load_explicit(&handoff->missed_cycles, memory_order_acquire);
    counters->missed_frames = atomic_load_explicit(&handoff->missed_frames, memory_order_acquire);
    counters->clock_stops = atomic_load_explicit(&handoff->clock_stops, memory_order_acquire);
    counters->clock_stopped_ns = atomic_load_explicit(&handoff->clock_stopped_ns, memory_order_acquire);
}

uint32_t gong_cycle_skips_step(gong_cycle_skips *skips, uint32_t position, uint32_t frames, int64_t woke_ns,
                               uint32_t rate) {
    uint32_t told = 0;
    int calm = 0;
    skips->repeated = skips->jumped = 0;
    uint32_t first = skips->handed;
    if (skips->started && rate > 0) {
        // The last call's period in nanoseconds (a cycle of at most 2^32 frames: no overflow).
        int64_t period = (int64_t)skips->last_frames * 1000000000LL / rate;
        int64_t gap = woke_ns - skips->last_woke_ns;
        int on_period = 2 * gap >= period && 2 * gap <= 3 * period;
        // A call a period after a late one may itself be late, and read the next cycle's
        // position: only the second of two calls on their periods waited for its own cycle.
        calm = on_period && skips->last_on_period;
        skips->last_on_period = on_period;
        // `in_doubt` is still the last call's here.
        skips->repeated = position == skips->previous && skips->in_doubt;
        // Played again: this buffer's frames are the last call's.
        if (skips->repeated && skips->replays) first -= skips->last_frames;
        uint32_t behind = position - first;
        if (skips->settled) {
            // Differences of counts modulo 2^32 (a stream's losses stay far below 2^31 frames
            // between two calm calls).
            int32_t more = (int32_t)(behind - skips->behind);
            if (more > 0 && !skips->ahead) skips->jumped = skips->ahead = 1;
            if (calm) {
                if (more > 0) told = (uint32_t)more;
                skips->behind = behind;
                skips->ahead = 0;
            }
        } else if (calm) {
            skips->behind = behind;
            skips->settled = 1;
        }
    }
    if (!(skips->repeated && skips->replays)) skips->handed += frames;
    skips->in_doubt = !calm;
    skips->started = 1;
    skips->previous = position;
    skips->last_frames = frames;
    skips->last_woke_ns = woke_ns;
    return told;
}

int gong_clock_prediction_step(gong_clock_prediction *prediction, uint32_t current_frames, uint64_t current_usecs,
                               uint64_t next_usecs, uint32_t frames, uint32_t rate, int64_t woke_usecs) {
    int restarted = 0;
    // Where the server put this cycle's start: its prediction, when one is carried this far.
    int64_t start = (int64_t)current_usecs;
    if (prediction->wakeup_usecs && rate > 0) {
        // Frame times wrap at 2^32; their difference does not. As microseconds it stays far
        // inside 64 bits (2^31 frames times 10^6).
        int64_t between = (int32_t)(current_frames - prediction->frames);
        int64_t reach = (int64_t)rate * GONG_CLOCK_PREDICTION_REACH_SECONDS;
        if (between >= -reach && between <= reach) {
            int64_t carried = between * 1000000 / (int64_t)rate;
            int64_t predicted = (int64_t)prediction->wakeup_usecs + carried;
            int64_t slack = GONG_CLOCK_PREDICTION_FLOOR_USECS + (carried < 0 ? -carried : carried) / 64;
            int64_t period = (int64_t)frames * 1000000 / (int64_t)rate;
            // Both clocks count microseconds from about boot: far inside 63 bits.
            int64_t woke_later = woke_usecs - predicted - prediction->woke_behind_usecs;
            restarted = (int64_t)current_usecs > predicted + slack || woke_later > period + slack;
            start = predicted;
        }
    }
    prediction->wakeup_usecs = next_usecs;
    prediction->frames = current_frames + frames;
    prediction->woke_behind_usecs = woke_usecs - start;
    return restarted;
}

/// Frames as nanoseconds at `rate`, in two parts so that no count of frames overflows.
static int64_t frames_ns(uint64_t frames, uint32_t rate) {
    return (int64_t)(frames / rate) * 1000000000LL + (int64_t)((frames % rate) * 1000000000ULL / rate);
}

void gong_clock_origin_init(gong_clock_origin *origin) {
    memset(origin, 0, sizeof *origin);
    origin->earliest_now = origin->earliest_before = INT64_MAX;
}

// The cycle that saw the restart or the jump may have woken late itself, so its own wake-up may
// overstate the stop: the stop is told once GONG_CLOCK_ORIGIN_STOP_CYCLES cycles have placed it.
uint64_t gong_clock_origin_step(gong_clock_origin *self, int64_t now_ns, uint32_t frame_time, uint32_t rate,
                                int measure) {
    if (rate == 0) return 0;
    if (self->position_known)
        self->position += (uint64_t)(int64_t)(int32_t)(frame_time - (uint32_t)self->position);
    else
        self->position = frame_time, self->position_known = 1;
    int64_t origin = now_ns - frames_ns(self->position, rate);
    int64_t earliest = self->earliest_now < self->earliest_before ? self->earliest_now : self->earliest_before;
    if (measure && !self->stop_pending && earliest != INT64_MAX) {
        self->stop_pending = 1;
        self->origin_before_stop = earliest;
        self->earliest_since_stop = INT64_MAX;
        self->stop_cycles_left = GONG_CLOCK_ORIGIN_STOP_CYCLES;
    }
    if (self->stop_pending) {
        if (origin < self->earliest_since_stop) self->earliest_since_stop = origin;
        if (--self->stop_cycles_left > 0) return 0;
        self->stop_pending = 0;
        int64_t stopped = self->earliest_since_stop - self->origin_before_stop;
        self->earliest_now = self->earliest_before = self->earliest_since_stop;
        self->window_left = GONG_CLOCK_ORIGIN_WINDOW_CYCLES;
        return stopped > GONG_CLOCK_ORIGIN_STOP_FLOOR_NS ? (uint64_t)stopped : 0;
    }
    if (origin < self->earliest_now) self->earliest_now = origin;
    if (self->window_left == 0 || --self->window_left == 0) {
        self->earliest_before = self->earliest_now;
        self->earliest_now = INT64_MAX;
        self->window_left = GONG_CLOCK_ORIGIN_WINDOW_CYCLES;
    }
    return 0;
}

gong_handoff *gong_handoff_new(uint32_t buffer_frames, uint32_t frame_bytes) {
    // The ring's indices are aligned to cache lines: so is the allocation (its size a multiple).
    struct gong_handoff *handoff = aligned_alloc(64, sizeof *handoff);
    if (!handoff) return NULL;
    memset(handoff, 0, sizeof *handoff);
    if (gong_handoff_init(handoff, buffer_frames, frame_bytes) < 0) {
        free(handoff);
        return NULL;
    }
    return handoff;
}

void gong_handoff_free(gong_handoff *handoff) {
    if (!handoff) return;
    gong_handoff_destroy(handoff);
    free(handoff);
}

uint32_t gong_handoff_run_cycle(gong_handoff *handoff, uint32_t missed, void *destination, uint32_t frames) {
    if (missed) gong_handoff_missed(handoff, missed, handoff->consumed);
    uint32_t got = gong_handoff_read(handoff, destination, frames);
    gong_handoff_short(handoff, frames - got);
    gong_handoff_cycle_done(handoff, gong_monotonic_ns(), gong_monotonic_ns(), frames);
    return got;
}

uint64_t gong_handoff_claimed(gong_handoff *handoff) { return handoff->consumed; }

void gong_handoff_miss(gong_handoff *handoff, uint32_t frames, uint64_t from) {
    gong_handoff_missed(handoff, frames, from);
}

void gong_cycle_trace_open(gong_cycle_trace *trace, const char *path, uint32_t rate) {
    *trace = (gong_cycle_trace){.rate = rate};
    if (path && *path) trace->cycles = calloc(GONG_CYCLE_TRACE_CYCLES, sizeof *trace->cycles);
}

void gong_cycle_trace_close(gong_cycle_trace *trace, const char *path) {
    FILE *file = trace->cycles && path && *path ? fopen(path, "w") : NULL;
    if (file) {
        fprintf(file, "# position frames woke_ns ring_frame onset missed_told in_doubt repeated played_again\n");
        uint64_t first = trace->count > GONG_CYCLE_TRACE_CYCLES ? trace->count - GONG_CYCLE_TRACE_CYCLES : 0;
        for (uint64_t index = first; index < trace->count; index++) {
            const gong_traced_cycle *cycle = &trace->cycles[index % GONG_CYCLE_TRACE_CYCLES];
            fprintf(file, "%u %u %lld %llu %d %u %u %u %u\n", cycle->position, cycle->frames,
                    (long long)cycle->woke_ns, (unsigned long long)cycle->ring_frame, cycle->onset,
                    cycle->missed_told, cycle->in_doubt, cycle->repeated, cycle->played_again);
        }
        fclose(file);
    }
    free(trace->cycles);
    trace->cycles = NULL;
}

// The callbacks' side of gong_handoff.h, for gong_pipewire.c and gong_jack.c (not seen by
// Swift): the struct itself, which each stream embeds, and what a real-time callback calls. None
// of these allocate, lock or wait; the doorbell is an eventfd, written without blocking.
#ifndef GONG_HANDOFF_CALLBACK_H
#define GONG_HANDOFF_CALLBACK_H

#include "gong_frame_ring.h"
#include "gong_handoff.h"

#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

/// CLOCK_MONOTONIC in nanoseconds: the clock every time gong reports is on.
static inline int64_t gong_monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/// Puts a sentence in the caller's error buffer, when it gave one.
static inline void gong_say(char *error, size_t size, const char *sentence) {
    if (error && size) snprintf(error, size, "%s", sentence);
}

struct gong_handoff {
    gong_frame_ring ring;
    /// What gong keeps ahead: the ring holds at most this many frames.
    uint32_t buffer_frames;
    /// Rung when `wake_frames` can be written, and when the stream is lost.
    int room_fd;
    /// Frames of room gong waits for; 0: nobody waits.
    _Atomic uint32_t wake_frames;
    /// 0 while the stream plays, -1 once it never will again.
    _Atomic int state;
    /// Set once gong has written its last frame.
    _Atomic int draining;

    // The callback's own.
    uint64_t consumed;
    int playing;

    _Atomic uint64_t ring_underruns, ring_silent_frames, missed_cycles, missed_frames, clock_stops, clock_stopped_ns;
    /// The ring frame (a count of frames claimed since the stream began) the earliest loss not
    /// yet taken by gong landed before: from it on, every frame is heard late by the loss.
    /// UINT64_MAX: none. Set before the loss is counted, so gong, having seen the count, finds it.
    _Atomic uint64_t loss_frame;

    /// Seqlock: odd while the callback writes the timing.
    _Atomic uint64_t timing_sequence;
    _Atomic uint64_t timing_cycles, timing_next_frame;
    _Atomic int64_t timing_now, timing_heard;
    _Atomic uint32_t timing_frames;
};

/// Allocates the ring and the doorbell: 0, or a negative errno.
int gong_handoff_init(struct gong_handoff *handoff, uint32_t buffer_frames, uint32_t frame_bytes);
void gong_handoff_destroy(struct gong_handoff *handoff);

static inline void gong_handoff_ring(struct gong_handoff *handoff) {
    uint64_t one = 1;
    ssize_t ignored = write(handoff->room_fd, &one, sizeof one);
    (void)ignored;
}

/// Callback: claims up to `frames` frames into `destination`; returns how many.
static inline uint32_t gong_handoff_read(struct gong_handoff *handoff, void *destination, uint32_t frames) {
    uint32_t got = gong_frame_ring_read(&handoff->ring, destination, frames);
    if (got > 0) handoff->playing = 1;
    handoff->consumed += got;
    return got;
}

/// Callback: a loss lands before ring frame `frame`. Only the earliest since gong last took one
/// is kept (frames claimed only grow, so a later loss's frame is never earlier): a cue between
/// two losses gong takes in together is said late by both, never by less than it was.
static inline void gong_handoff_loss_at(struct gong_handoff *handoff, uint64_t frame) {
    uint64_t none = UINT64_MAX;
    atomic_compare_exchange_strong_explicit(&handoff->loss_frame, &none, frame, memory_order_relaxed,
                                            memory_order_relaxed);
}

/// Callback: `frames` of silence were played this cycle for want of frames in the ring (counted
/// once playback began, and not once gong has written its last frame). gong is woken to take the
/// loss in (gong_handoff_wait). Every frame from the next one claimed is heard that much late.
static inline void gong_handoff_short(struct gong_handoff *handoff, uint32_t frames) {
    if (!frames || !handoff->playing || atomic_load_explicit(&handoff->draining, memory_order_relaxed)) return;
    gong_handoff_loss_at(handoff, handoff->consumed);
    atomic_fetch_add_explicit(&handoff->ring_silent_frames, frames, memory_order_relaxed);
    atomic_fetch_add_explicit(&handoff->ring_underruns, 1, memory_order_release);
    gong_handoff_ring(handoff);
}

/// Callback: the server ran `frames` frames of cycles without it (counted once playback began),
/// before the cycle that claimed ring frame `from` on (a jump is told a cycle after it is seen,
/// gong_cycle_skips, so that cycle's frames were heard after the loss too). Every frame from
/// there is heard that much late: gong is woken at once to take back what it still can and
/// render it again on its time (gong_handoff_wait), and to say late what it no longer can. Left
/// to its next wait for room, it learned of the loss up to a period of its own later, and a cue
/// claimed in between was heard late by the loss.
/// A jump before ring frame 0 lost nothing of gong's: the stream's first frame is heard that much
/// later, and the first cycle's timing places it there. Counted, it moved the session on as well,
/// so a bell whose process was stopped as its session started was rung early by the stop.
static inline void gong_handoff_missed(struct gong_handoff *handoff, uint64_t frames, uint64_t from) {
    if (!frames || !handoff->playing || from == 0) return;
    gong_handoff_loss_at(handoff, from);
    atomic_fetch_add_explicit(&handoff->missed_frames, frames, memory_order_relaxed);
    atomic_fetch_add_explicit(&handoff->missed_cycles, 1, memory_order_release);
    gong_handoff_ring(handoff);
}

/// Callback: the server's clock stopped for `nanoseconds` before this cycle, its frame count with
/// it (counted once playback began).
static inline void gong_handoff_clock_stopped(struct gong_handoff *handoff, uint64_t nanoseconds) {
    if (!nanoseconds || !handoff->playing) return;
    atomic_fetch_add_explicit(&handoff->clock_stops, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&handoff->clock_stopped_ns, nanoseconds, memory_order_relaxed);
}

/// Callback, at the end of a cycle whose timing is in doubt: the doorbell rung as after any
/// cycle, the last cycle's timing left to stand.
static inline void gong_handoff_cycle_untimed(struct gong_handoff *handoff) {
    uint32_t wanted = atomic_load_explicit(&handoff->wake_frames, memory_order_acquire);
    if (wanted && gong_handoff_writable(handoff) >= wanted) {
        atomic_store_explicit(&handoff->wake_frames, 0, memory_order_relaxed);
        gong_handoff_ring(handoff);
    }
}

/// Callback, at the end of a cycle that played `frames`: the ring's next frame is heard at
/// `heard_ns`, as known at `now_ns`; and the doorbell rung if gong waits for room there is now.
static inline void gong_handoff_cycle_done(struct gong_handoff *handoff, int64_t now_ns, int64_t heard_ns,
                                           uint32_t frames) {
    uint64_t sequence = atomic_load_explicit(&handoff->timing_sequence, memory_order_relaxed);
    atomic_store_explicit(&handoff->timing_sequence, sequence + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&handoff->timing_cycles,
                          atomic_load_explicit(&handoff->timing_cycles, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    atomic_store_explicit(&handoff->timing_now, now_ns, memory_order_relaxed);
    atomic_store_explicit(&handoff->timing_heard, heard_ns, memory_order_relaxed);
    atomic_store_explicit(&handoff->timing_next_frame, handoff->consumed, memory_order_relaxed);
    atomic_store_explicit(&handoff->timing_frames, frames, memory_order_relaxed);
    atomic_store_explicit(&handoff->timing_sequence, sequence + 2, memory_order_release);
    gong_handoff_cycle_untimed(handoff);
}

/// The most calls a cycle trace keeps (the last ones): 7 minutes of 256-frame cycles at 48 kHz.
#define GONG_CYCLE_TRACE_CYCLES 80000

/// One call of a callback as its stream's cycle trace keeps it (GONG_JACK_TRACE,
/// GONG_PIPEWIRE_TRACE): the server's position (JACK's frame time, PipeWire's ticks as frames) and
/// the call's wake-up, the ring frame its buffer began with, and what gong made of it. For whoever
/// chases a cue the server's clock places elsewhere than gong's account: a tap's recording of the
/// same cycles, by the same positions, says which side.
typedef struct gong_traced_cycle {
    int64_t woke_ns;
    uint64_t ring_frame;
    uint32_t position, frames, missed_told;
    /// Where in the buffer channel 0 sounded after half a second of silence (an onset); -1: not.
    int32_t onset;
    uint8_t in_doubt, repeated, played_again;
} gong_traced_cycle;

/// A stream's cycle trace: allocated at open when asked for, written by the callback only (no
/// allocation, no lock), read once the callback runs no more.
typedef struct gong_cycle_trace {
    gong_traced_cycle *cycles;
    uint64_t count;
    uint32_t quiet_frames, rate;
} gong_cycle_trace;

/// Allocates the trace when `path` names a file (NULL or empty: no trace, `cycles` stays NULL).
void gong_cycle_trace_open(gong_cycle_trace *trace, const char *path, uint32_t rate);
/// Writes the calls kept, one line each, to `path`, and frees the trace.
void gong_cycle_trace_close(gong_cycle_trace *trace, const char *path);

/// Callback: keeps the call `cycle`, its onset found in `frames` frames of channel 0 at
/// `channel0`, `stride` samples apart.
static inline void gong_cycle_trace_keep(gong_cycle_trace *trace, const float *channel0, uint32_t stride,
                                         uint32_t frames, gong_traced_cycle cycle) {
    if (!trace->cycles) return;
    cycle.onset = -1;
    for (uint32_t frame = 0; frame < frames; frame++) {
        float sample = channel0[(size_t)frame * stride];
        if (sample > 0.02f || sample < -0.02f) {
            if (cycle.onset < 0 && trace->quiet_frames >= trace->rate / 2) cycle.onset = (int32_t)frame;
            trace->quiet_frames = 0;
        } else {
            trace->quiet_frames++;
        }
    }
    trace->cycles[trace->count++ % GONG_CYCLE_TRACE_CYCLES] = cycle;
}

/// Any thread: the stream is gone for good; whoever waits learns of it at once.
static inline void gong_handoff_lost(struct gong_handoff *handoff) {
    atomic_store(&handoff->state, -1);
    gong_handoff_ring(handoff);
}

#endif

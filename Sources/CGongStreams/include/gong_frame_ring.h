// A single-producer, single-consumer ring of audio frames that a real-time callback reads from
// and gong's audio thread writes to, with take-back: the producer may replace frames the
// consumer has not yet claimed.
//
// Why it is in C: the consumer is a sound server's process callback (PipeWire's data thread,
// JACK's process thread), which must never allocate, lock or wait; plain C with C11 atomics
// promises that where Swift's runtime cannot be held to it from a foreign thread.
//
// Positions are frame counts modulo 2^32 (the capacity is a power of two, so a slot is
// `position & (capacity - 1)` however often they wrap: 24 h at 48 kHz wraps once, harmlessly).
// The write position and the consumer's claim share one 64-bit word, so a take-back and a claim
// cannot cross: whichever comes second sees the other. The consumer then copies the frames it
// claimed and only after that releases them, so the producer never writes over a slot still
// being read.
#ifndef GONG_FRAME_RING_H
#define GONG_FRAME_RING_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

typedef struct gong_frame_ring {
    /// (write position << 32) | claimed position.
    _Alignas(64) _Atomic uint64_t state;
    /// Frames the consumer has finished copying out: slots before it may be written again.
    _Alignas(64) _Atomic uint32_t released;
    _Alignas(64) uint32_t capacity;
    uint32_t frame_bytes;
    uint8_t *data;
} gong_frame_ring;

static inline uint32_t gong_ring_write_pos(uint64_t state) { return (uint32_t)(state >> 32); }
static inline uint32_t gong_ring_claim_pos(uint64_t state) { return (uint32_t)state; }
static inline uint64_t gong_ring_state(uint32_t write, uint32_t claimed) {
    return ((uint64_t)write << 32) | claimed;
}

/// Frames written and not yet released by the consumer (producer side).
static inline uint32_t gong_frame_ring_filled(gong_frame_ring *ring) {
    uint64_t state = atomic_load_explicit(&ring->state, memory_order_acquire);
    return gong_ring_write_pos(state) - atomic_load_explicit(&ring->released, memory_order_acquire);
}

/// Frames written and not yet claimed by the consumer: what a take-back can still reach.
static inline uint32_t gong_frame_ring_unclaimed(gong_frame_ring *ring) {
    uint64_t state = atomic_load_explicit(&ring->state, memory_order_acquire);
    return gong_ring_write_pos(state) - gong_ring_claim_pos(state);
}

/// Producer: copies up to `frames` frames in, at most `limit - filled`; returns how many.
static inline uint32_t gong_frame_ring_write(gong_frame_ring *ring, const void *source, uint32_t frames,
                                             uint32_t limit) {
    uint64_t state = atomic_load_explicit(&ring->state, memory_order_acquire);
    uint32_t write = gong_ring_write_pos(state);
    uint32_t filled = write - atomic_load_explicit(&ring->released, memory_order_acquire);
    if (limit > ring->capacity) limit = ring->capacity;
    uint32_t room = filled >= limit ? 0 : limit - filled;
    uint32_t count = frames < room ? frames : room;
    const uint8_t *bytes = (const uint8_t *)source;
    uint32_t done = 0;
    while (done < count) {
        uint32_t slot = (write + done) & (ring->capacity - 1);
        uint32_t run = ring->capacity - slot;
        if (run > count - done) run = count - done;
        memcpy(ring->data + (size_t)slot * ring->frame_bytes, bytes + (size_t)done * ring->frame_bytes,
               (size_t)run * ring->frame_bytes);
        done += run;
    }
    // Publish the new write position; the consumer may have claimed meanwhile (only the claim
    // half changes under us).
    for (;;) {
        uint64_t next = gong_ring_state(write + count, gong_ring_claim_pos(state));
        if (atomic_compare_exchange_weak_explicit(&ring->state, &state, next, memory_order_acq_rel,
                                                  memory_order_acquire))
            break;
    }
    return count;
}

/// Producer: takes back the last `frames` frames written, if the consumer has claimed none of
/// them; returns `frames` or 0.
static inline uint32_t gong_frame_ring_take_back(gong_frame_ring *ring, uint32_t frames) {
    uint64_t state = atomic_load_explicit(&ring->state, memory_order_acquire);
    for (;;) {
        uint32_t write = gong_ring_write_pos(state), claimed = gong_ring_claim_pos(state);
        if (frames == 0 || write - claimed < frames) return 0;
        uint64_t next = gong_ring_state(write - frames, claimed);
        if (atomic_compare_exchange_weak_explicit(&ring->state, &state, next, memory_order_acq_rel,
                                                  memory_order_acquire))
            return frames;
    }
}

/// Consumer: claims up to `frames` frames, copies them to `destination`, releases them;
/// returns how many. Lock-free: a claim retries only when the producer published meanwhile.
static inline uint32_t gong_frame_ring_read(gong_frame_ring *ring, void *destination, uint32_t frames) {
    uint64_t state = atomic_load_explicit(&ring->state, memory_order_acquire);
    uint32_t claimed, count;
    for (;;) {
        uint32_t write = gong_ring_write_pos(state);
        claimed = gong_ring_claim_pos(state);
        uint32_t available = write - claimed;
        count = frames < available ? frames : available;
        if (count == 0) return 0;
        uint64_t next = gong_ring_state(write, claimed + count);
        if (atomic_compare_exchange_weak_explicit(&ring->state, &state, next, memory_order_acq_rel,
                                                  memory_order_acquire))
            break;
    }
    uint8_t *bytes = (uint8_t *)destination;
    uint32_t done = 0;
    while (done < count) {
        uint32_t slot = (claimed + done) & (ring->capacity - 1);
        uint32_t run = ring->capacity - slot;
        if (run > count - done) run = count - done;
        memcpy(bytes + (size_t)done * ring->frame_bytes, ring->data + (size_t)slot * ring->frame_bytes,
               (size_t)run * ring->frame_bytes);
        done += run;
    }
    atomic_store_explicit(&ring->released, claimed + count, memory_order_release);
    return count;
}

/// Allocates the slots: at least `frames` of them, a power of two. 0, or -ENOMEM / -EINVAL.
int gong_frame_ring_init(gong_frame_ring *ring, uint32_t frames, uint32_t frame_bytes);
void gong_frame_ring_destroy(gong_frame_ring *ring);
/// A ring of its own allocation (for callers that cannot hold the struct, such as Swift): NULL
/// when out of memory or out of range.
gong_frame_ring *gong_frame_ring_new(uint32_t frames, uint32_t frame_bytes);
void gong_frame_ring_free(gong_frame_ring *ring);

#endif

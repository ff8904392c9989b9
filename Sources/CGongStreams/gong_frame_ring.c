#include "gong_frame_ring.h"

#include <errno.h>
#include <stdlib.h>

int gong_frame_ring_init(gong_frame_ring *ring, uint32_t frames, uint32_t frame_bytes) {
    if (frames == 0 || frames > (1u << 30) || frame_bytes == 0) return -EINVAL;
    uint32_t capacity = 1;
    while (capacity < frames) capacity <<= 1;
    ring->data = calloc(capacity, frame_bytes);
    if (!ring->data) return -ENOMEM;
    ring->capacity = capacity;
    ring->frame_bytes = frame_bytes;
    atomic_init(&ring->state, 0);
    atomic_init(&ring->released, 0);
    return 0;
}

void gong_frame_ring_destroy(gong_frame_ring *ring) {
    free(ring->data);
    ring->data = NULL;
}

gong_frame_ring *gong_frame_ring_new(uint32_t frames, uint32_t frame_bytes) {
    gong_frame_ring *ring = aligned_alloc(64, sizeof *ring);
    if (!ring) return NULL;
    if (gong_frame_ring_init(ring, frames, frame_bytes) < 0) {
        free(ring);
        return NULL;
    }
    return ring;
}

void gong_frame_ring_free(gong_frame_ring *ring) {
    if (!ring) return;
    gong_frame_ring_destroy(ring);
    free(ring);
}

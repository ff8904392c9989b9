// gong's PipeWire stream: a pw_stream on the graph whose process callback, on PipeWire's
// real-time data thread, copies out what gong's audio thread handed off (gong_handoff.h) and
// records when it will be heard (pw_time). Everything in this header is called from gong's side;
// the callback is internal to gong_pipewire.c.
#ifndef GONG_PIPEWIRE_H
#define GONG_PIPEWIRE_H

#include <stdint.h>
#include <stddef.h>

#include "gong_handoff.h"

typedef struct gong_pw_stream gong_pw_stream;

/// Whether a PipeWire server answers on this user's socket within `timeout_ms`.
int gong_pw_server_answers(int timeout_ms);

/// Opens a playback stream of interleaved 32-bit floats. `target`: a node's name or serial, or
/// NULL for the default sink. `latency_frames`: the quantum asked for (node.latency).
/// `buffer_frames`: what gong keeps ahead in its ring. 0, or a negative errno with a sentence
/// in `error` (-EHOSTDOWN no server, -ETIMEDOUT nothing linked the stream, -ENOENT no such
/// target).
int gong_pw_open(const char *target, const char *client_name, uint32_t rate, uint32_t channels,
                 uint32_t latency_frames, uint32_t buffer_frames, int timeout_ms, gong_pw_stream **stream,
                 char *error, size_t error_size);
void gong_pw_close(gong_pw_stream *stream);

/// What gong's audio thread writes to and waits on (gong_handoff.h); the stream's for as long
/// as it is open.
gong_handoff *gong_pw_handoff(gong_pw_stream *stream);

/// A sink the server has: its node name, description and serial.
typedef struct gong_pw_sink {
    char name[256];
    char description[256];
    uint32_t serial;
} gong_pw_sink;

/// Fills up to `capacity` sinks; returns how many the server has (may exceed capacity), or a
/// negative errno when no server answers within `timeout_ms`.
int gong_pw_list_sinks(gong_pw_sink *sinks, int capacity, int timeout_ms);

#endif

// gong's PipeWire stream: a pw_stream on the graph whose process callback, on PipeWire's
// real-time data thread, copies out what gong's audio thread wrote to a frame ring and records
// when it will be heard (pw_time). Everything in this header is called from gong's side; the
// callback is internal to gong_pipewire.c.
#ifndef GONG_PIPEWIRE_H
#define GONG_PIPEWIRE_H

#include <stdint.h>
#include <stddef.h>

typedef struct gong_pw_stream gong_pw_stream;

/// What one graph cycle said: the next frame of the ring to be played (a count since the stream
/// began) is heard `heard_ns` (CLOCK_MONOTONIC), as reported at `now_ns`. 0 cycles: none yet.
typedef struct gong_pw_timing {
    uint64_t cycles;
    int64_t now_ns;
    int64_t heard_ns;
    uint64_t next_frame;
    /// The quantum of the last cycle, in frames.
    uint32_t quantum;
} gong_pw_timing;

/// Counters the callback keeps (each only grows).
typedef struct gong_pw_counters {
    /// Cycles the ring could not fill after playback began, and the frames of silence played.
    uint64_t ring_underruns;
    uint64_t ring_silent_frames;
    /// Cycles the graph ran without this stream (a jump in pw_time.ticks), and their frames.
    uint64_t graph_xruns;
    uint64_t graph_lost_frames;
    /// The largest quantum seen, in frames.
    uint32_t largest_quantum;
    /// The kernel's id of the thread that runs the process callback (0 before its first cycle).
    int32_t callback_thread;
} gong_pw_counters;

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

/// Producer side (gong's audio thread): frames that fit now, write, take back.
uint32_t gong_pw_writable(gong_pw_stream *stream);
uint32_t gong_pw_write(gong_pw_stream *stream, const float *frames, uint32_t count);
uint32_t gong_pw_unclaimed(gong_pw_stream *stream);
uint32_t gong_pw_take_back(gong_pw_stream *stream, uint32_t frames);
/// Frames written and not yet copied out by the graph.
uint32_t gong_pw_filled(gong_pw_stream *stream);
/// Nothing more will be written: the ring running empty from now on is the end, not an underrun.
void gong_pw_drain_begins(gong_pw_stream *stream);

/// Sleeps until `frames` can be written, `wake_fd` turns readable (read, then 2), the stream
/// breaks (-ENODEV) or `timeout_ms` passes (0). 1 when there is room.
int gong_pw_wait(gong_pw_stream *stream, uint32_t frames, int wake_fd, int timeout_ms);

/// 0 while the stream can play; -ENODEV once the server, the node or the link is gone.
int gong_pw_state(gong_pw_stream *stream);

void gong_pw_timing_read(gong_pw_stream *stream, gong_pw_timing *timing);
void gong_pw_counters_read(gong_pw_stream *stream, gong_pw_counters *counters);

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

// gong's JACK client: a client named `gong` with one output port per channel, whose process
// callback, on JACK's real-time thread, copies out what gong's audio thread wrote to a frame
// ring and records when it will be heard. Everything in this header is called from gong's
// side; the callbacks are internal to gong_jack.c.
#ifndef GONG_JACK_H
#define GONG_JACK_H

#include <stddef.h>
#include <stdint.h>

typedef struct gong_jack_stream gong_jack_stream;

/// What one process cycle said: the next frame of the ring to be played (a count since the
/// client began) is heard at `heard_ns` (CLOCK_MONOTONIC), as measured at `now_ns`. 0 cycles:
/// none yet.
typedef struct gong_jack_timing {
    uint64_t cycles;
    int64_t now_ns;
    int64_t heard_ns;
    uint64_t next_frame;
    /// The buffer size of the last cycle, in frames, and the ports' playback latency then.
    uint32_t nframes;
    uint32_t latency_frames;
} gong_jack_timing;

/// Counters the callbacks keep (each only grows).
typedef struct gong_jack_counters {
    /// Cycles the ring could not fill after playback began, and the frames of silence played.
    uint64_t ring_underruns;
    uint64_t ring_silent_frames;
    /// Cycles the server ran without this client (a jump in jack_last_frame_time beyond the
    /// frames it was given), and their frames.
    uint64_t skipped_cycles;
    uint64_t skipped_frames;
    /// The server's xrun notifications (jack_set_xrun_callback): any client's, this one's too.
    uint64_t server_xruns;
    /// The largest buffer size seen, in frames.
    uint32_t largest_nframes;
} gong_jack_counters;

/// Whether a JACK server answers (never starts one); quiet, and quick when none runs.
int gong_jack_server_answers(void);

/// Opens a client and activates it. `ports`: `port_count` full port names to connect to, in
/// order (out_1 to the first, out_2 to the second, channels cycling when more ports are named
/// than there are channels, a channel without a port left unconnected); none: the first
/// physical playback ports (at least two: a mono stream is heard on both). The server's rate is
/// the stream's (`gong_jack_rate`). `buffer_frames`: what gong keeps ahead in its ring. 0, or a
/// negative errno with a sentence in `error` (-EHOSTDOWN no server, -ENOENT no such port or not
/// one that takes audio, -ENODEV no physical playback port, -EIO a port that would not register
/// or connect).
int gong_jack_open(const char *client_name, const char *const *ports, int port_count, uint32_t channels,
                   uint32_t buffer_frames, gong_jack_stream **stream, char *error, size_t error_size);
void gong_jack_close(gong_jack_stream *stream);

/// The server's sample rate, and its buffer size when the client opened.
uint32_t gong_jack_rate(gong_jack_stream *stream);
uint32_t gong_jack_buffer_size(gong_jack_stream *stream);
/// The client's name as the server knows it (`gong`, or `gong-01` when the name was taken).
const char *gong_jack_client_name(gong_jack_stream *stream);

/// Producer side (gong's audio thread): frames that fit now, write, take back.
uint32_t gong_jack_writable(gong_jack_stream *stream);
uint32_t gong_jack_write(gong_jack_stream *stream, const float *frames, uint32_t count);
uint32_t gong_jack_unclaimed(gong_jack_stream *stream);
uint32_t gong_jack_take_back(gong_jack_stream *stream, uint32_t frames);
/// Frames written and not yet copied out by the process callback.
uint32_t gong_jack_filled(gong_jack_stream *stream);

/// Sleeps until `frames` can be written, `wake_fd` turns readable (read, then 2), the server
/// shuts the client down (-ENODEV) or `timeout_ms` passes (0). 1 when there is room.
int gong_jack_wait(gong_jack_stream *stream, uint32_t frames, int wake_fd, int timeout_ms);

/// 0 while the client can play; -ENODEV once the server has shut it down.
int gong_jack_state(gong_jack_stream *stream);

void gong_jack_timing_read(gong_jack_stream *stream, gong_jack_timing *timing);
void gong_jack_counters_read(gong_jack_stream *stream, gong_jack_counters *counters);

/// A playback port the server has: its full name, and whether it is a physical one.
typedef struct gong_jack_port {
    char name[320];
    int physical;
} gong_jack_port;

/// Fills up to `capacity` ports that take audio (input ports of the audio type); returns how
/// many the server has (may exceed capacity), or -EHOSTDOWN when no server answers.
int gong_jack_list_playback_ports(gong_jack_port *ports, int capacity);

#endif

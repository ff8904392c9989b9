// gong's JACK client: a client named `gong` with one output port per channel, whose process
// callback, on JACK's real-time thread, copies out what gong's audio thread handed off
// (gong_handoff.h) and records when it will be heard. Everything in this header is called from gong's
// side; the callbacks are internal to gong_jack.c.
#ifndef GONG_JACK_H
#define GONG_JACK_H

#include <stddef.h>
#include <stdint.h>

#include "gong_handoff.h"

typedef struct gong_jack_stream gong_jack_stream;

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

/// What gong's audio thread writes to and waits on (gong_handoff.h); the client's for as long as
/// it is open.
gong_handoff *gong_jack_handoff(gong_jack_stream *stream);

/// A playback port the server has: its full name, and whether it is a physical one.
typedef struct gong_jack_port {
    char name[320];
    int physical;
} gong_jack_port;

/// Fills up to `capacity` ports that take audio (input ports of the audio type); returns how
/// many the server has (may exceed capacity), or -EHOSTDOWN when no server answers.
int gong_jack_list_playback_ports(gong_jack_port *ports, int capacity);

#endif

#ifndef JACK_TAP_H
#define JACK_TAP_H

#include <stdint.h>

/// A JACK client of the tests' own with one input port, recording what reaches it onto JACK's
/// frame clock: the frames of a cycle land at the cycle's frame time less the first cycle's, so
/// a cycle the server ran without the tap is a hole (NaN) where it belongs, not a splice. A
/// recording on the server's clock shows whether the cues it hears keep their frames, whatever
/// cycles the tap or the player missed; jack_rec, which writes cycles end to end, cannot tell a
/// cycle it missed itself from one the player lost.
typedef struct jack_tap jack_tap;

/// Opens client `name` on server `server` (never starting one), with an input port `in`, and
/// activates it. `capacity` frames are recorded at most. NULL when the server does not answer.
jack_tap *jack_tap_open(const char *server, const char *name, uint32_t capacity);
/// The input port's full name ("client:in"), to connect a player to.
const char *jack_tap_port_name(jack_tap *tap);
/// Deactivates the client: once it returns, nothing more is recorded and what was is stable.
void jack_tap_stop(jack_tap *tap);
/// The recording: NaN where no cycle reached the tap, the first frame at the first cycle.
const float *jack_tap_samples(jack_tap *tap);
/// How far the recording reaches (its last cycle's end), in frames.
uint32_t jack_tap_frames(jack_tap *tap);
/// The frames of the cycles the server ran without the tap.
uint32_t jack_tap_missed_frames(jack_tap *tap);
/// Cycles the tap placed a cycle late at first (a call that began after the server moved on
/// reads the next cycle's frame time) and moved back once the server ran that cycle as well.
uint32_t jack_tap_moved_cycles(jack_tap *tap);
/// Stops it if needed, closes the client and frees the recording.
void jack_tap_close(jack_tap *tap);

#endif

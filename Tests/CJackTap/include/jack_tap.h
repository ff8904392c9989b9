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

#define JACK_TAP_MAX_XRUNS 256

/// Opens client `name` on server `server` (never starting one), with an input port `in`, and
/// activates it. `capacity` frames are recorded at most. NULL when the server does not answer.
jack_tap *jack_tap_open(const char *server, const char *name, uint32_t capacity);
/// A tap connected to nothing, for `capacity` frames: cycles reach it only through
/// `jack_tap_record_cycle`, so how it places them is tested without a server.
jack_tap *jack_tap_new(uint32_t capacity);
/// What the process callback does with each cycle: `frames` samples read at frame time
/// `frame_time`, placed there. A frame time past where the last cycle ended leaves a hole (NaN)
/// and counts its frames missed; one that comes again (or falls back) counts a cycle read
/// again (`jack_tap_reread_cycles`) and is placed where it says. Not thread-safe against
/// another call.
void jack_tap_record_cycle(jack_tap *tap, uint32_t frame_time, const float *samples, uint32_t frames);
/// The cycle at `frame_time` was copied while the server moved on: a hole, counted
/// (`jack_tap_doubtful_cycles`).
void jack_tap_leave_out_cycle(jack_tap *tap, uint32_t frame_time, uint32_t frames);
#define JACK_TAP_MAX_LATE 16
/// Fault injection in the witness itself, to prove it: once open (before anything plays into it,
/// and once), the tap begins late the calls whose port buffer holds an onset (a sound after half
/// a second of silence), the first by `usecs[0]`, the next by `usecs[1]`, and so on (at most
/// JACK_TAP_MAX_LATE): slept before the call reads the frame time and the port, as a call woken
/// that late would.
void jack_tap_be_late_at_onsets(jack_tap *tap, const uint32_t *usecs, uint32_t count);
/// How many of those calls have been made late so far.
uint32_t jack_tap_late_calls(jack_tap *tap);
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
/// Cycles the server ran the tap for twice: a call that began late, after the server moved on,
/// reads the next cycle's frame time and, the port's buffer being gong's, the next cycle's frames
/// (gong overwrote the late cycle's before the tap copied them), so it is placed there, and the
/// call the server then makes for that cycle places it again. The late cycle is a hole, counted
/// in the missed frames. (Moved back to the late cycle's place, as the tap once did, gong's next
/// cycle's frames land a cycle early: the fault injection above showed it; bench/RESULTS.md,
/// stop 50.)
uint32_t jack_tap_reread_cycles(jack_tap *tap);
/// Cycles not placed (left a hole) because the server moved on while the tap copied them.
uint32_t jack_tap_doubtful_cycles(jack_tap *tap);
/// The xruns the server reported to the tap, at most JACK_TAP_MAX_XRUNS: into `frames`, where
/// each was on the recording's frames (the estimated frame time when the report arrived, less
/// the first cycle's; a report arrives a little after the cycle it is about), and into `driver`
/// whether it was the server's driver's own (1) or a client's late for a cycle (0). jack2 tells
/// both alike, but keeps the delay of the last driver xrun (jack_get_xrun_delayed_usecs), which
/// only a driver's changes: jack2's dummy driver woken late starts its timeline again, and the
/// server's clock loses that time. Read once stopped.
uint32_t jack_tap_xruns(jack_tap *tap, int64_t *frames, int *driver, uint32_t max);
/// When the server woke the tap for a cycle: the cycle's first frame on the recording's frames
/// (the first cycle's is 0) and CLOCK_MONOTONIC in microseconds as the call began (the clock a
/// test reads its key presses on), read after the frame time. A call begins when the cycle has
/// begun or later (a busy machine wakes it late), never before, so over a run of cycles the
/// earliest wake-ups place the frames on the server's clock; where that clock stood still
/// (jack2's dummy driver woken late starts its timeline again: no frame is lost, the time is),
/// the wake-ups after it are later by the stop than the frames say. Measured by the tap's own
/// thread: the server's account, not the player's. (jack_get_cycle_times' times are no witness
/// of that: its DLL takes a stop in over seconds, overshooting; bench/RESULTS.md.)
typedef struct {
    int64_t frame;
    int64_t usecs;
} jack_tap_cycle_time;
/// What the process callback notes as each call begins; testable without a server.
void jack_tap_note_cycle_time(jack_tap *tap, uint32_t frame_time, int64_t usecs);
/// The wake-ups noted, in order; `count` set to how many. Read once stopped.
const jack_tap_cycle_time *jack_tap_cycle_times(jack_tap *tap, uint32_t *count);
/// Stops it if needed, closes the client and frees the recording.
void jack_tap_close(jack_tap *tap);

#endif

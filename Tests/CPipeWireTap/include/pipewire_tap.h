#ifndef PIPEWIRE_TAP_H
#define PIPEWIRE_TAP_H

#include <stdint.h>

/// A PipeWire capture stream of the tests' own on a sink's monitor, recording channel 0 onto the
/// graph's clock: the frames of a cycle land at the driver's position (its ticks) less the
/// first cycle's, so a cycle the graph ran without the tap, or missed altogether (its driver
/// stalled), is a hole (NaN) where it belongs, not a splice. parec, pw-record and every other
/// recorder write what they get end to end: when the whole graph misses cycles, such a
/// recording is short by them, and a player that keeps the device's schedule looks short while
/// one that plays on from where it was looks exact. On the graph's clock it is the other way.
/// Used by the live tests and by bench/tools/pw-tap.c.
typedef struct pipewire_tap pipewire_tap;

/// Connects to the PipeWire server whose socket is `remote` (a path, or NULL for the
/// environment's), captures the monitor of the sink named `sink` at 48 kHz and waits up to
/// `timeout_ms` for the first cycle. `capacity` frames are recorded at most. NULL when the
/// server does not answer, or no cycle came.
pipewire_tap *pipewire_tap_open(const char *remote, const char *sink, uint32_t capacity, int timeout_ms);
/// A tap connected to nothing, for `capacity` frames: cycles reach it only through
/// `pipewire_tap_record_cycle`, so how it places them can be tested without a server.
pipewire_tap *pipewire_tap_new(uint32_t capacity);
/// What the data thread does with each cycle: `frames` interleaved stereo frames, channel 0
/// kept, at graph position `now` (frames at 48 kHz). A position past where the last cycle ended
/// leaves a hole (NaN) and counts its frames missed; one that falls back inside the last cycle
/// moves that cycle back to close the hole it had left (`pipewire_tap_moved_cycles`).
/// `in_doubt`: the call did not wake a period after the last (give or take half), so its
/// position may be a cycle or two ahead of its frames; they are marked (`pipewire_tap_doubtful`).
/// Not thread-safe against another call.
void pipewire_tap_record_cycle(pipewire_tap *tap, uint64_t now, const float *interleaved, uint32_t frames,
                               int in_doubt);
#define PIPEWIRE_TAP_MAX_LATE 16
/// Fault injection in the witness itself, to prove it (as jack_tap_be_late_at_onsets): once
/// open, the calls whose cycle holds an onset (a sound after half a second of silence) begin
/// late, the first by `usecs[0]`, the next by `usecs[1]`, and so on.
void pipewire_tap_be_late_at_onsets(pipewire_tap *tap, const uint32_t *usecs, uint32_t count);
/// How many of those calls have been made late so far.
uint32_t pipewire_tap_late_calls(pipewire_tap *tap);
/// Disconnects the stream: once it returns, nothing more is recorded and what was is stable.
void pipewire_tap_stop(pipewire_tap *tap);
/// The recording: NaN where no cycle reached the tap, the first frame at the first cycle.
const float *pipewire_tap_samples(pipewire_tap *tap);
/// Beside each frame of the recording, 1 where a call in doubt recorded it: a cycle that may sit
/// a cycle or two after where the graph played it, so no onset in it can be placed.
const uint8_t *pipewire_tap_doubtful(pipewire_tap *tap);
/// How far the recording reaches (its last cycle's end), in frames.
uint32_t pipewire_tap_frames(pipewire_tap *tap);
/// The frames of the cycles the tap did not get.
uint32_t pipewire_tap_missed_frames(pipewire_tap *tap);
/// Cycles the tap placed a cycle late at first (a call that began after the driver moved on
/// reads the next cycle's position) and moved back once the driver ran that cycle as well.
uint32_t pipewire_tap_moved_cycles(pipewire_tap *tap);
/// Calls that found more than one buffer waiting: the tap takes them all, the newest at the
/// position read and each older one the cycle before (in doubt). Were it to take one a call, it
/// would stay a buffer behind from then on, every cycle placed a quantum after the graph played
/// it and no hole to show it (bench/RESULTS.md, stop 58).
uint32_t pipewire_tap_stacked_calls(pipewire_tap *tap);
/// When the graph played a cycle the tap recorded: the cycle's first frame on the recording's
/// frames, and the graph's own time of it, CLOCK_MONOTONIC in microseconds (the clock a test
/// reads its key presses on): pw_time's `now` as the driver began the cycle the frames reached
/// the tap in, less the cycle's length, as the sink, driving the graph, hands its monitor what it
/// played a cycle before. The server's account, not the player's, of when they were played.
typedef struct {
    int64_t frame;
    int64_t usecs;
} pipewire_tap_cycle_time;
/// The cycles' times, in order; `count` set to how many. Read once stopped.
const pipewire_tap_cycle_time *pipewire_tap_cycle_times(pipewire_tap *tap, uint32_t *count);
/// Stops it if needed, disconnects and frees the recording.
void pipewire_tap_close(pipewire_tap *tap);

#endif

// What a sound server's real-time callback (PipeWire's, JACK's) and gong's audio thread share:
// the frame ring the callback takes each cycle from, the doorbell it rings when gong asked to be
// woken for room, whether the stream still plays, the underruns it counted, and the last cycle's
// timing. This header is gong's side of it; the callbacks' side is gong_handoff_callback.h.
#ifndef GONG_HANDOFF_H
#define GONG_HANDOFF_H

#include <stdint.h>

typedef struct gong_handoff gong_handoff;

/// What the last cycle said: the ring's next frame (a count since the stream began) is heard at
/// `heard_ns` (CLOCK_MONOTONIC), as reported at `now_ns`; `frames` were played in that cycle.
/// 0 cycles: none yet.
typedef struct gong_handoff_timing {
    uint64_t cycles;
    int64_t now_ns;
    int64_t heard_ns;
    uint64_t next_frame;
    uint32_t frames;
} gong_handoff_timing;

/// Counts the callback keeps (each only grows).
typedef struct gong_handoff_counters {
    /// Cycles the ring could not fill once playback began, and the frames of silence played.
    uint64_t ring_underruns;
    uint64_t ring_silent_frames;
    /// Cycles the server ran without the callback (it was stopped or too late), and their frames.
    uint64_t missed_cycles;
    uint64_t missed_frames;
    /// Times the server's clock stopped while its frame count did not (jack2's dummy driver
    /// waking a period late starts its timeline again from then), and the time it lost in all:
    /// every frame from then on is heard that much later, none of them lost.
    uint64_t clock_stops;
    uint64_t clock_stopped_ns;
} gong_handoff_counters;

/// The cycles a callback was not run for, read from the server's clock position (JACK's frame
/// time, PipeWire's ticks) in the cycles it was. That position is the server's current cycle, not
/// necessarily the one the call serves: a call that began late, after the server had moved on,
/// reads a later cycle's. After its server stalled (PipeWire's daemon stopped a few tens of
/// milliseconds), the server runs the cycles it owes back to back and a string of calls each read
/// a cycle or two ahead (traced against the graph's own recording: bench/RESULTS.md, stop 54). A
/// position read early only ever runs ahead, never behind.
///
/// So positions are believed only in a calm call: one that woke between half a period and a
/// period and a half after the last, which did the same after the one before. A call a period
/// after a late one can be as late, read the next cycle's position, and be run again at once
/// for that cycle (traced on PipeWire, natively and through its JACK, bench/RESULTS.md, stop 60:
/// the 256 frames believed lost there put every later cue a cycle early); the second call on its
/// period in a row waited for its own cycle and read its position. There, the position less the
/// frames handed over before this call's buffer is what the server ran without the client since
/// the stream began; what it adds to the last calm call's is told. Calls between are in doubt
/// (their timing is not reported). A callback that plays a late call's frames again (`replays`,
/// JACK's: gong_jack.c says why) when the next call reads the same position hands those frames
/// over a second time, so they count where they are heard. Positions are frames modulo 2^32:
/// they wrap (a day at 48 kHz), their differences do not.
typedef struct gong_cycle_skips {
    int started;
    /// The last call's position, frames and wake-up (CLOCK_MONOTONIC).
    uint32_t previous, last_frames;
    int64_t last_woke_ns;
    /// Whether the last call woke a period after the one before it, give or take half.
    int last_on_period;
    /// Frames handed over so far, modulo 2^32 (what the server was given to play, not counting a
    /// cycle played again).
    uint32_t handed;
    /// The position less the frames handed over before it, at the last calm call; `settled`
    /// once a calm call has set it.
    uint32_t behind;
    int settled;
    /// Whether a call since the last calm one ran ahead of `behind`: the loss, told at the next
    /// calm call, landed where the first of them began (`jumped` in that call).
    int ahead;
    /// Set by the callback: it plays the last call's frames again when a call reads the same
    /// position after one in doubt.
    int replays;
    /// This call's: whether its position is in doubt (it is not calm), whether it read the last
    /// call's position again after a call in doubt (that call read it early: with `replays`, its
    /// frames are played again now), and whether it is the first since the last calm call to run
    /// ahead.
    int in_doubt, repeated, jumped;
} gong_cycle_skips;

/// A call at `position` of `frames` frames, woken at `woke_ns` (CLOCK_MONOTONIC), at `rate`
/// frames a second: the frames to tell as missed now. Real-time safe (the callbacks').
uint32_t gong_cycle_skips_step(gong_cycle_skips *skips, uint32_t position, uint32_t frames, int64_t woke_ns,
                               uint32_t rate);

/// Whether a server's clock began a cycle elsewhere than it had predicted (JACK's: each cycle's
/// `jack_get_cycle_times`). jack2 begins each cycle exactly where its filter said (`next_usecs`),
/// unless its driver started its timeline again: the dummy driver, woken more than a period
/// late, counts its cycles afresh from then (jack2's "JackTimedDriver::Process XRun"). No frame
/// is skipped for it, but every frame from then on is heard later by as much: the server lost
/// that much time. A late client does not move it; only the driver's own lateness does.
///
/// jack2 shows that restart in the cycle times only for a moment: it resets the cycle's start to
/// the late wake-up after it has woken its clients, and the next cycle's start is its filter's
/// again, which comes back to the real one only over seconds. A client that reads the times
/// before the reset, or is woken only for the next cycle (the driver stopped while it ran its
/// clients), sees every start where predicted (a client of jackd's traced it: bench/RESULTS.md,
/// stop 56). What every client sees is its own wake-up, later behind the predicted start than
/// the last one by about the stop: a wake-up later so by more than a period (and the slack) is
/// a restart to measure too. A client that was itself woken that late (a busy machine) is
/// measured as well, and the origins (gong_clock_origin) tell no stop for it: the server's
/// clock did not stand still.
///
/// The prediction is of the cycle after the last one the client ran; the cycle running now may
/// be a later one (the server ran cycles without the client, or the call began late and reads
/// the next cycle's times). So it is carried on to the cycle running by the frames between, at
/// the server's rate, and a restart that comes with a skipped cycle (the first cycle after the
/// driver's stop also run without the client) is told too. The server's own cycles in between
/// are timed by its filter, whose period strays from the nominal on a busy machine: a 64th of
/// the time carried is slack besides the floor (next to nothing for a cycle or two). Carried
/// over more than GONG_CLOCK_PREDICTION_REACH_SECONDS, a sound card's clock (its rate off the
/// nominal by tens of parts per million) could stray further: such a gap is not judged.
typedef struct gong_clock_prediction {
    /// When the next cycle was to begin (the server's microseconds) and its frame time; 0: not
    /// known.
    uint64_t wakeup_usecs;
    uint32_t frames;
    /// How long after the start the server predicted for the last cycle (or gave it, unpredicted)
    /// the client woke for it (µs; the server's clock may have another origin than the client's:
    /// only the difference between two is judged).
    int64_t woke_behind_usecs;
} gong_clock_prediction;

/// A clock that begins a cycle less than this (and the slack of cycles carried over) after its
/// prediction has not restarted: a stop
/// shorter than the cues' tolerance is left to the device clock, which follows it within two
/// seconds (jack2 and PipeWire's JACK both begin each cycle exactly where predicted otherwise).
#define GONG_CLOCK_PREDICTION_FLOOR_USECS 1000
/// The longest run of frames a prediction is carried over.
#define GONG_CLOCK_PREDICTION_REACH_SECONDS 10

/// The cycle running began at `current_usecs` with frame time `current_frames`, `frames` long;
/// the server expects the next at `next_usecs`; the client woke for it at `woke_usecs`
/// (CLOCK_MONOTONIC). 1 when the clock may have restarted before it: a stop to measure.
/// Real-time safe (the callbacks').
int gong_clock_prediction_step(gong_clock_prediction *prediction, uint32_t current_frames, uint64_t current_usecs,
                               uint64_t next_usecs, uint32_t frames, uint32_t rate, int64_t woke_usecs);

/// Where a server's timeline puts frame 0, from each cycle's wake-up (JACK's): the cycle with
/// frame time `f` began at its wake-up less `f` frames or before, never after, so the earliest of
/// a window of wake-ups is that moment. A stop of the server's clock (its driver starting its
/// timeline again) moves it later for good: measured as the earliest origin of the
/// GONG_CLOCK_ORIGIN_STOP_CYCLES cycles after a cycle to `measure`, less the earliest before.
///
/// What to measure: a restart the prediction saw (gong_clock_prediction), and every jump in the
/// frame time. A client that was not running (stopped, or held off by a busy machine) cannot see
/// when the server's driver woke late meanwhile, and a restart carried in a long jump hides in the
/// prediction's slack (a 64th of the time carried: 5 ms over 300 ms); the origins on either side
/// of the jump show it. A jump the client only read early moves no origin, and measures nothing.
typedef struct gong_clock_origin {
    /// The frame time, counted on past its 2^32 wrap (a day at 48 kHz).
    uint64_t position;
    int position_known;
    /// The earliest origin (CLOCK_MONOTONIC ns) of this window of cycles and of the one before;
    /// cycles left in this window.
    int64_t earliest_now, earliest_before;
    uint32_t window_left;
    /// A stop to measure: the earliest origin before it, the earliest of the cycles since, and
    /// how many more cycles to wait.
    int stop_pending;
    int64_t origin_before_stop, earliest_since_stop;
    uint32_t stop_cycles_left;
} gong_clock_origin;

/// Cycles in a window of the earliest wake-up: about a second at 256 frames.
#define GONG_CLOCK_ORIGIN_WINDOW_CYCLES 192
/// Cycles after a restart or a jump over which the new origin is measured: jack2's dummy driver
/// keeps its new timeline from the first of them.
#define GONG_CLOCK_ORIGIN_STOP_CYCLES 16
/// A stop measured shorter than this is a wake-up's jitter, not told.
#define GONG_CLOCK_ORIGIN_STOP_FLOOR_NS 50000

void gong_clock_origin_init(gong_clock_origin *origin);
/// A timed cycle woke at `now_ns` (CLOCK_MONOTONIC) with frame time `frame_time` at `rate`;
/// `measure`: a restart or a jump came just before it. The time the server's clock stood still,
/// to tell now (ns), or 0. Real-time safe (the callbacks').
uint64_t gong_clock_origin_step(gong_clock_origin *origin, int64_t now_ns, uint32_t frame_time, uint32_t rate,
                                int measure);

/// Frames that fit now; writes up to `count` interleaved float frames, returning how many.
uint32_t gong_handoff_writable(gong_handoff *handoff);
uint32_t gong_handoff_write(gong_handoff *handoff, const float *frames, uint32_t count);
/// Frames written that the callback has not claimed (what a take-back reaches), and takes back
/// the last `frames` of them: `frames` or 0.
uint32_t gong_handoff_unclaimed(gong_handoff *handoff);
uint32_t gong_handoff_take_back(gong_handoff *handoff, uint32_t frames);
/// Frames written and not yet copied out by the callback.
uint32_t gong_handoff_filled(gong_handoff *handoff);
/// The ring frame (frames claimed since the stream began) before which the earliest loss since
/// the last call landed, and forgets it: every frame from there on is heard late by the losses
/// counted since. UINT64_MAX when no loss landed. Read it after seeing a loss counted.
uint64_t gong_handoff_take_loss_frame(gong_handoff *handoff);
/// Nothing more will be written: the ring running empty from now on is the end, not an underrun.
void gong_handoff_drain_begins(gong_handoff *handoff);
/// More will be written after all (a loss during the drain is rendered again): an empty ring is
/// an underrun again.
void gong_handoff_drain_ends(gong_handoff *handoff);

/// Sleeps until `frames` can be written (1), `wake_fd` turns readable (read, then 2), the
/// callback counts a loss (3: an underrun of the ring or a cycle missed, to be taken in at once),
/// the stream is gone (-ENODEV) or `timeout_ms` passes (0).
int gong_handoff_wait(gong_handoff *handoff, uint32_t frames, int wake_fd, int timeout_ms);
/// 0 while the stream plays; -ENODEV once its server, node or client is gone.
int gong_handoff_state(gong_handoff *handoff);

/// A hand-off of its own, outside any server's stream, and a callback's cycle on it: `missed`
/// frames the server ran without the callback (told as JACK's and PipeWire's tell them), then up
/// to `frames` claimed into `destination`, returning how many. For tests of gong's side of the
/// hand-off without a server.
gong_handoff *gong_handoff_new(uint32_t buffer_frames, uint32_t frame_bytes);
void gong_handoff_free(gong_handoff *handoff);
uint32_t gong_handoff_run_cycle(gong_handoff *handoff, uint32_t missed, void *destination, uint32_t frames);
/// On such a hand-off, as its callback: the frames claimed so far, and `frames` the server ran
/// without the callback, landing before ring frame `from` (as JACK's and PipeWire's tell a jump a
/// cycle after the cycle that saw it, whose frames were heard after the loss).
uint64_t gong_handoff_claimed(gong_handoff *handoff);
void gong_handoff_miss(gong_handoff *handoff, uint32_t frames, uint64_t from);

void gong_handoff_timing_read(gong_handoff *handoff, gong_handoff_timing *timing);
void gong_handoff_counters_read(gong_handoff *handoff, gong_handoff_counters *counters);

#endif

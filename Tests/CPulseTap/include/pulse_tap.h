#ifndef PULSE_TAP_H
#define PULSE_TAP_H

#include <stdint.h>

/// A PulseAudio record stream of the tests' own on a sink's monitor (mono, float, 48 kHz) that
/// keeps, beside the frames, the server's own account of when they were played: after each read
/// it asks the server for the stream's timing and keeps the answer.
///
/// A sink hands its monitor a frame when it renders it, not when it plays it: PulseAudio's null
/// sink renders up to its latency ahead of its clock (module-null-sink's process_render), so a
/// recorder's arrivals place a sound early by however far ahead the sink was. The timing reply
/// says how far (the monitored sink's latency), with the stream's write index and the server's
/// clock at that moment: which of the recording's frames the sink was playing then. That is the
/// sink's own clock, told to a client that is not gong.
typedef struct pulse_tap pulse_tap;

/// One timing reply, as the server gave it (`pa_timing_info`).
typedef struct {
    /// The server's CLOCK_REALTIME when it answered, in microseconds.
    int64_t usec;
    /// Bytes the server had put in the stream's queue (4 a frame): the recording's frames up to
    /// this one had been rendered.
    int64_t write_index;
    /// How long the monitored sink will take to play what it has rendered (its latency).
    uint64_t sink_usec;
    /// What the source held that had not reached the queue yet (a monitor's own latency, and
    /// frames on their way from the source's thread).
    uint64_t source_usec;
} pulse_tap_timing;

/// A block as it reached the tap: its first frame, its length, and this system's CLOCK_REALTIME
/// when the read returned (microseconds): the recorder's own clock, for comparison.
typedef struct {
    int64_t first_frame;
    int64_t frames;
    int64_t usec;
} pulse_tap_arrival;

/// Connects to `server` (NULL for the environment's default), records the monitor of the sink
/// named `sink` in blocks of `fragment_ms`, and waits up to `timeout_ms` for the first block.
/// `capacity` frames and `timing_capacity` replies and arrivals are kept at most. NULL when the server does
/// not answer or no block came.
pulse_tap *pulse_tap_open(
    const char *server, const char *sink, uint32_t capacity, uint32_t timing_capacity, uint32_t fragment_ms,
    int timeout_ms);
/// Ends the recording: once it returns nothing more is recorded and what was is stable.
void pulse_tap_stop(pulse_tap *tap);
/// The recording, from the first frame the stream was handed.
const float *pulse_tap_samples(pulse_tap *tap);
uint32_t pulse_tap_frames(pulse_tap *tap);
/// The timing replies, in the order they came.
const pulse_tap_timing *pulse_tap_timings(pulse_tap *tap);
uint32_t pulse_tap_timing_count(pulse_tap *tap);
/// The blocks as they arrived.
const pulse_tap_arrival *pulse_tap_arrivals(pulse_tap *tap);
uint32_t pulse_tap_arrival_count(pulse_tap *tap);
/// Frames the server handed over as a hole (recorded as NaN), and frames past the capacity.
uint32_t pulse_tap_hole_frames(pulse_tap *tap);
uint32_t pulse_tap_dropped_frames(pulse_tap *tap);
/// Stops it if needed, disconnects and frees the recording.
void pulse_tap_close(pulse_tap *tap);

#endif

// pw-tap: records a PipeWire sink's monitor on the graph's own clock, for bench/exactness.py.
//
//   pw-tap SINK SECONDS OUT.f32     (channel 0 as float32, native byte order; NaN where no cycle came)
//
// parec, pw-record and every other recorder write the cycles they get end to end. When the whole
// graph misses cycles (its driver stalled: the machine was busy), such a recording is short by
// them, and so is every stream's interval across them: a player that keeps its place in its own
// stream (pacat) then looks exact, a player that keeps the schedule on the device's clock (gong)
// looks short. Here each cycle is written at the graph's position (the driver's ticks), so a
// missed cycle is a hole and an interval is measured on the clock the sound card would keep.
// A call that begins late, after the driver has moved on, reads the next cycle's position, and
// the driver then runs that cycle too: such a cycle is moved back into the hole before it, as
// Tests/CJackTap does for JACK.
//
// The tool prints one line to stderr at the end: frames recorded, frames missed, cycles moved.
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pipewire/pipewire.h>
#include <spa/param/audio/format-utils.h>

#define RATE 48000

struct tap {
    struct pw_main_loop *loop;
    struct pw_stream *stream;
    float *samples;
    uint32_t capacity;
    // The data thread's own; read once the loop has ended.
    int started, has_last;
    uint64_t origin, expected;
    uint32_t last_at, last_frames, moved_cycles;
    uint64_t missed_frames;
};

static void on_process(void *data) {
    struct tap *tap = data;
    struct pw_buffer *buffer = pw_stream_dequeue_buffer(tap->stream);
    if (!buffer) return;
    struct spa_data *plane = &buffer->buffer->datas[0];
    struct pw_time time;
    memset(&time, 0, sizeof time);
    if (plane->data && plane->chunk->size > 0 && pw_stream_get_time_n(tap->stream, &time, sizeof time) == 0 &&
        time.rate.num > 0 && time.rate.denom > 0) {
        uint32_t frames = plane->chunk->size / (2 * sizeof(float));
        uint64_t now = time.ticks * time.rate.num * RATE / time.rate.denom;
        if (!tap->started) {
            tap->started = 1;
            tap->origin = now;
        } else if (now > tap->expected) {
            tap->missed_frames += now - tap->expected;
        } else if (now < tap->expected && tap->has_last && tap->expected - now <= tap->last_at) {
            // The last cycle read this cycle's position: it belongs `back` frames earlier.
            uint32_t back = (uint32_t)(tap->expected - now);
            memmove(tap->samples + tap->last_at - back, tap->samples + tap->last_at, tap->last_frames * sizeof(float));
            for (uint32_t f = tap->last_at - back + tap->last_frames; f < tap->last_at + tap->last_frames; f++)
                tap->samples[f] = NAN;
            tap->missed_frames -= back <= tap->missed_frames ? back : tap->missed_frames;
            tap->moved_cycles++;
        }
        tap->expected = now + frames;
        uint64_t at = now - tap->origin;
        if (at < tap->capacity && frames <= tap->capacity - at) {
            const float *interleaved = (const float *)((const uint8_t *)plane->data + plane->chunk->offset);
            for (uint32_t f = 0; f < frames; f++) tap->samples[at + f] = interleaved[2 * f];
            tap->has_last = 1;
            tap->last_at = (uint32_t)at;
            tap->last_frames = frames;
        }
    }
    pw_stream_queue_buffer(tap->stream, buffer);
}

static const struct pw_stream_events events = {PW_VERSION_STREAM_EVENTS, .process = on_process};

static void on_quit(void *data, int signal_number) {
    (void)signal_number;
    pw_main_loop_quit(((struct tap *)data)->loop);
}

static void on_timeout(void *data, uint64_t expirations) {
    (void)expirations;
    pw_main_loop_quit(((struct tap *)data)->loop);
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: pw-tap SINK SECONDS OUT.f32\n");
        return 64;
    }
    pw_init(&argc, &argv);
    struct tap tap = {0};
    tap.capacity = (uint32_t)(atof(argv[2]) * RATE);
    tap.samples = malloc((size_t)tap.capacity * sizeof(float));
    if (!tap.samples) return 71;
    for (uint32_t f = 0; f < tap.capacity; f++) tap.samples[f] = NAN;

    tap.loop = pw_main_loop_new(NULL);
    struct pw_loop *loop = pw_main_loop_get_loop(tap.loop);
    pw_loop_add_signal(loop, SIGINT, on_quit, &tap);
    pw_loop_add_signal(loop, SIGTERM, on_quit, &tap);
    struct spa_source *timer = pw_loop_add_timer(loop, on_timeout, &tap);
    struct timespec after = {(time_t)atof(argv[2]), 0};
    pw_loop_update_timer(loop, timer, &after, NULL, false);

    // A long latency: the recorder must not set the graph's quantum. client-rt.conf: a real-time
    // data thread, as gong's and pw-record's.
    struct pw_properties *props = pw_properties_new(
        PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Capture", PW_KEY_MEDIA_ROLE, "Music",
        PW_KEY_TARGET_OBJECT, argv[1], PW_KEY_STREAM_CAPTURE_SINK, "true", PW_KEY_NODE_LATENCY, "8192/48000",
        PW_KEY_CONFIG_NAME, "client-rt.conf", NULL);
    tap.stream = pw_stream_new_simple(loop, "pw-tap", props, &events, &tap);
    uint8_t pod_buffer[1024];
    struct spa_pod_builder builder = SPA_POD_BUILDER_INIT(pod_buffer, sizeof pod_buffer);
    struct spa_audio_info_raw info = {.format = SPA_AUDIO_FORMAT_F32, .rate = RATE, .channels = 2};
    const struct spa_pod *params[1] = {spa_format_audio_raw_build(&builder, SPA_PARAM_EnumFormat, &info)};
    if (pw_stream_connect(tap.stream, PW_DIRECTION_INPUT, PW_ID_ANY,
                          PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_MAP_BUFFERS | PW_STREAM_FLAG_RT_PROCESS, params,
                          1) < 0) {
        fprintf(stderr, "pw-tap: cannot connect to %s\n", argv[1]);
        return 69;
    }
    pw_main_loop_run(tap.loop);
    pw_stream_destroy(tap.stream);

    uint64_t length = tap.started ? tap.expected - tap.origin : 0;
    if (length > tap.capacity) length = tap.capacity;
    FILE *out = fopen(argv[3], "wb");
    if (!out || fwrite(tap.samples, sizeof(float), length, out) != length || fclose(out) != 0) {
        fprintf(stderr, "pw-tap: cannot write %s\n", argv[3]);
        return 73;
    }
    fprintf(stderr, "pw-tap: %llu frames on the graph's clock, %llu missed, %u cycles moved back\n",
            (unsigned long long)length, (unsigned long long)tap.missed_frames, tap.moved_cycles);
    pw_main_loop_destroy(tap.loop);
    pw_deinit();
    return 0;
}

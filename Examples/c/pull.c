/* The host owns the audio: pulls a 2-second session from libgong a buffer at a time and plays it
 * through PulseAudio's simple API (pa_simple), as a program with its own audio callback would.
 * A second thread prints the session's events as they come; the report comes last.
 * Build: cc -Iinclude Examples/c/pull.c -L.build/debug -lgong -lpulse-simple -lpulse -lpthread -o pull
 * Run:   LD_LIBRARY_PATH=.build/debug ./pull [SINK]   (default: the server's default sink) */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <pulse/error.h>
#include <pulse/simple.h>
#include <stdio.h>
#include <time.h>
#include "gong.h"

static const char *pattern =
    "name = \"two\"\n"
    "[[phases]]\n"
    "name = \"knock\"\n"
    "length = \"2s\"\n"
    "cue = \"woodblock\"\n";

enum { RATE = 48000, CHANNELS = 2, FRAMES = 1024 };

/* Events are taken on a thread of their own: gong_next_event waits, the audio loop never does. */
static void *print_events(void *session) {
    char *event = NULL;
    while (gong_next_event(session, -1, &event) == GONG_OK) {
        printf("event: %s\n", event);
        gong_free(event);
    }
    return NULL;
}

static long long monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

int main(int argc, char **argv) {
    const char *sink = argc > 1 ? argv[1] : NULL;
    if (gong_abi_version() != GONG_ABI_VERSION) {
        fprintf(stderr, "pull: libgong has ABI %u, this program was built for %d\n", gong_abi_version(), GONG_ABI_VERSION);
        return 69;
    }
    gong_session *session = NULL;
    char *error = NULL;
    /* A pulled session takes no device settings: the host owns the output. */
    if (gong_session_create_pull_toml(pattern, "{\"latencyMs\": 20}", RATE, CHANNELS, &session, &error) != GONG_ERR_ARGUMENT)
        return 70;
    printf("refused: %s\n", error);
    gong_free(error);
    if (gong_session_create_pull_toml(pattern, "{\"gainDB\": -6}", RATE, CHANNELS, &session, &error) != GONG_OK) {
        fprintf(stderr, "pull: %s\n", error);
        gong_free(error);
        return 69;
    }

    pa_sample_spec spec = {.format = PA_SAMPLE_FLOAT32LE, .rate = RATE, .channels = CHANNELS};
    /* 100 ms of buffer: through a sound server on a busy machine, shorter ones run dry. */
    pa_buffer_attr attr = {.maxlength = (uint32_t)-1, .tlength = RATE / 10 * CHANNELS * sizeof(float),
                           .prebuf = (uint32_t)-1, .minreq = (uint32_t)-1, .fragsize = (uint32_t)-1};
    int pa_error = 0;
    pa_simple *out = pa_simple_new(NULL, "gong pull example", PA_STREAM_PLAYBACK, sink, "session", &spec, NULL,
                                   &attr, &pa_error);
    if (!out) {
        fprintf(stderr, "pull: PulseAudio: %s\n", pa_strerror(pa_error));
        gong_session_free(session);
        return 69;
    }

    pthread_t events;
    pthread_create(&events, NULL, print_events, session);
    gong_session_start(session);
    float buffer[FRAMES * CHANNELS];
    long frames_played = 0;
    gong_status status;
    for (;;) {
        /* When this buffer's first frame will be heard: now, plus what the server still holds. */
        pa_usec_t latency = pa_simple_get_latency(out, &pa_error);
        long long heard_at = latency == (pa_usec_t)-1 ? 0 : monotonic_ns() + (long long)latency * 1000;
        status = gong_render_at(session, buffer, FRAMES, heard_at);
        if (status != GONG_OK) break;
        if (pa_simple_write(out, buffer, sizeof buffer, &pa_error) < 0) {
            fprintf(stderr, "pull: PulseAudio: %s\n", pa_strerror(pa_error));
            break;
        }
        frames_played += FRAMES;
    }
    pa_simple_drain(out, &pa_error);
    pa_simple_free(out);
    pthread_join(events, NULL);

    char *report = NULL;
    gong_session_report(session, &report);
    printf("report: %s\n", report);
    gong_free(report);
    printf("played: %ld frames through PulseAudio\n", frames_played);
    gong_session_free(session);
    return status == GONG_ERR_OVER ? 0 : 70;
}

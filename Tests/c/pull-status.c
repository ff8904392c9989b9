/* A pulled session's status follows the frames its host pulled, whatever the host's pace and
 * block size, with or without heard times: after 5.5 s of 1-second phases pulled as fast as this
 * thread can, gong_session_status says 5.5 s elapsed, cycle 6, 0.5 s into the phase, at once
 * (no waiting for events); a pause and a resume sent from another thread leave out exactly the
 * frames pulled while paused. Prints one line per case; exits 1 on the first that fails.
 * Build: cc -std=c11 -Iinclude Tests/c/pull-status.c -L.build/debug -lgong -lpthread -o pull-status
 * Run:   LD_LIBRARY_PATH=.build/debug ./pull-status   (scripts/test-examples.sh does both) */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gong.h"

/* Ten 1-second phases, one a cycle, each with a cue. */
static const char *pattern =
    "name = \"seconds\"\n"
    "cycles = 10\n"
    "[[phases]]\n"
    "name = \"second\"\n"
    "length = \"1s\"\n"
    "cue = \"click\"\n";

enum { RATE = 48000, CHANNELS = 2, RANDOM_MIX = 0 };

static float buffer[GONG_MAX_PULL_FRAMES * CHANNELS];

static long long monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

/* The number after "key": in a flat JSON object; NAN if the key is missing. */
static double number(const char *json, const char *key) {
    char quoted[64];
    snprintf(quoted, sizeof quoted, "\"%s\"", key);
    const char *at = strstr(json, quoted);
    if (!at) return NAN;
    at += strlen(quoted);
    while (*at == ' ' || *at == ':') at++;
    return strtod(at, NULL);
}

static int has(const char *json, const char *text) { return strstr(json, text) != NULL; }

/* Pulls `frames` frames in blocks of `block` (RANDOM_MIX: 1 to GONG_MAX_PULL_FRAMES, drawn), the
 * last one shorter if it must be; with heard times when `heard` (as a callback told its output
 * time would give them). */
static int pull(gong_session *session, long frames, int block, int heard) {
    while (frames > 0) {
        int size = block == RANDOM_MIX ? 1 + rand() % GONG_MAX_PULL_FRAMES : block;
        if (size > frames) size = (int)frames;
        gong_status status =
            heard ? gong_render_at(session, buffer, size, monotonic_ns() + 20000000LL) : gong_render(session, buffer, size);
        if (status != GONG_OK) {
            fprintf(stderr, "pull-status: gong_render gave %d\n", status);
            return 0;
        }
        frames -= size;
    }
    return 1;
}

/* The session's status now holds these, or says which it does not and what it holds. */
static int expect(gong_session *session, const char *label, double elapsed, int cycle, double phase_elapsed,
                  const char *state) {
    char *status = NULL;
    if (gong_session_status(session, &status) != GONG_OK) {
        fprintf(stderr, "pull-status: %s: no status\n", label);
        return 0;
    }
    char quoted_state[32];
    snprintf(quoted_state, sizeof quoted_state, "\"state\":\"%s\"", state);
    /* Frame counts of 1/48000 s: exact in a double, and printed so by the library. */
    int ok = fabs(number(status, "elapsedSeconds") - elapsed) < 1e-9 && number(status, "cycle") == cycle &&
             fabs(number(status, "phaseElapsedSeconds") - phase_elapsed) < 1e-9 && has(status, quoted_state) &&
             has(status, "\"phase\":\"second\"");
    printf("%s %s: %s\n", ok ? "ok" : "FAILED", label, status);
    gong_free(status);
    return ok;
}

static gong_session *started(void) {
    gong_session *session = NULL;
    char *error = NULL;
    if (gong_session_create_pull_toml(pattern, NULL, RATE, CHANNELS, &session, &error) != GONG_OK) {
        fprintf(stderr, "pull-status: %s\n", error);
        gong_free(error);
        exit(1);
    }
    gong_session_start(session);
    return session;
}

/* The control side's thread: a command sent from it while the host's thread waits, so the
 * host's next call is the first to take it. */
struct command {
    gong_session *session;
    gong_status (*send)(gong_session *, char **);
    gong_status result;
};

static void *send_command(void *argument) {
    struct command *command = argument;
    command->result = command->send(command->session, NULL);
    return NULL;
}

static int from_another_thread(gong_session *session, gong_status (*send)(gong_session *, char **)) {
    struct command command = {session, send, GONG_ERR_INTERNAL};
    pthread_t thread;
    if (pthread_create(&thread, NULL, send_command, &command) != 0) return 0;
    pthread_join(thread, NULL);
    return command.result == GONG_OK;
}

int main(void) {
    if (gong_abi_version() != GONG_ABI_VERSION) {
        fprintf(stderr, "pull-status: libgong has ABI %u, this test was built for %d\n", gong_abi_version(),
                GONG_ABI_VERSION);
        return 1;
    }
    srand(36);
    const int blocks[] = {1, 7, 480, 4096, 8192, RANDOM_MIX};
    const long five_and_a_half = RATE * 11L / 2;
    int failed = 0;
    for (size_t index = 0; index < sizeof blocks / sizeof blocks[0]; index++) {
        for (int heard = 0; heard <= 1; heard++) {
            char label[80], size[32];
            if (blocks[index] == RANDOM_MIX)
                snprintf(size, sizeof size, "of 1 to %d, drawn", GONG_MAX_PULL_FRAMES);
            else
                snprintf(size, sizeof size, "of %d", blocks[index]);
            snprintf(label, sizeof label, "5.5 s in blocks %s%s", size, heard ? ", heard times given" : "");
            gong_session *session = started();
            failed |= !pull(session, five_and_a_half, blocks[index], heard);
            failed |= !expect(session, label, 5.5, 6, 0.5, "active");
            gong_session_free(session);
        }
    }

    /* 1.25 s, a pause, 0.75 s pulled while paused (its fade-out included), a resume, 4.25 s:
     * 6.25 s pulled, 5.5 s of them the session's. */
    gong_session *session = started();
    failed |= !pull(session, RATE * 5L / 4, 480, 0);
    failed |= !from_another_thread(session, gong_pause);
    failed |= !pull(session, RATE * 3L / 4, 480, 0);
    failed |= !expect(session, "paused after 1.25 s, 0.75 s pulled since", 1.25, 2, 0.25, "paused");
    failed |= !from_another_thread(session, gong_resume);
    failed |= !pull(session, RATE * 17L / 4, 480, 0);
    failed |= !expect(session, "6.25 s pulled, 0.75 s of it paused", 5.5, 6, 0.5, "active");
    gong_session_free(session);
    return failed ? 1 : 0;
}

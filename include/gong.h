/*
 * gong.h — the C interface to gong's engine (libgong.so).
 *
 * A session plays a pattern live on an audio device, or into a host's own audio callback that
 * pulls its frames (gong_session_create_pull, gong_render): every cue on the exact audio frame
 * its phase begins on. Events come as JSON lines, the same objects `gong run --json` prints (schema
 * in docs/embedding.md); so do the report and the errors' messages.
 *
 * Versioning: gong_abi_version() returns GONG_ABI_VERSION of the library actually loaded. A
 * program built against version N runs with any library whose version is N. Within a version,
 * functions and their meaning never change; a later release may add functions and JSON keys
 * (readers ignore keys they do not know) without changing it. Removing or changing a function,
 * an error code or the meaning of a key raises it, and the library's file name stays libgong.so
 * (check the version at start-up, as the examples do).
 *
 * Errors: no function aborts or exits the process. Each returns a gong_status; where it takes a
 * `char **error`, it stores there (when error is not NULL) a one-line message the caller frees
 * with gong_free, or NULL on success. NULL where a pointer is required is GONG_ERR_ARGUMENT.
 *
 * Threads: every function may be called from any thread, and commands from several threads at
 * once. gong_next_event hands each event out once, to whichever caller takes it. gong_session_free
 * must be the last call on a session, with no other call on it still running.
 *
 * Pulled sessions (gong_session_create_pull): the host's own audio callback calls gong_render
 * (or gong_render_at) for each buffer, from one thread at a time (calls on different threads
 * must be ordered by the host, as an audio callback's are). gong_render is real-time safe: it
 * allocates nothing, takes no lock, never waits, and makes no system call but a non-blocking
 * write to a pipe when it has an event to report. Every other function (commands, events,
 * status, report) may be called from any other thread meanwhile, and they never wait for
 * gong_render. gong_session_report waits until the session is over, which happens only as the
 * host pulls it to its end: do not wait for it on the thread that pulls. Stop calling gong_render
 * before gong_session_free; a session freed before its end reports finished there.
 *
 * Memory: every string the library returns is the caller's, freed with gong_free (never free()),
 * except gong_version()'s, which is the library's; a session is freed with gong_session_free.
 */
#ifndef GONG_H
#define GONG_H

#ifdef __cplusplus
extern "C" {
#endif

#define GONG_ABI_VERSION 1

typedef enum gong_status {
    GONG_OK = 0,
    /* A NULL pointer, malformed options JSON, an option out of range. */
    GONG_ERR_ARGUMENT = 1,
    /* No such pattern, or the pattern (TOML) is wrong; a sound is missing or unreadable. */
    GONG_ERR_PATTERN = 2,
    /* The audio device cannot be opened. */
    GONG_ERR_DEVICE = 3,
    /* The session does not take this command now (resume while playing); nothing changed. */
    GONG_ERR_REFUSED = 4,
    /* The session is over (gong_next_event: every event has been handed out). */
    GONG_ERR_OVER = 5,
    /* gong_next_event: nothing within the timeout. */
    GONG_ERR_TIMEOUT = 6,
    /* A bug in gong: please report it with the message. */
    GONG_ERR_INTERNAL = 7
} gong_status;

typedef struct gong_session gong_session;

/* The ABI version of the loaded library (GONG_ABI_VERSION when they match). */
unsigned int gong_abi_version(void);

/*
 * The release and the commit the library was built from, as `gong --version` prints them:
 * "0.1.0 (1a2b3c4d5e6f)", or "0.1.0" when the build could not tell the commit. The string is
 * the library's and lives as long as the process: do not free it.
 */
const char *gong_version(void);

/*
 * Opens `device` ("auto", "pulse", "pulse:SINK", "default", "hw:0", "null", ...; NULL: "auto")
 * and prepares the session; nothing plays until gong_session_start. `pattern` is a built-in
 * name (two-phase, box, 4-7-8, resonant, coherent, sigh, interval), a name from
 * ~/.config/gong/patterns, or a path to a .toml file. `options_json` (NULL: none) is an object
 * with any of "rate", "channels", "latencyMs", "periodFrames", "gainDB", "format" ("float32",
 * "int32", "int16"). On success *out is the session.
 */
gong_status gong_session_create(const char *pattern, const char *options_json, const char *device,
                                gong_session **out, char **error);

/* The same, with the pattern given as TOML text (the format of pattern files). */
gong_status gong_session_create_toml(const char *toml, const char *options_json, const char *device,
                                     gong_session **out, char **error);

/*
 * A session with no device: the host pulls its frames (gong_render) from its own audio callback,
 * as float samples interleaved at `channels` (1 or 2), at `rate` Hz (8000 to 384000). The host's
 * frames are the session's clock: a cue on frame F is in the F-th frame pulled after
 * gong_session_start, and gong_session_status counts the frames pulled. `pattern` as for gong_session_create. `options_json` (NULL: none) takes
 * only "gainDB" (the output's rate, channels, format and buffering are the host's). Events,
 * commands, status and report work as for a device session.
 */
gong_status gong_session_create_pull(const char *pattern, const char *options_json, int rate, int channels,
                                     gong_session **out, char **error);

/* The same, with the pattern given as TOML text. */
gong_status gong_session_create_pull_toml(const char *toml, const char *options_json, int rate, int channels,
                                          gong_session **out, char **error);

/*
 * Real-time safe (see Threads). Fills `out` (frames * channels floats) with the next `frames`
 * frames of a pulled session, 1 to GONG_MAX_PULL_FRAMES at a time. GONG_OK: the session's frames
 * (silence after its last, in the buffer it ends in). GONG_ERR_REFUSED: gong_session_start has not
 * been called yet; GONG_ERR_OVER: the session has finished; both fill `out` with silence.
 * GONG_ERR_ARGUMENT: NULL, `frames` out of range, or a session on a device; nothing written.
 * Commands sent meanwhile from other threads are taken at the start of the next call.
 */
#define GONG_MAX_PULL_FRAMES 8192
gong_status gong_render(gong_session *session, float *out, int frames);

/*
 * gong_render, told when the buffer's first frame is heard: `heard_at_ns` on CLOCK_MONOTONIC
 * (e.g. a callback's output time). Events then say when they are heard ("audible"); 0 for
 * unknown, as gong_render.
 */
gong_status gong_render_at(gong_session *session, float *out, int frames, long long heard_at_ns);

/* Starts playing (a pulled session: from the next gong_render on). A second call does nothing. */
gong_status gong_session_start(gong_session *session);

/* Commands, carried out at once or refused (GONG_ERR_REFUSED, with why in *error). */
gong_status gong_pause(gong_session *session, char **error);
gong_status gong_resume(gong_session *session, char **error);
gong_status gong_skip(gong_session *session, char **error);
/* Ends early: the end cue plays and every tail rings out. */
gong_status gong_stop(gong_session *session, char **error);
/* The master gain in dB, -60 to 12 (GONG_ERR_ARGUMENT outside). */
gong_status gong_set_gain(gong_session *session, double decibels, char **error);

/*
 * The next event as one JSON object (no newline) in *event_json. timeout_ms: -1 waits for it,
 * 0 only looks. The last event is "finished"; after it, GONG_ERR_OVER.
 *
 * A device lost mid-session is {"type":"deviceLost", "reason":..., "errno":..., "message":...}:
 * "errno" is the system's positive error number (0 for none; ENODEV when the device or its
 * server went away, EAGAIN when it took no audio for 2 s), "reason" its class, to act on
 * without parsing "message": "disconnected", "stalled", "busy", "noSuchDevice",
 * "permissionDenied", "noServer", "timedOut" or "other" (read a name this header does not list
 * as "other"). The session pauses and retries the device; "deviceBack" follows when it returns.
 * (These keys came within ABI version 1: a library that lacks them leaves them out.)
 */
gong_status gong_next_event(gong_session *session, int timeout_ms, char **event_json);

/*
 * Where the session stands now, as the control channel's "status" object. It never waits for
 * the audio side or for events to be taken. A pulled session stands where the frames pulled so
 * far end, exactly as of the end of the last gong_render, however fast the host pulls and
 * whether or not it gave heard times (those say when frames are heard, not where the session
 * is): elapsed, cycle, phase and the phase's elapsed time count every frame pulled since
 * gong_session_start but those pulled while paused. A device session stands where what is
 * heard now is, by the device's clock.
 */
gong_status gong_session_status(gong_session *session, char **status_json);

/* Waits until the session is over; its report: the "finished" event's fields. */
gong_status gong_session_report(gong_session *session, char **report_json);

/* Frees a string the library returned. NULL is ignored. */
void gong_free(char *string);

/*
 * Frees the session. One still playing halts (fades out over 15 ms, cutting tails) and its
 * device is closed once its audio thread has ended; this call does not wait for that.
 */
void gong_session_free(gong_session *session);

#ifdef __cplusplus
}
#endif

#endif /* GONG_H */

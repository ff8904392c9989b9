/* Plays a 3-second session with libgong and prints its events as they come, then its report.
 * Build: cc -Iinclude Examples/c/play.c -L.build/debug -lgong -o play   (after `make lib`)
 * Run:   LD_LIBRARY_PATH=.build/debug ./play [DEVICE]   (default: null) */
#include <stdio.h>
#include "gong.h"

static const char *pattern =
    "name = \"three\"\n"
    "[[phases]]\n"
    "name = \"sit\"\n"
    "length = \"3s\"\n"
    "cue = \"bowl\"\n";

int main(int argc, char **argv) {
    const char *device = argc > 1 ? argv[1] : "null";
    if (gong_abi_version() != GONG_ABI_VERSION) {
        fprintf(stderr, "play: libgong has ABI %u, this program was built for %d\n", gong_abi_version(), GONG_ABI_VERSION);
        return 69;
    }
    gong_session *session = NULL;
    char *error = NULL;
    /* Bad input is an error code and a message, never an abort. */
    if (gong_session_create("no-such-pattern", NULL, device, &session, &error) != GONG_ERR_PATTERN) return 70;
    printf("refused: %s\n", error);
    gong_free(error);

    if (gong_session_create_toml(pattern, "{\"rate\": 48000, \"gainDB\": -6}", device, &session, &error) != GONG_OK) {
        fprintf(stderr, "play: %s\n", error);
        gong_free(error);
        return 69;
    }
    gong_session_start(session);
    char *event = NULL;
    gong_status status;
    while ((status = gong_next_event(session, -1, &event)) == GONG_OK) {
        printf("event: %s\n", event);
        gong_free(event);
    }
    char *report = NULL;
    gong_session_report(session, &report);
    printf("report: %s\n", report);
    gong_free(report);
    gong_session_free(session);
    return status == GONG_ERR_OVER ? 0 : 70;
}

// pw-tap: records a PipeWire sink's monitor on the graph's own clock, for bench/exactness.py.
//
//   pw-tap SINK SECONDS OUT.f32     (channel 0 as float32, native byte order; NaN where no cycle came)
//
// The recorder is the live tests' (Tests/CPipeWireTap/include/pipewire_tap.h says why a recording
// on the graph's clock, and not parec's, shows whether a player kept its cues on their frames).
// It ends after SECONDS or on SIGINT/SIGTERM, writes the file and prints one line to stderr:
// frames recorded, frames missed, cycles moved back.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "pipewire_tap.h"

static volatile sig_atomic_t ending;
static void on_signal(int signal_number) { (void)signal_number; ending = 1; }

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: pw-tap SINK SECONDS OUT.f32\n");
        return 64;
    }
    double seconds = atof(argv[2]);
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    pipewire_tap *tap = pipewire_tap_open(NULL, argv[1], (uint32_t)(seconds * 48000), 10000);
    if (!tap) {
        fprintf(stderr, "pw-tap: no cycle from %s's monitor within 10 s\n", argv[1]);
        return 69;
    }
    for (double waited = 0; waited < seconds && !ending; waited += 0.05)
        nanosleep(&(struct timespec){0, 50000000}, NULL);
    pipewire_tap_stop(tap);
    uint32_t frames = pipewire_tap_frames(tap);
    FILE *out = fopen(argv[3], "wb");
    if (!out || fwrite(pipewire_tap_samples(tap), sizeof(float), frames, out) != frames || fclose(out) != 0) {
        fprintf(stderr, "pw-tap: cannot write %s\n", argv[3]);
        return 73;
    }
    fprintf(stderr, "pw-tap: %u frames on the graph's clock, %u missed, %u cycles moved back\n", frames,
            pipewire_tap_missed_frames(tap), pipewire_tap_moved_cycles(tap));
    pipewire_tap_close(tap);
    return 0;
}

// jack-cycle-trace: each cycle of a JACK server as a client of its own sees it, for bench/RESULTS.md
// ("JACK: a stop of gong's beside a clock restart"). A process that is not stopped watches the
// server's timeline while gong is: whether the moment each frame is played moved (jack2's timed
// drivers re-anchor their timeline when they wake past a cycle's deadline) or only gong's
// mapping of it did.
//
//   cc -O2 -o jack-cycle-trace jack-cycle-trace.c -ljack
//   JACK_DEFAULT_SERVER=gong_test ./jack-cycle-trace SECONDS > trace.txt
//
// Printed, one line a cycle: CLOCK_MONOTONIC at the callback's wake-up (ns), the frame time,
// jack_get_cycle_times' current_usecs and next_usecs, and where the wake-up puts frame 0
// (wake − frame / rate, ns): the earliest of a window of those is the server's timeline, and a
// step in it that stays is the timeline moving.
#include <jack/jack.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct cycle {
    int64_t wake;
    jack_nframes_t frame_time, current_frames;
    jack_time_t current_usecs, next_usecs;
};

static struct cycle *cycles;
static volatile size_t count, capacity;
static jack_client_t *client;

static int64_t monotonic_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

static int on_process(jack_nframes_t frames, void *data) {
    (void)frames, (void)data;
    int64_t wake = monotonic_ns();
    if (count >= capacity) return 0;
    struct cycle *cycle = &cycles[count];
    cycle->wake = wake;
    cycle->frame_time = jack_last_frame_time(client);
    float period;
    jack_get_cycle_times(client, &cycle->current_frames, &cycle->current_usecs, &cycle->next_usecs, &period);
    count++;
    return 0;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 20;
    jack_status_t status;
    client = jack_client_open("trace_cycles", JackNoStartServer, &status);
    if (!client) return fprintf(stderr, "jack-cycle-trace: no JACK server\n"), 69;
    uint32_t rate = jack_get_sample_rate(client), period = jack_get_buffer_size(client);
    capacity = (size_t)(seconds * rate / period) + 16;
    cycles = calloc(capacity, sizeof *cycles);
    jack_set_process_callback(client, on_process, NULL);
    jack_activate(client);
    usleep((useconds_t)(seconds * 1e6));
    jack_deactivate(client);
    printf("# rate %u period %u cycles %zu\n# wake_ns frame_time current_usecs next_usecs origin_ns\n", rate, period,
           (size_t)count);
    for (size_t index = 0; index < count; index++) {
        struct cycle *cycle = &cycles[index];
        int64_t origin = cycle->wake - (int64_t)((double)cycle->frame_time * 1e9 / rate);
        printf("%lld %u %llu %llu %lld\n", (long long)cycle->wake, cycle->frame_time,
               (unsigned long long)cycle->current_usecs, (unsigned long long)cycle->next_usecs, (long long)origin);
    }
    jack_client_close(client);
    return 0;
}

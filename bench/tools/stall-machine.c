// stall-machine: stands the whole machine still now and then, as a hypervisor taking its CPUs
// away does: on every CPU a thread at SCHED_FIFO 99 spins for a random MIN..MAX ms, every random
// GAP_MIN..GAP_MAX ms, for SECONDS. Every other thread waits meanwhile, sound servers' real-time
// ones too (the kernel's real-time throttling, 95% of each second by default, still bounds it).
//
//   stall-machine SECONDS MIN_MS MAX_MS GAP_MIN_MS GAP_MAX_MS     (root, or CAP_SYS_NICE)
//
// Prints how many stalls it made to stderr. Used to reproduce what a noisy 2-core machine does
// to a session and its witnesses (bench/RESULTS.md, stop 58); build with
// `cc -O2 -pthread -o out/stall-machine bench/tools/stall-machine.c`.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_CPUS 64

static double now_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

/// Raised once per stall; each spinner spins until `until` when it sees it move. -1: end.
static _Atomic int generation;
static _Atomic double until;

static void *spin(void *argument) {
    long cpu = (long)argument;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
    int seen = 0;
    for (;;) {
        int current;
        while ((current = atomic_load(&generation)) == seen) usleep(200);
        if (current < 0) return NULL;
        seen = current;
        while (now_seconds() < atomic_load(&until)) {
        }
    }
}

static int between(int low, int high) { return low + (high > low ? rand() % (high - low + 1) : 0); }

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: stall-machine SECONDS MIN_MS MAX_MS GAP_MIN_MS GAP_MAX_MS\n");
        return 64;
    }
    double seconds = atof(argv[1]);
    int shortest = atoi(argv[2]), longest = atoi(argv[3]), gap_least = atoi(argv[4]), gap_most = atoi(argv[5]);
    if (seconds <= 0 || shortest <= 0 || longest < shortest || gap_least <= 0 || gap_most < gap_least) {
        fprintf(stderr, "stall-machine: SECONDS and the milliseconds must be positive, each MAX at least its MIN\n");
        return 64;
    }
    // Every thread made from here on inherits the policy: the spinners, and this one, which must
    // wake on time to start the next stall.
    struct sched_param priority = {.sched_priority = 99};
    if (sched_setscheduler(0, SCHED_FIFO, &priority) != 0) {
        perror("stall-machine: SCHED_FIFO (run as root)");
        return 77;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    if (cpus < 1) cpus = 1;
    if (cpus > MAX_CPUS) cpus = MAX_CPUS;
    pthread_t spinners[MAX_CPUS];
    for (long cpu = 0; cpu < cpus; cpu++) pthread_create(&spinners[cpu], NULL, spin, (void *)cpu);
    srand((unsigned)getpid());
    double end = now_seconds() + seconds;
    int stalls = 0;
    while (now_seconds() < end) {
        usleep((useconds_t)between(gap_least, gap_most) * 1000);
        int milliseconds = between(shortest, longest);
        atomic_store(&until, now_seconds() + milliseconds / 1000.0);
        atomic_fetch_add(&generation, 1);
        stalls++;
        // Past the stall, and the spinners' 200 µs to see it.
        usleep((useconds_t)milliseconds * 1000 + 2000);
    }
    atomic_store(&generation, -1);
    for (long cpu = 0; cpu < cpus; cpu++) pthread_join(spinners[cpu], NULL);
    fprintf(stderr, "stall-machine: %d stalls\n", stalls);
    return 0;
}

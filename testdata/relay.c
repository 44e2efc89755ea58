// A target whose sampled thread is created by a thread that then exits, for
// cctop's attach tests: the main thread starts a relay thread at once; after
// DELAY_MS the relay starts a worker and exits; the worker spins in
// relay_worker -> leaf_compute for WORK_MS and prints its tid; main exits
// after the worker is done. The worker's line reads "worker 1 tid N", as
// attach.c's do. A profiler that closes a thread's events when
// the thread exits loses every thread that inherited them: the worker here.
// Build with -O0 -fno-omit-frame-pointer -pthread, as attach.c.
//
//	relay [DELAY_MS [WORK_MS]]
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static long delay_ms = 1000, work_ms = 1500;
static pthread_t worker;

static long now_ms(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

__attribute__((noinline)) unsigned long leaf_compute(unsigned long x) {
	for (int i = 0; i < 2000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) void *relay_worker(void *arg) {
	printf("worker 1 tid %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	unsigned long x = 1;
	for (long end = now_ms() + work_ms; now_ms() < end;)
		x = leaf_compute(x);
	sink += x;
	return arg;
}

static void *relay(void *arg) {
	struct timespec ts = {delay_ms / 1000, (delay_ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
	pthread_create(&worker, NULL, relay_worker, NULL);
	printf("relay tid %ld exits\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	return arg;
}

int main(int argc, char **argv) {
	if (argc > 1)
		delay_ms = atol(argv[1]);
	if (argc > 2)
		work_ms = atol(argv[2]);
	pthread_t r;
	pthread_create(&r, NULL, relay, NULL);
	pthread_join(r, NULL);
	pthread_join(worker, NULL);
	return 0;
}

// A target for the switch-samples toggle test: its main thread sleeps
// ROUNDS times for MS milliseconds each, waiting on its stdin (poll), and
// each byte it reads there starts one more thread, named "late", that
// sleeps MS at a time (nanosleep) until the process ends. The test starts
// a thread when it has changed what is sampled, by writing a byte: no
// timing to guess.
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long ms;

static void *late(void *arg) {
	(void)arg;
	pthread_setname_np(pthread_self(), "late");
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	for (;;)
		nanosleep(&ts, NULL);
	return NULL;
}

int main(int argc, char **argv) {
	int rounds = argc > 1 ? atoi(argv[1]) : 100;
	ms = argc > 2 ? atol(argv[2]) : 10;
	struct pollfd in = {0, POLLIN, 0};
	for (int i = 0; i < rounds; i++) {
		if (poll(&in, 1, ms) <= 0)
			continue;
		char c;
		if (read(0, &c, 1) != 1) {
			in.fd = -1; // end of input: poll ignores it, and just waits
			continue;
		}
		pthread_t t;
		pthread_create(&t, NULL, late, NULL);
	}
	return 0;
}

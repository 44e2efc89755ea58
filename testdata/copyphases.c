// copyphases: two threads for the learning unwinding plan (issue 34).
// "steady" runs frame-pointer code all along; "phases" runs, for a third
// of its life each, code that keeps no frame pointer (nofp_outer ->
// nofp_mid, non-leaves the kernel's chain skips), frame-pointer code, and
// the first again. Built with -O2 -fno-omit-frame-pointer; the nofp_
// functions drop theirs by attribute. Usage: copyphases SECONDS.
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile long sink;
static double secs = 6;

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) long spin_leaf(long x) {
	for (int i = 0; i < 2000; i++)
		x = x * 6364136223846793005L + 1442695040888963407L;
	return x;
}

#define NOFP __attribute__((noinline, optimize("omit-frame-pointer")))
NOFP long nofp_mid(long x) {
	volatile long a[16];
	for (int i = 0; i < 16; i++)
		a[i] = spin_leaf(x + i);
	return a[3] ^ a[9];
}
NOFP long nofp_outer(long x) {
	volatile long b[8];
	for (int i = 0; i < 8; i++)
		b[i] = nofp_mid(x + i);
	return b[1] + b[6];
}

__attribute__((noinline)) long fp_mid(long x) {
	long s = 0;
	for (int i = 0; i < 16; i++)
		s ^= spin_leaf(x + i);
	return s;
}
__attribute__((noinline)) long fp_outer(long x) {
	long s = 0;
	for (int i = 0; i < 8; i++)
		s += fp_mid(x + i);
	return s;
}

__attribute__((noinline)) void phase_nofp(double until) {
	for (long i = 0; now() < until; i++)
		sink += nofp_outer(i);
}
__attribute__((noinline)) void phase_fp(double until) {
	for (long i = 0; now() < until; i++)
		sink += fp_outer(i);
}

static void *phases(void *arg) {
	double t0 = now();
	(void)arg;
	phase_nofp(t0 + secs / 3);
	phase_fp(t0 + 2 * secs / 3);
	phase_nofp(t0 + secs);
	return 0;
}

static void *steady(void *arg) {
	(void)arg;
	phase_fp(now() + secs);
	return 0;
}

int main(int argc, char **argv) {
	if (argc > 1)
		secs = atof(argv[1]);
	pthread_t a, b;
	pthread_create(&a, 0, steady, 0);
	pthread_create(&b, 0, phases, 0);
	pthread_join(a, 0);
	pthread_join(b, 0);
	return 0;
}

// deep20: two threads that spend their time 20 calls deep, for measuring
// ingest on stacks of a known depth (bench/ingest.sh, BenchmarkIngestDeep).
// Usage: deep20 SECONDS. Build: gcc -O1 -fno-omit-frame-pointer -pthread.
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static volatile uint64_t sink;
static double seconds = 2;

static double now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) uint64_t f0(uint64_t x) {
	for (int i = 0; i < 20000; i++) {
		x ^= x >> 12; x ^= x << 25; x ^= x >> 27; x *= 0x2545F4914F6CDD1DULL;
	}
	return x;
}

#define F(n, m) \
	__attribute__((noinline)) uint64_t f##n(uint64_t x) { uint64_t r = f##m(x + n); sink = r; return r + 1; }
F(1, 0) F(2, 1) F(3, 2) F(4, 3) F(5, 4) F(6, 5) F(7, 6) F(8, 7) F(9, 8) F(10, 9)
F(11, 10) F(12, 11) F(13, 12) F(14, 13) F(15, 14) F(16, 15) F(17, 16) F(18, 17) F(19, 18)

static void *run(void *arg) {
	double end = now() + seconds;
	uint64_t x = (uintptr_t)arg | 1;
	while (now() < end)
		x = f19(x);
	sink = x;
	return 0;
}

int main(int argc, char **argv) {
	if (argc > 1)
		seconds = atof(argv[1]);
	pthread_t t[2];
	for (uintptr_t i = 0; i < 2; i++)
		pthread_create(&t[i], 0, run, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], 0);
	return 0;
}

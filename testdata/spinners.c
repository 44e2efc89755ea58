// spinners: N threads that each call four small functions in a loop for S
// seconds, all alive at once. For the many-CPU event-count tests.
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile int stop;
static volatile long sink;

__attribute__((noinline)) void fa(long i) { sink += i; }
__attribute__((noinline)) void fb(long i) { sink ^= i; }
__attribute__((noinline)) void fc(long i) { sink += i * 3; }
__attribute__((noinline)) void fd(long i) { sink -= i; }

static void *spin(void *arg) {
	(void)arg;
	for (long i = 0; !stop; i++) {
		fa(i);
		fb(i);
		fc(i);
		fd(i);
		if (i % 1000 == 0)
			usleep(1000); // mostly idle: many threads on 2 CPUs
	}
	return 0;
}

int main(int argc, char **argv) {
	int n = argc > 1 ? atoi(argv[1]) : 4;
	int secs = argc > 2 ? atoi(argv[2]) : 2;
	pthread_t *t = calloc(n, sizeof *t);
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], 0, spin, 0);
	sleep(secs);
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], 0);
	return 0;
}

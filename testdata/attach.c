// A multi-threaded target for cctop's attach tests, built with frame
// pointers: workers run worker_main -> work_loop -> leaf_compute. Build it
// with -O0 -fno-omit-frame-pointer: gcc 12 at -O1 and up sets up no frame in
// leaf functions even with -mno-omit-leaf-frame-pointer, and recovering the
// caller such leaves hide belongs to the unwinder, not to this test. After a
// delay one more worker starts, so a test can check that threads created
// after the attach are sampled. Each thread prints its tid.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static volatile int stop;

__attribute__((noinline)) unsigned long leaf_compute(unsigned long x) {
	for (int i = 0; i < 2000; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) void work_loop(long id) {
	unsigned long x = id;
	while (!stop)
		x = leaf_compute(x);
	sink += x;
}

__attribute__((noinline)) void *worker_main(void *arg) {
	printf("worker %ld tid %ld\n", (long)arg, (long)syscall(SYS_gettid));
	fflush(stdout);
	work_loop((long)arg);
	// Something after the call keeps it a real call, not a tail jump that
	// would drop worker_main from the stack.
	printf("worker %ld done\n", (long)arg);
	return NULL;
}

static void sleep_ms(long ms) {
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

int main(int argc, char **argv) {
	int early = argc > 1 ? atoi(argv[1]) : 3;
	long late_ms = argc > 2 ? atol(argv[2]) : 1000;
	long total_ms = argc > 3 ? atol(argv[3]) : 5000;
	pthread_t th[64];
	int n = 0;
	printf("pid %ld\n", (long)getpid());
	fflush(stdout);
	for (; n < early && n < 63; n++)
		pthread_create(&th[n], NULL, worker_main, (void *)(long)n);
	sleep_ms(late_ms);
	pthread_create(&th[n], NULL, worker_main, (void *)(long)n);
	n++;
	sleep_ms(total_ms - late_ms);
	stop = 1;
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	return 0;
}

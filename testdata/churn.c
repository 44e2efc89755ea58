// A target that keeps threads coming and going, for cctop's descriptor leak
// tests: up to CONCURRENCY threads at a time, each spinning in churn_work
// for LIFE_US microseconds before it exits, new ones started as old ones end,
// for DURATION_MS. Prints how many threads it started. Build with -O0
// -fno-omit-frame-pointer -pthread, as attach.c.
//
//	churn [DURATION_MS [LIFE_US [CONCURRENCY]]]
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static long life_us = 2000;
static sem_t slots;

static long now_us(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000L + ts.tv_nsec / 1000L;
}

__attribute__((noinline)) unsigned long leaf_compute(unsigned long x) {
	for (int i = 0; i < 200; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) void *churn_work(void *arg) {
	unsigned long x = (unsigned long)arg;
	for (long end = now_us() + life_us; now_us() < end;)
		x = leaf_compute(x);
	sink += x;
	sem_post(&slots);
	return NULL;
}

int main(int argc, char **argv) {
	long duration_ms = argc > 1 ? atol(argv[1]) : 3000;
	if (argc > 2)
		life_us = atol(argv[2]);
	int concurrency = argc > 3 ? atoi(argv[3]) : 4;
	sem_init(&slots, 0, concurrency);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	long started = 0;
	for (long end = now_us() + duration_ms * 1000L; now_us() < end;) {
		sem_wait(&slots);
		pthread_t t;
		if (pthread_create(&t, &attr, churn_work, (void *)started) != 0) {
			sem_post(&slots);
			continue;
		}
		started++;
	}
	for (int i = 0; i < concurrency; i++)
		sem_wait(&slots);
	printf("threads %ld\n", started);
	return 0;
}

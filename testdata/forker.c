// A target that forks, for cctop's fault tests: the parent spins in
// parent_work, forks CHILDREN processes that each spin in child_work for
// CHILD_MS, keeps spinning until they have all exited, then spins another
// AFTER_MS and exits 0. Built with -O0 -fno-omit-frame-pointer, as attach.c.
//
//	forker [CHILDREN [BEFORE_MS [CHILD_MS [AFTER_MS]]]]
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

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

__attribute__((noinline)) void child_work(long ms) {
	unsigned long x = 1;
	for (long end = now_ms() + ms; now_ms() < end;)
		x = leaf_compute(x);
	sink += x;
}

__attribute__((noinline)) void parent_work(long ms) {
	unsigned long x = 2;
	for (long end = now_ms() + ms; now_ms() < end;)
		x = leaf_compute(x);
	sink += x;
}

int main(int argc, char **argv) {
	int children = argc > 1 ? atoi(argv[1]) : 2;
	long before = argc > 2 ? atol(argv[2]) : 500;
	long child_ms = argc > 3 ? atol(argv[3]) : 1000;
	long after = argc > 4 ? atol(argv[4]) : 500;
	printf("parent %d\n", (int)getpid());
	fflush(stdout);
	parent_work(before);
	for (int i = 0; i < children; i++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			printf("child %d\n", (int)getpid());
			fflush(stdout);
			child_work(child_ms);
			_exit(0);
		}
	}
	int left = children;
	while (left > 0) {
		parent_work(10);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			left--;
	}
	parent_work(after);
	printf("done\n");
	return 0;
}

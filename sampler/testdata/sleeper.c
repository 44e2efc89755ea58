// A target for the off-CPU tests: it sleeps ROUNDS times for MS
// milliseconds each (nanosleep), doing almost nothing in between, so that
// its time off the CPU is known. Built with frame pointers: sleep_round ->
// main is on the stack of every sleep. Built with -no-pie, so that a test
// finds their addresses in the ELF symbols.
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) void sleep_round(long ms) {
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
	// Something after the call keeps it a call, not a tail jump that
	// would drop sleep_round from the stack.
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv) {
	int rounds = argc > 1 ? atoi(argv[1]) : 40;
	long ms = argc > 2 ? atol(argv[2]) : 10;
	for (int i = 0; i < rounds; i++)
		sleep_round(ms);
	return 0;
}

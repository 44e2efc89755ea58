// A call-density target for cctop's counter tests: site_c calls leaf with
// input n, site_d calls it with 2n, equally often; each round runs both.
// Prints the exact number of calls per edge at exit.
#include <stdio.h>
#include <stdlib.h>

static volatile unsigned long sink;

__attribute__((noinline)) unsigned long leaf(unsigned long x, long n) {
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

__attribute__((noinline)) unsigned long site_c(unsigned long x, long calls, long n) {
	for (long i = 0; i < calls; i++)
		x = leaf(x, n);
	return x + 1;
}

__attribute__((noinline)) unsigned long site_d(unsigned long x, long calls, long n) {
	for (long i = 0; i < calls; i++)
		x = leaf(x, 2 * n);
	return x + 1;
}

int main(int argc, char **argv) {
	long rounds = argc > 1 ? atol(argv[1]) : 100;
	long calls = argc > 2 ? atol(argv[2]) : 10000;
	long n = argc > 3 ? atol(argv[3]) : 300;
	unsigned long x = 1;
	for (long r = 0; r < rounds; r++) {
		x = site_c(x, calls, n);
		x = site_d(x, calls, n);
	}
	sink = x;
	printf("calls main -> site_c %ld\ncalls main -> site_d %ld\n", rounds, rounds);
	printf("calls site_c -> leaf %ld\ncalls site_d -> leaf %ld\n", rounds * calls, rounds * calls);
	return 0;
}

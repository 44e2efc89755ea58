// Target of plt_test.go, run as "plt MODE SECONDS":
//   lib   calls plt_hot of libpltlib.so, whose memcpy goes through the
//         library's PLT;
//   exe   runs the same loop here, through the executable's own PLT;
//   spin  runs a static function, which a stripped build leaves unnamed.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

unsigned long plt_hot(unsigned long rounds, size_t n);

static char src[64], dst[64];

static __attribute__((noinline, noclone)) unsigned long exe_hot(unsigned long rounds, size_t n) {
	unsigned long sum = 0;
	for (unsigned long r = 0; r < rounds; r++) {
		memcpy(dst, src + (r & 7), n);
		sum += dst[0];
	}
	return sum;
}

static __attribute__((noinline, noclone)) unsigned long spin(unsigned long rounds) {
	unsigned long x = rounds;
	for (unsigned long i = 0; i < rounds; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

static double now(void) {
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
	if (argc != 3) {
		fprintf(stderr, "usage: plt lib|exe|spin SECONDS\n");
		return 2;
	}
	const char *mode = argv[1];
	double end = now() + atof(argv[2]);
	// The copy size comes from the command line so that gcc cannot
	// inline memcpy.
	size_t n = strlen(mode) / 3;
	unsigned long sum = 0;
	while (now() < end) {
		if (strcmp(mode, "lib") == 0)
			sum += plt_hot(100000, n);
		else if (strcmp(mode, "exe") == 0)
			sum += exe_hot(100000, n);
		else
			sum += spin(1000000);
	}
	printf("%lu\n", sum & 1);
	return 0;
}

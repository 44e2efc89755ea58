// Shared library of plt.c (plt_test.go): each round of plt_hot copies a
// byte or so with memcpy, called through this library's PLT, so that the
// stub holds a few percent of the samples, as in a real interpreter.
#include <string.h>

static char src[64], dst[64];

unsigned long plt_hot(unsigned long rounds, size_t n) {
	unsigned long sum = 0;
	for (unsigned long r = 0; r < rounds; r++) {
		memcpy(dst, src + (r & 7), n);
		sum += dst[0];
	}
	return sum;
}

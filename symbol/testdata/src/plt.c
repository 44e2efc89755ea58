// Test target for PLT stub and unnamed-code names (plt_test.go): main calls
// memcpy through the PLT with a size gcc cannot see, so the copy is not
// inlined, and spin is a static function that a stripped build leaves
// without a symbol.
#include <stdio.h>
#include <string.h>

static char src[64], dst[64];

static __attribute__((noinline)) unsigned long spin(unsigned long n) {
	unsigned long x = n;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	return x;
}

int main(int argc, char **argv) {
	size_t n = argc > 1 ? strlen(argv[1]) : 1;
	unsigned long sum = 0;
	for (int i = 0; i < 1000; i++) {
		memcpy(dst, src + (i & 7), n);
		sum += dst[0];
	}
	printf("%lu\n", sum + spin(n << 20));
	return 0;
}

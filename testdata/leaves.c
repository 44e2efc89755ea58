/* Leaf functions that set up no frame (gcc -O1 omits frame pointers), each
 * called from two callers, so a profile shows whether the unwinder finds
 * the real caller of a frameless leaf: a frame-pointer walk skips it. */
#include <stdlib.h>

__attribute__((noinline)) long mix(long x, long n)
{
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005L + 1442695040888963407L + (x >> 29);
	return x;
}

__attribute__((noinline)) long fold(long x, long n)
{
	long a[8] = {0};
	for (long i = 0; i < n; i++)
		a[i & 7] += x ^ (x << i % 13);
	return a[0] + a[3] + a[7];
}

__attribute__((noinline)) long caller_a(long x)
{
	return mix(x, 20000) + fold(x, 10000) + 1;
}

__attribute__((noinline)) long caller_b(long x)
{
	return mix(x, 10000) * 3 + fold(x, 20000);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 3000;
	long s = 0;
	for (long r = 0; r < rounds; r++)
		s += caller_a(s + r) ^ caller_b(s - r);
	return (int)(s & 1);
}

/* Functions whose call frame information exercises the CFI interpreter:
 * callee-saved registers under pressure, alloca, stack realignment (with
 * and without a DRAP register), several epilogues, varargs, noreturn.
 * The readelf cross-check compiles it at several optimization levels. */
#include <alloca.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) long leafsum(long *a, int n) {
	long s = 0;
	for (int i = 0; i < n; i++)
		s += a[i] * (i + 1);
	return s;
}

__attribute__((noinline)) long pressure(long a, long b, long c, long d, long e, long f) {
	long x1 = a * b, x2 = b * c, x3 = c * d, x4 = d * e, x5 = e * f, x6 = f * a;
	long r = leafsum(&x1, 1);
	r += leafsum(&x2, 1);
	return r + x1 + x2 + x3 + x4 + x5 + x6;
}

__attribute__((noinline)) long aligned_local(int n) {
	__attribute__((aligned(64))) long buf[32];
	for (int i = 0; i < 32; i++)
		buf[i] = (long)i * n;
	return leafsum(buf, 32);
}

__attribute__((noinline)) long with_alloca(int n) {
	long *p = alloca((size_t)n * sizeof(long));
	for (int i = 0; i < n; i++)
		p[i] = i;
	return leafsum(p, n);
}

__attribute__((noinline)) long aligned_vla(int n) {
	__attribute__((aligned(64))) long buf[8];
	long vla[n];
	for (int i = 0; i < n; i++)
		vla[i] = i;
	for (int i = 0; i < 8; i++)
		buf[i] = vla[i % n];
	return leafsum(buf, 8) + leafsum(vla, n);
}

__attribute__((noreturn, noinline)) void die(const char *m) {
	fputs(m, stderr);
	exit(2);
}

__attribute__((noinline)) long multi_exit(int k, long *v) {
	if (k < 0)
		die("negative\n");
	switch (k % 4) {
	case 0:
		return leafsum(v, k);
	case 1:
		return pressure(k, k + 1, k + 2, k + 3, k + 4, k + 5) + multi_exit(k - 1, v);
	case 2:
		return with_alloca(k + 1) * 3;
	}
	return aligned_local(k);
}

__attribute__((noinline)) long variadic(int n, ...) {
	va_list ap;
	long s = 0;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s += va_arg(ap, long);
	va_end(ap);
	return s;
}

int main(int argc, char **argv) {
	__attribute__((aligned(64))) long big[16];
	int k = argc > 1 ? atoi(argv[1]) : 5;
	memset(big, 0, sizeof big);
	big[3] = k;
	long r = multi_exit(k, big) + aligned_vla(k + 1) + variadic(3, 1L, 2L, (long)k);
	printf("%ld\n", r + big[3]);
	return 0;
}

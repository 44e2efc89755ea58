/* inlined: one static inline function inlined into two callers (annotate, issue 33). usage: inlined SECONDS */
#include <stdlib.h>

volatile double sink;

static inline double mix(double x, int n) {
	double s = x;
	for (int i = 1; i < n; i++)
		s = s * 0.999999 + (double)i / (s + 1.0); /* the inlined hot line */
	return s;
}

__attribute__((noipa)) double left(int n) {
	double a = mix(1.5, n);
	return a * 2;
}

__attribute__((noipa)) double right(int n) {
	double b = mix(2.5, n);
	return b + 3;
}

int main(int argc, char **argv) {
	int secs = argc > 1 ? atoi(argv[1]) : 2;
	volatile int vn = 400000;
	int n = vn;
	for (int r = 0; r < secs * 250; r++) {
		sink += left(n);
		sink += right(n);
	}
	return 0;
}

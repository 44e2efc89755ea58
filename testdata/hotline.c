/* hotline: one hot line inside a longer function (annotate, issue 33). usage: hotline SECONDS */
#include <stdio.h>
#include <stdlib.h>

volatile double sink;

__attribute__((noinline, noipa)) double work(int n) {
	double a = 0, b = 1, c = 2, d = 3;
	for (int i = 0; i < n; i++) {
		a += (double)i * 1.0000001;            /* cheap */
		if (i % 3 == 0) b = b * 1.0000001 + a; /* cheap */
		for (int j = 0; j < 40; j++)           /* the hot line */
			c = c * 0.999999 + (double)j / (a + 1.0);
		d += c / (b + 1.0);                    /* medium: a divide */
	}
	return a + b + c + d;
}

int main(int argc, char **argv) {
	int secs = argc > 1 ? atoi(argv[1]) : 5; volatile int vn = 400000; int n = vn;
	for (int r = 0; r < secs * 25; r++) sink = work(n);
	return 0;
}

// The program of the per-module unwinding tests (unwindmod_test.go): it
// spends its time in unwlib.c's lib_entry for argv[1] seconds (default 2).
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

unsigned long lib_entry(unsigned long n);

__attribute__((noinline)) static unsigned long run(double secs) {
    unsigned long r = 0;
    clock_t end = clock() + (clock_t)(secs * CLOCKS_PER_SEC);
    while (clock() < end) r += lib_entry(2000000);
    return r;
}

int main(int argc, char **argv) {
    double secs = argc > 1 ? atof(argv[1]) : 2.0;
    unsigned long r = run(secs);
    __asm__ volatile("" : "+r"(r));
    printf("%lu\n", r & 1);
    return 0;
}

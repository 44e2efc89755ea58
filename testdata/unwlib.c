// A shared library for the per-module unwinding tests (unwindmod_test.go):
// its calls go three levels deep (lib_entry -> lib_mid -> lib_inner) before
// the hot loop. The tests build it with and without frame pointers, and
// without any CFI, and call it from unwmain.c.
#define NOINLINE __attribute__((noinline))

NOINLINE unsigned long lib_inner(unsigned long n) {
    unsigned long x = n;
    for (unsigned long i = 0; i < n; i++) {
        x = x * 6364136223846793005UL + 1442695040888963407UL;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

NOINLINE unsigned long lib_mid(unsigned long n) {
    unsigned long r = lib_inner(n);
    __asm__ volatile("" : "+r"(r)); // no tail call: lib_mid stays on the stack
    return r ^ n;
}

NOINLINE unsigned long lib_entry(unsigned long n) {
    unsigned long r = lib_mid(n);
    __asm__ volatile("" : "+r"(r));
    return r + 1;
}

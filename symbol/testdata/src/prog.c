// Test target for package symbol: prints the addresses of functions as the
// running process sees them, then waits for stdin to close.
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) int alpha(int x) { return x * 3 + 1; }
__attribute__((noinline)) int beta(int x) { return alpha(x) ^ 0x55; }
static __attribute__((noinline)) int gamma_local(int x) { return beta(x) + 7; }

#ifdef WITH_LIB
extern void *lib_global_addr(void);
extern void *lib_local_addr(void);
#endif

int main(void) {
	volatile int v = gamma_local(3);
	printf("alpha %p\n", (void *)alpha);
	printf("beta %p\n", (void *)beta);
	printf("gamma_local %p\n", (void *)gamma_local);
	printf("main %p\n", (void *)main);
#ifdef WITH_LIB
	printf("lib_global %p\n", lib_global_addr());
	printf("lib_local %p\n", lib_local_addr());
#endif
#ifdef WITH_LIBC
	/* In a PIE these come from the GOT, so they are libc's own addresses;
	 * memset is an IFUNC, so its pointer is the implementation the
	 * resolver picked, e.g. __memset_avx2_unaligned_erms, a local symbol
	 * that only libc's separate debug file names. */
	printf("getpid %p\n", (void *)getpid);
	printf("memset %p\n", (void *)memset);
#endif
	printf("ready\n");
	fflush(stdout);
	char buf[1];
	while (read(0, buf, 1) > 0) {
	}
	return v == 0;
}

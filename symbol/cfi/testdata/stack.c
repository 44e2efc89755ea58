/* Copies its own stack from a leaf five calls deep, with the registers at
 * the copy point, and prints the return addresses glibc's backtrace()
 * (libgcc's CFI unwinder) sees. The unwind test replays the copy with
 * Rule.Step and must find the same chain. Build with -O2 and no frame
 * pointers, -no-pie so the executable's addresses are its link addresses.
 *
 * Usage: stack OUTFILE   (the stack bytes go to OUTFILE, the rest to stdout) */
#define _GNU_SOURCE
#include <execinfo.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXCOPY 65536

static unsigned char copy[MAXCOPY];
static const char *outfile;
static uintptr_t libc_base;
static const char *libc_path;

static int find_libc(struct dl_phdr_info *info, size_t size, void *data) {
	(void)size;
	(void)data;
	if (strstr(info->dlpi_name, "/libc.so.6")) {
		libc_base = info->dlpi_addr;
		libc_path = info->dlpi_name;
		return 1;
	}
	return 0;
}

/* stack_end returns the end of the [stack] mapping: the copy must not run
 * past it. */
static uintptr_t stack_end(void) {
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uintptr_t lo, hi, end = 0;
	while (f && fgets(line, sizeof line, f))
		if (strstr(line, "[stack]") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			end = hi;
	if (f)
		fclose(f);
	return end;
}

__attribute__((noinline)) void leaf(void) {
	/* rip rsp rbp rbx r12 r13 r14 r15, all read at one point */
	uint64_t r[8];
	__asm__ volatile("lea 0(%%rip), %%rax\n\t"
			 "mov %%rax, 0(%0)\n\t"
			 "mov %%rsp, 8(%0)\n\t"
			 "mov %%rbp, 16(%0)\n\t"
			 "mov %%rbx, 24(%0)\n\t"
			 "mov %%r12, 32(%0)\n\t"
			 "mov %%r13, 40(%0)\n\t"
			 "mov %%r14, 48(%0)\n\t"
			 "mov %%r15, 56(%0)\n\t"
			 :
			 : "r"(r)
			 : "rax", "memory");
	size_t n = stack_end() - r[1];
	if (n > MAXCOPY)
		n = MAXCOPY;
	memcpy(copy, (void *)r[1], n);

	void *bt[64];
	int nbt = backtrace(bt, 64);
	dl_iterate_phdr(find_libc, NULL);

	FILE *f = fopen(outfile, "wb");
	if (!f || fwrite(copy, 1, n, f) != n || fclose(f) != 0) {
		perror(outfile);
		exit(1);
	}
	printf("regs");
	for (int i = 0; i < 8; i++)
		printf(" %lx", (unsigned long)r[i]);
	printf("\nlibc %lx %s\nbt", (unsigned long)libc_base, libc_path ? libc_path : "-");
	for (int i = 0; i < nbt; i++)
		printf(" %lx", (unsigned long)bt[i]);
	printf("\n");
	fflush(stdout);
}

/* rec keeps a volatile across the call so gcc can neither turn the
 * recursion into a loop nor make the call a tail call. */
__attribute__((noinline)) int rec(int n) {
	volatile int keep = n;
	if (n == 0) {
		leaf();
		return 1;
	}
	int r = rec(n - 1);
	return r + keep;
}

/* aligned realigns the stack: RBP becomes the CFA register even without
 * -fno-omit-frame-pointer. */
__attribute__((noinline)) int aligned(int n) {
	__attribute__((aligned(64))) volatile int buf[16];
	buf[n & 15] = n;
	return rec(n) + buf[n & 15];
}

/* drap realigns with a variable-length array too: gcc saves the incoming
 * stack pointer in a register and the CFA becomes an expression,
 * DW_OP_breg6 (rbp) -8; DW_OP_deref. */
__attribute__((noinline)) int drap(int n) {
	__attribute__((aligned(64))) volatile int buf[16];
	volatile int vla[n + 1];
	vla[n] = n;
	buf[n & 15] = vla[n];
	return aligned(n) + buf[n & 15];
}

int main(int argc, char **argv) {
	if (argc != 2) {
		fprintf(stderr, "usage: stack OUTFILE\n");
		return 2;
	}
	outfile = argv[1];
	return drap(5) == 0;
}

// A tiny JIT for cctop's jitdump test (jitdump_test.go): it copies a busy
// loop's machine code into anonymous executable memory and describes it in
// /tmp/jit-PID.dump, as JIT runtimes do for perf
// (tools/perf/Documentation/jitdump-specification.txt), mapped PROT_EXEC
// as the marker perf and cctop look for:
//
//   - jitdump_A is loaded at X and runs for a phase, called by run_a;
//   - jitdump_B is loaded over it at X (the same address, the same code)
//     and runs for a phase, called by run_b;
//   - jitdump_B is moved to Y (JIT_CODE_MOVE) and runs for a phase, called
//     by run_moved.
//
// Only the time tells A's samples from B's at X. Each load comes with
// unwinding information (the loop is a frameless leaf: CFA = rsp+8), so
// the caller, which says the phase, is in every stack; B has debug info
// (b.js:42 and :43).
//
// Usage: tinyjit [good|corrupt|truncated] [phase seconds]. corrupt writes a
// record of 8 bytes (less than a record header) after B's load, so the
// move is never decoded; truncated ends the file inside a last code load.
// It prints "pid N", "X 0x..." and "Y 0x...".
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>

// The busy loop: dec %rdi; jnz back to it; ret.
static const unsigned char spin[] = {0x48, 0xff, 0xcf, 0x75, 0xfb, 0xc3};

typedef void (*spinfn)(uint64_t);

static int dump;

static uint64_t now(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static void put(const void *p, size_t n) {
	const char *b = p;
	while (n > 0) {
		ssize_t w = write(dump, b, n);
		if (w <= 0) {
			perror("write");
			exit(1);
		}
		b += w;
		n -= w;
	}
}

static void rec(uint32_t id, uint32_t size, uint64_t ts) {
	uint32_t h[2] = {id, size};
	put(h, sizeof h);
	put(&ts, 8);
}

static void put32(uint32_t v) { put(&v, 4); }
static void put64(uint64_t v) { put(&v, 8); }

// unwinding writes a JIT_CODE_UNWINDING_INFO for the loop at code: an
// .eh_frame that, mapped right after the code at the next 8-byte boundary,
// describes it (CFA = rsp+8, return address at CFA-8), and an
// .eh_frame_hdr, which cctop does not need.
static void unwinding(uint64_t code) {
	unsigned char eh[48] = {
		20, 0, 0, 0,                 // CIE length
		0, 0, 0, 0,                  // CIE id
		1, 'z', 'R', 0,              // version, augmentation
		1, 0x78, 16,                 // code align 1, data align -8, RA column 16
		1, 0x1b,                     // augmentation data: FDE pointers pcrel|sdata4
		0x0c, 7, 8,                  // def_cfa rsp+8
		0x90, 1,                     // offset r16 (RA) at cfa-8
		0, 0,                        // nops
		16, 0, 0, 0,                 // FDE length
		28, 0, 0, 0,                 // CIE pointer: back to offset 0
		0, 0, 0, 0,                  // initial location, below
		sizeof spin, 0, 0, 0,        // range
		0, 0, 0, 0,                  // no augmentation data, nops
		0, 0, 0, 0,                  // terminator
	};
	uint64_t vaddr = code + ((sizeof spin + 7) & ~7ul);
	int32_t loc = (int32_t)(code - (vaddr + 32));
	memcpy(eh + 32, &loc, 4);
	unsigned char hdr[20] = {1};
	uint32_t size = 16 + 24 + sizeof eh + sizeof hdr;
	uint32_t pad = (8 - size % 8) % 8;
	rec(4, size + pad, now());
	put64(sizeof eh + sizeof hdr);
	put64(sizeof hdr);
	put64((sizeof eh + sizeof hdr + 15) & ~15ul);
	put(eh, sizeof eh);
	put(hdr, sizeof hdr);
	put("\0\0\0\0\0\0\0", pad);
}

static void load(uint64_t code, uint64_t index, const char *name) {
	uint32_t size = 16 + 40 + strlen(name) + 1 + sizeof spin;
	rec(0, size, now());
	put32(getpid());
	put32(syscall(SYS_gettid));
	put64(code);
	put64(code);
	put64(sizeof spin);
	put64(index);
	put(name, strlen(name) + 1);
	put((void *)code, sizeof spin);
}

static void debug_info(uint64_t code) {
	const char *file = "b.js";
	uint32_t entry = 8 + 4 + 4 + strlen(file) + 1;
	rec(2, 16 + 16 + 2 * entry, now());
	put64(code);
	put64(2);
	put64(code);
	put32(42);
	put32(0);
	put(file, strlen(file) + 1);
	put64(code + 3);
	put32(43);
	put32(0);
	put(file, strlen(file) + 1);
}

static void move(uint64_t from, uint64_t to, uint64_t index) {
	rec(1, 16 + 48, now());
	put32(getpid());
	put32(syscall(SYS_gettid));
	put64(to);
	put64(from);
	put64(to);
	put64(sizeof spin);
	put64(index);
}

static double phase = 1.0;

// cpu is the thread's CPU time: each phase runs for as much CPU, so the
// three have a third of the samples each however busy the machine is.
static uint64_t cpu(void) {
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

// The callers say the phase; noinline keeps them frames of their own.
// Their loops differ by a constant, so that gcc does not fold them into
// one function (-fipa-icf).
#define PHASE(fn, n)                                                          \
	__attribute__((noinline)) static void fn(spinfn f) {                  \
		uint64_t end = cpu() + (uint64_t)(phase * 1e9);                \
		while (cpu() < end)                                           \
			f(n);                                                 \
		__asm__ volatile("" ::: "memory");                            \
	}
PHASE(run_a, 200001)
PHASE(run_b, 200002)
PHASE(run_moved, 200003)

int main(int argc, char **argv) {
	const char *mode = argc > 1 ? argv[1] : "good";
	if (argc > 2)
		phase = atof(argv[2]);
	char path[64];
	snprintf(path, sizeof path, "/tmp/jit-%d.dump", getpid());
	dump = open(path, O_CREAT | O_TRUNC | O_RDWR, 0644);
	if (dump < 0) {
		perror(path);
		return 1;
	}
	uint32_t hdr[6] = {0x4A695444, 1, 40, 62 /* EM_X86_64 */, 0, getpid()};
	put(hdr, sizeof hdr);
	put64(now());
	put64(0); // flags: CLOCK_MONOTONIC times
	// The marker: perf (and cctop) find the file by this executable
	// mapping of it.
	if (mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, dump, 0) == MAP_FAILED) {
		perror("mmap marker");
		return 1;
	}
	unsigned char *mem = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("mmap code");
		return 1;
	}
	unsigned char *x = mem + 0x100, *y = mem + 0x1200;
	printf("pid %d\nX %p\nY %p\n", getpid(), (void *)x, (void *)y);
	fflush(stdout);

	memcpy(x, spin, sizeof spin);
	unwinding((uint64_t)x);
	load((uint64_t)x, 1, "jitdump_A");
	run_a((spinfn)x);

	memcpy(x, spin, sizeof spin); // "compiled" again, over A
	unwinding((uint64_t)x);
	debug_info((uint64_t)x);
	load((uint64_t)x, 2, "jitdump_B");
	run_b((spinfn)x);

	if (strcmp(mode, "corrupt") == 0)
		rec(0, 8, now()); // a record smaller than its own header
	memcpy(y, x, sizeof spin);
	memset(x, 0xcc, sizeof spin);
	move((uint64_t)x, (uint64_t)y, 2);
	run_moved((spinfn)y);

	if (strcmp(mode, "truncated") == 0) {
		rec(0, 16 + 40 + 5 + sizeof spin, now()); // a load cut after its header
		put32(getpid());
	} else {
		rec(3, 16, now()); // JIT_CODE_CLOSE
	}
	printf("done\n");
	return 0;
}

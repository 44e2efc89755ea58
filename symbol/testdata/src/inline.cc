// Test target for DWARF inline chains (dwarf_test.go): always_inline
// helpers, templates and a namespace, called from a hot loop. Lines the
// test checks carry a "// L:name" marker; the test finds them by it, so
// edits that move lines keep it working.
#include <cstdio>
#include <unistd.h>

namespace cct {

template <typename T>
__attribute__((always_inline)) inline T mix(T x, T k) {
	x ^= x >> 13; // L:mix-first
	x *= k;
	x ^= x >> 7;
	return x * k; // L:mix-last
}

template <typename T>
__attribute__((always_inline)) inline T twice(T x) {
	return mix<T>(x, T(0x9e3779b1)) ^ mix<T>(x + 3, T(0x85ebca6b)); // L:twice-calls
}

__attribute__((always_inline)) inline unsigned rotl(unsigned x, int r) {
	return (x << r) | (x >> (32 - r)); // L:rotl
}

template <typename T>
__attribute__((noinline)) T hot_loop(T seed, int n) { // L:hot_loop-first
	T acc = seed;
	for (int i = 0; i < n; i++) {
		acc += twice<T>(acc + T(i)); // L:call-twice
		acc = rotl(acc, i & 15);     // L:call-rotl
	}
	return acc;
} // L:hot_loop-last

} // namespace cct

int main() {
	volatile unsigned v = cct::hot_loop<unsigned>(1, 1000);
	printf("hot_loop %p\n", (void *)&cct::hot_loop<unsigned>);
	printf("ready\n");
	fflush(stdout);
	char buf[1];
	while (read(0, buf, 1) > 0) {
	}
	return v == 0;
}

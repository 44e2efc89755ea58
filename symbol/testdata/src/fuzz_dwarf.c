// Seed program for FuzzDWARF (dwarf_fuzz_test.go): tiny, freestanding,
// with a nested always_inline chain. Compiled as C and as C++ (where the
// names get a namespace, linkage names and DW_AT_specification).
#ifdef __cplusplus
namespace seed {
#endif

static inline __attribute__((always_inline)) int sq(int x) { return x * x; } // L:sq
static inline __attribute__((always_inline)) int sq2(int x) { return sq(x) + sq(x + 1); } // L:sq2
__attribute__((noinline)) int leaf(int x) { return sq2(x) ^ x; } // L:leaf

#ifdef __cplusplus
}
extern "C" void _start(void);
using seed::leaf;
#endif

volatile int in = 3;

void _start(void) {
	volatile int v = leaf(in);
	for (;;) {
	}
}

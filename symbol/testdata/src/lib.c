// Shared library for package symbol's tests.
__attribute__((noinline)) int lib_global(int x) { return x + 42; }
static __attribute__((noinline)) int lib_local(int x) { return lib_global(x) * 2; }
void *lib_global_addr(void) { return (void *)lib_global; }
void *lib_local_addr(void) { return (void *)lib_local; }

// A C++ target for symbolization tests: namespaces, a class template and a
// member function, not inlined. add is a leaf: at -O2 gcc gives it no frame.
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace shapes {

template <typename T>
struct Accumulator {
    T total = 0;
    __attribute__((noinline)) void add(T v) {
        for (int i = 0; i < 2000; i++) total = total * 3 + v + i;
        asm volatile("" : : "r"(total) : "memory");
    }
};

__attribute__((noinline)) long spin(Accumulator<long>& acc, int rounds) {
    for (int i = 0; i < rounds; i++) acc.add(i);
    return acc.total;
}

}  // namespace shapes

int main(int argc, char** argv) {
    double secs = argc > 1 ? atof(argv[1]) : 2.0;
    shapes::Accumulator<long> acc;
    clock_t end = clock() + (clock_t)(secs * CLOCKS_PER_SEC);
    long r = 0;
    while (clock() < end) r += shapes::spin(acc, 1000);
    printf("%ld\n", r & 1);
    return 0;
}

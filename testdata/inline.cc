// A C++ target for inline-frame tests: a namespace, a class template and an
// always-inline helper template that the hot loop calls, so its code lives
// inside Grid<long>::sweep and only DWARF knows it is there.
#include <cstdio>
#include <cstdlib>
#include <ctime>

namespace geo {
namespace detail {

template <typename T>
__attribute__((always_inline)) inline T mix(T x) {
    for (int i = 0; i < 64; i++) x = x * 2862933555777941757L + 3037000493L + (x >> 17);
    return x;
}

}  // namespace detail

template <typename T>
struct Grid {
    T cells[64] = {};
    __attribute__((noinline)) T sweep(int rounds) {
        T acc = 0;
        for (int r = 0; r < rounds; r++)
            for (int i = 0; i < 64; i++) acc += cells[i] = detail::mix<T>(cells[i] + acc + i);
        return acc;
    }
};

}  // namespace geo

int main(int argc, char** argv) {
    double secs = argc > 1 ? atof(argv[1]) : 2.0;
    geo::Grid<long> g;
    clock_t end = clock() + (clock_t)(secs * CLOCKS_PER_SEC);
    long r = 0;
    while (clock() < end) r += g.sweep(100);
    printf("%ld\n", r & 1);
    return 0;
}

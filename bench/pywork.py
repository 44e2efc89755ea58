# A CPU-bound Python target that counts its own progress: pure-Python loops
# under a few levels of calls, the iterations done so far written to the
# file argv[1] every 0.1 s (wall), so that a bench reads how much work it did
# while a profiler was attached.
import sys
import time


def leaf(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def middle(n):
    return leaf(n) + leaf(n // 2)


def outer(n):
    return middle(n)


def main(path):
    done = 0
    last = time.monotonic()
    while True:
        outer(2000)
        done += 1
        now = time.monotonic()
        if now - last >= 0.1:
            with open(path + ".tmp", "w") as f:
                f.write("%d\n" % done)
            import os
            os.replace(path + ".tmp", path)
            last = now


main(sys.argv[1])

# Two hot Python functions whose shares of the CPU time the script
# measures itself (time.process_time around each call), to compare with
# what a profiler says of them. Prints "shares A B cpu SECONDS pid PID" at the end.
import os
import sys
import time


def spin_a(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def spin_b(n):
    s = 0
    for i in range(n):
        s ^= i + 7
    return s


def main(seconds):
    start = time.process_time()
    end = start + seconds
    ta = tb = 0.0
    while True:
        t0 = time.process_time()
        if t0 >= end:
            break
        spin_a(30000)
        t1 = time.process_time()
        spin_b(12000)
        t2 = time.process_time()
        ta += t1 - t0
        tb += t2 - t1
    total = time.process_time()
    print("shares %.4f %.4f cpu %.3f pid %d" % (ta / total, tb / total, total, os.getpid()))


main(float(sys.argv[1]) if len(sys.argv) > 1 else 4)

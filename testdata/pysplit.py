# Three Python functions whose shares of the CPU time are 60, 30 and 10% by
# design: each round, heavy() works for 6 ms of this thread's CPU time,
# medium() for 3 ms and light() for 1 ms, timed by time.thread_time. Run as
# "pysplit.py SECONDS" (0: until killed); prints "pysplit pid PID" when it
# starts and "pysplit done SECONDS" when it ends.
import os
import sys
import time


def spin(until):
    s = 0
    while time.thread_time() < until:
        for i in range(200):
            s += i * i
    return s


def heavy(t):
    return spin(t + 0.006)


def medium(t):
    return spin(t + 0.003)


def light(t):
    return spin(t + 0.001)


def run(seconds):
    end = time.thread_time() + seconds if seconds > 0 else float("inf")
    while time.thread_time() < end:
        heavy(time.thread_time())
        medium(time.thread_time())
        light(time.thread_time())


def main():
    seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 0
    print("pysplit pid %d" % os.getpid(), flush=True)
    run(seconds)
    print("pysplit done %.3f" % time.thread_time(), flush=True)


main()

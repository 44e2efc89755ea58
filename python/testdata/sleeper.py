# A Python program whose stacks hold still: the main thread sleeps in
# leaf() under middle() and Outer.method(), a thread named "worker-1" sleeps
# in worker(). Prints "ready" once both sleep.
import sys
import threading
import time

started = threading.Event()


def worker():
    started.set()
    time.sleep(3600)


def leaf():
    print("ready", flush=True)
    time.sleep(3600)


def middle():
    leaf()


class Outer:
    def method(self):
        middle()


threading.Thread(target=worker, name="worker-1", daemon=True).start()
started.wait()
Outer().method()

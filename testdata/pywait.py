# Two named threads for the wall-time views: "napper-1" sleeps in nap()
# (time.sleep), "worker-1" works in busy() then sleeps a little; the main
# thread waits for them. Runs for argv[1] seconds (default 4).
import sys
import threading
import time


def nap():
    time.sleep(0.05)


def napper():
    while True:
        nap()


def busy():
    s = 0
    for i in range(200000):
        s += i
    return s


def worker():
    while True:
        busy()
        time.sleep(0.01)


threading.Thread(target=napper, name="napper-1", daemon=True).start()
threading.Thread(target=worker, name="worker-1", daemon=True).start()
time.sleep(float(sys.argv[1]) if len(sys.argv) > 1 else 4)

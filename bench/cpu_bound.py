# A CPU-bound Python workload for comparing cctop with perf: interpreter
# dispatch, dict and string work, sorting, big-int arithmetic.
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def dicts(n):
    d = {}
    for i in range(n):
        d[str(i)] = i * 2
    return sorted(d.items(), key=lambda kv: kv[1])[-1]


def bigint(n):
    x = 1
    for i in range(1, n):
        x *= i
    return len(str(x))


# A fixed amount of work, not a deadline: both tools then see the same mix,
# and the comparison measures the tools, not the run.
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
for _ in range(rounds):
    fib(16)
    dicts(8000)
    bigint(600)

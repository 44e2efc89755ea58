# A CPU-bound Python workload for comparing cctop with perf: interpreter
# dispatch and integer arithmetic (recursive fib), with some dict work.
# A fixed amount of work, not a deadline, so that every run under every
# tool executes the same mix.
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def dicts(n):
    d = {}
    for i in range(n):
        d[i] = i * 2
    return sum(d.values())


rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 100
for _ in range(rounds):
    fib(20)
    dicts(3000)

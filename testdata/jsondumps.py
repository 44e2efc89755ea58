# A CPU-bound Python program as a service spends its time: json.dumps of a
# list of dicts, over and over (issue 29). Its hot C functions are called
# thousands of times a millisecond, the case where counting calls with
# uprobes costs most. Rounds: the first argument (default 40); it prints
# its own run time, wall and CPU, on stderr.
import json
import sys
import time

t0, c0 = time.perf_counter(), time.process_time()
data = [{"id": i, "name": "item%d" % i, "tags": ["a", "b", "c"], "score": i * 1.5, "ok": i % 2 == 0}
        for i in range(20000)]
rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
for _ in range(rounds):
    json.dumps(data)
print("jsondumps: %.3f s wall %.3f s cpu" % (time.perf_counter() - t0, time.process_time() - c0), file=sys.stderr)

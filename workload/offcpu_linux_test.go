package workload

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// offCPUNames are the off-CPU workloads Names lists after the others.
var offCPUNames = []string{"sleep", "mutex", "pingpong"}

func init() {
	expected["sleep"] = [][2]any{
		{sleepWorker, sleepCompute},
		{sleepWorker, sleepNap},
	}
	expected["mutex"] = [][2]any{
		{mutexWorker, mutexLock},
		{mutexWorker, mutexHold},
		{mutexWorker, mutexUnlock},
		{mutexWorker, mutexOutside},
	}
	expected["pingpong"] = [][2]any{
		{pingpongPing, pingpongRead},
		{pingpongPong, pingpongRead},
	}
}

// pairs is one result line's name-value pairs.
type pairs map[string]string

func (p pairs) str(t *testing.T, k string) string {
	t.Helper()
	v, ok := p[k]
	if !ok {
		t.Fatalf("no %q in %v", k, p)
	}
	return v
}

func (p pairs) num(t *testing.T, k string) uint64 {
	t.Helper()
	n, err := strconv.ParseUint(p.str(t, k), 10, 64)
	if err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	return n
}

func (p pairs) float(t *testing.T, k string) float64 {
	t.Helper()
	f, err := strconv.ParseFloat(p.str(t, k), 64)
	if err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	return f
}

func (p pairs) dur(t *testing.T, k string) time.Duration {
	t.Helper()
	d, err := time.ParseDuration(p.str(t, k))
	if err != nil {
		t.Fatalf("%s: %v", k, err)
	}
	if d < 0 {
		t.Fatalf("%s %v is negative", k, d)
	}
	return d
}

// offCPURun is an off-CPU workload's output: the usual lines, its thread
// lines ("thread TID name value ...") in order and its total line.
type offCPURun struct {
	output
	text    string
	tids    []int
	threads []pairs
	total   pairs
}

func runOffCPU(t *testing.T, name string, args ...string) offCPURun {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := Run(name, args, &stdout, &stderr); err != nil {
		t.Fatalf("Run(%s %v): %v\nstderr: %s", name, args, err, stderr.String())
	}
	r := offCPURun{output: parseOutput(t, stdout.String()), text: stdout.String()}
	for _, line := range strings.Split(strings.TrimSpace(r.text), "\n") {
		f := strings.Fields(line)
		var kv []string
		switch f[0] {
		case "thread":
			tid, err := strconv.Atoi(f[1])
			if err != nil || tid <= 0 {
				t.Fatalf("thread line %q: no thread id", line)
			}
			r.tids = append(r.tids, tid)
			kv = f[2:]
		case "total":
			if r.total != nil {
				t.Fatalf("two total lines:\n%s", r.text)
			}
			kv = f[1:]
		default:
			continue
		}
		if len(kv)%2 != 0 {
			t.Fatalf("line %q: not name-value pairs", line)
		}
		p := pairs{}
		for i := 0; i < len(kv); i += 2 {
			if _, dup := p[kv[i]]; dup {
				t.Fatalf("line %q: %s twice", line, kv[i])
			}
			p[kv[i]] = kv[i+1]
		}
		if f[0] == "total" {
			r.total = p
		} else {
			r.threads = append(r.threads, p)
		}
	}
	seen := map[int]bool{}
	for _, tid := range r.tids {
		if seen[tid] {
			t.Fatalf("thread %d printed twice:\n%s", tid, r.text)
		}
		seen[tid] = true
	}
	return r
}

// near reports whether got is within frac of want.
func near(got, want time.Duration, frac float64) bool {
	d := float64(got - want)
	return d <= frac*float64(want) && -d <= frac*float64(want)
}

// TestSleepTruth checks the sleep workload's figures against what must hold
// whatever the machine's speed or load, then its nap share against the
// configured 6:14 split on runs that got the CPU when they wanted it.
func TestSleepTruth(t *testing.T) {
	const threads, rounds = 2, 8
	const compute, nap = 6 * time.Millisecond, 14 * time.Millisecond
	args := []string{"-threads", fmt.Sprint(threads), "-rounds", fmt.Sprint(rounds), "-compute", compute.String(), "-sleep", nap.String()}
	var busy []string
	for range 5 {
		r := runOffCPU(t, "sleep", args...)
		if len(r.threads) != threads || r.total == nil {
			t.Fatalf("want %d thread lines and a total line:\n%s", threads, r.text)
		}
		if n := r.count(t, sleepWorker, sleepCompute); n != threads*rounds {
			t.Fatalf("sleepCompute calls %d, want %d", n, threads*rounds)
		}
		if n := r.count(t, sleepWorker, sleepNap); n != threads*rounds {
			t.Fatalf("sleepNap calls %d, want %d", n, threads*rounds)
		}
		var sum [4]time.Duration // compute, nap, loop, runqueue
		for i, p := range r.threads {
			if n := p.num(t, "rounds"); n != rounds {
				t.Fatalf("thread %d: rounds %d, want %d", r.tids[i], n, rounds)
			}
			c, n, l := p.dur(t, "compute"), p.dur(t, "nap"), p.dur(t, "loop")
			// A nanosleep never returns early, and a thread cannot get
			// CPU time faster than wall time passes.
			if n < rounds*nap {
				t.Errorf("thread %d: nap %v, less than %d sleeps of %v", r.tids[i], n, rounds, nap)
			}
			if c < rounds*compute {
				t.Errorf("thread %d: compute %v, less than %d times %v of CPU time", r.tids[i], c, rounds, compute)
			}
			if oncpu := p.dur(t, "oncpu"); oncpu < rounds*compute {
				t.Errorf("thread %d: schedstat on-CPU %v, less than the %v of CPU time it computed", r.tids[i], oncpu, rounds*compute)
			}
			// The wall times are taken back to back: only the loop's
			// end checks are in neither.
			if c+n > l || !near(c+n, l, 0.05) {
				t.Errorf("thread %d: compute %v + nap %v, loop %v: want the loop's time within 5%%", r.tids[i], c, n, l)
			}
			if share := p.float(t, "napshare"); abs(share-float64(n)/float64(l)) > 1e-3 {
				t.Errorf("thread %d: napshare %.4f, nap/loop %.4f", r.tids[i], share, float64(n)/float64(l))
			}
			sum[0] += c
			sum[1] += n
			sum[2] += l
			sum[3] += p.dur(t, "runqueue")
		}
		for i, k := range []string{"compute", "nap", "loop", "runqueue"} {
			if got := r.total.dur(t, k); got != sum[i] {
				t.Errorf("total %s %v, the threads' sum %v", k, got, sum[i])
			}
		}
		if t.Failed() {
			t.Fatalf("output:\n%s", r.text)
		}

		// Waiting for a CPU (after a nap, or while computing) stretches the
		// loop beyond the configured 20 ms a round; with less than 5% of
		// the loop spent so, nap/loop is within 0.70 ± 0.035 (timer slack
		// and the clock checks add tens of microseconds a round).
		share, wait := r.total.float(t, "napshare"), float64(sum[3])/float64(sum[2])
		if wait <= 0.05 {
			if abs(share-0.70) > 0.05 {
				t.Fatalf("nap share %.4f, want 0.70 ± 0.05 (run-queue wait %.1f%% of the loop)\n%s", share, 100*wait, r.text)
			}
			t.Logf("nap share %.4f (run-queue wait %.1f%% of the loop)", share, 100*wait)
			return
		}
		busy = append(busy, fmt.Sprintf("nap share %.4f, run-queue wait %.1f%% of the loop", share, 100*wait))
	}
	t.Skipf("machine too busy to check the nap share:\n%s", strings.Join(busy, "\n"))
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestMutexTruth checks the mutex workload's figures: exact counts, mutual
// exclusion, every thread waiting, and the parts of each thread's time
// adding up to its loop's.
func TestMutexTruth(t *testing.T) {
	const threads, rounds = 3, 300
	r := runOffCPU(t, "mutex", "-threads", fmt.Sprint(threads), "-rounds", fmt.Sprint(rounds), "-hold", "20000", "-outside", "2000")
	if len(r.threads) != threads || r.total == nil {
		t.Fatalf("want %d thread lines and a total line:\n%s", threads, r.text)
	}
	for _, callee := range []any{mutexLock, mutexHold, mutexUnlock, mutexOutside} {
		if n := r.count(t, mutexWorker, callee); n != threads*rounds {
			t.Errorf("%s calls %d, want %d", nameOf(callee), n, threads*rounds)
		}
	}
	// Counted by a plain increment under the lock: one lost update and
	// the lock let two threads in.
	if n := r.value(t, "locked"); n != fmt.Sprint(threads*rounds) {
		t.Errorf("locked %s, want %d", n, threads*rounds)
	}
	var sleeps uint64
	var wait, loop time.Duration
	for i, p := range r.threads {
		tid := r.tids[i]
		if n := p.num(t, "rounds"); n != rounds {
			t.Errorf("thread %d: rounds %d, want %d", tid, n, rounds)
		}
		w, h, rel, o, l := p.dur(t, "wait"), p.dur(t, "hold"), p.dur(t, "release"), p.dur(t, "outside"), p.dur(t, "loop")
		if w <= 0 {
			t.Errorf("thread %d: wait %v, want > 0", tid, w)
		}
		if parts := w + h + rel + o; parts > l || !near(parts, l, 0.05) {
			t.Errorf("thread %d: wait %v + hold %v + release %v + outside %v = %v, loop %v: want within 5%%", tid, w, h, rel, o, parts, l)
		}
		if share := p.float(t, "waitshare"); abs(share-float64(w)/float64(l)) > 1e-3 {
			t.Errorf("thread %d: waitshare %.4f, wait/loop %.4f", tid, share, float64(w)/float64(l))
		}
		p.dur(t, "oncpu")
		p.dur(t, "runqueue")
		sleeps += p.num(t, "sleeps")
		wait += w
		loop += l
	}
	if n := r.total.num(t, "sleeps"); n != sleeps {
		t.Errorf("total sleeps %d, the threads' sum %d", n, sleeps)
	}
	// The threads start together and hold the lock ten times as long as
	// they work outside it, so they meet at it and sleep there. Not every
	// one of them need: on a loaded machine a thread may get the CPU only
	// while the others are preempted outside the lock, and run all its
	// rounds in a few timeslices without ever finding it taken. But the
	// others are preempted holding it too, and then whoever runs sleeps.
	if sleeps == 0 {
		t.Errorf("no thread ever slept on the lock")
	}
	if d := r.total.dur(t, "wait"); d != wait {
		t.Errorf("total wait %v, the threads' sum %v", d, wait)
	}
	if d := r.total.dur(t, "loop"); d != loop {
		t.Errorf("total loop %v, the threads' sum %v", d, loop)
	}
	if t.Failed() {
		t.Fatalf("output:\n%s", r.text)
	}
	t.Logf("wait share %.4f, %d futex sleeps", r.total.float(t, "waitshare"), sleeps)
}

// TestMutexAlone: one thread never finds the lock taken, so it never sleeps.
func TestMutexAlone(t *testing.T) {
	r := runOffCPU(t, "mutex", "-threads", "1", "-rounds", "200", "-hold", "1000", "-outside", "1000")
	if len(r.threads) != 1 {
		t.Fatalf("want 1 thread line:\n%s", r.text)
	}
	if n := r.threads[0].num(t, "sleeps"); n != 0 {
		t.Fatalf("an uncontended lock slept %d times", n)
	}
	if n := r.value(t, "locked"); n != "200" {
		t.Fatalf("locked %s, want 200", n)
	}
}

// TestPingpongTruth checks the pingpong workload's counts, and that its
// threads blocked about once a round each.
func TestPingpongTruth(t *testing.T) {
	const rounds = 3000
	r := runOffCPU(t, "pingpong", "-rounds", fmt.Sprint(rounds))
	if n := r.value(t, "rounds"); n != fmt.Sprint(rounds) {
		t.Fatalf("rounds %s, want %d\n%s", n, rounds, r.text)
	}
	if n := r.count(t, pingpongPing, pingpongRead); n != rounds {
		t.Errorf("ping's reads %d, want %d", n, rounds)
	}
	// pong reads once more: the end of file that tells it to stop.
	if n := r.count(t, pingpongPong, pingpongRead); n != rounds+1 {
		t.Errorf("pong's reads %d, want %d", n, rounds+1)
	}
	if len(r.threads) != 2 || r.total == nil {
		t.Fatalf("want 2 thread lines and a total line:\n%s", r.text)
	}
	var vol, invol uint64
	for i, p := range r.threads {
		want := nameOf([]any{pingpongPing, pingpongPong}[i])
		if f := p.str(t, "func"); f != want {
			t.Errorf("thread %d is %s, want %s", r.tids[i], f, want)
		}
		if n := p.num(t, "rounds"); n != rounds {
			t.Errorf("thread %d: rounds %d, want %d", r.tids[i], n, rounds)
		}
		v, iv := p.num(t, "voluntary"), p.num(t, "involuntary")
		// Each round a thread waits for the other's byte, and leaves the
		// CPU while it does: on an idle machine it blocks in its read (a
		// voluntary switch) all but a few times in a thousand, when the
		// answer beats it there from the other CPU. On a busy one it is
		// also preempted between its write and its read (involuntary),
		// and then finds the answer waiting: with three CPU hogs on two
		// CPUs, 40% of the rounds went so. Switches of either kind, then,
		// must be nearly one a round, and the voluntary ones a good part:
		// threads that polled the pipe or spun would block in none.
		if v+iv < rounds*95/100 || v < rounds/4 {
			t.Errorf("thread %d: %d voluntary and %d involuntary switches in %d rounds, want >= 95%% of the rounds in all and >= 25%% voluntary", r.tids[i], v, iv, rounds)
		}
		if rate := p.float(t, "switches/s"); abs(rate-float64(v+iv)/p.dur(t, "wall").Seconds()) > 0.01*rate+1 {
			t.Errorf("thread %d: switches/s %.1f, (voluntary + involuntary) / wall %.1f", r.tids[i], rate, float64(v+iv)/p.dur(t, "wall").Seconds())
		}
		vol += v
		invol += iv
	}
	if n := r.total.num(t, "voluntary"); n != vol {
		t.Errorf("total voluntary %d, the threads' sum %d", n, vol)
	}
	if n := r.total.num(t, "involuntary"); n != invol {
		t.Errorf("total involuntary %d, the threads' sum %d", n, invol)
	}
	if t.Failed() {
		t.Fatalf("output:\n%s", r.text)
	}
	t.Logf("%s rounds/s, %.0f switches/s; voluntary %d, involuntary %d", r.value(t, "rounds/s"), r.total.float(t, "switches/s"), vol, invol)
}

// TestOffCPUBadFlags: a bad value is refused with what is wrong and the
// workload's flags, on stderr, before anything runs.
func TestOffCPUBadFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"sleep", "-threads", "0"}, "-threads must be > 0"},
		{[]string{"sleep", "-compute", "-1ms"}, "-compute must be >= 0"},
		{[]string{"sleep", "-sleep", "-1ms"}, "-sleep must be > 0"},
		{[]string{"sleep", "-sleep", "0"}, "-sleep must be > 0"},
		{[]string{"sleep", "-duration", "-1s"}, "-duration must be > 0"},
		{[]string{"sleep", "-rounds", "-1"}, "-rounds must be >= 0"},
		{[]string{"sleep", "-nosuchflag"}, "flag provided but not defined"},
		{[]string{"mutex", "-threads", "0"}, "-threads must be > 0"},
		{[]string{"mutex", "-hold", "-1"}, "-hold must be >= 0"},
		{[]string{"mutex", "-outside", "-1"}, "-outside must be >= 0"},
		{[]string{"mutex", "-duration", "-1s"}, "-duration must be > 0"},
		{[]string{"mutex", "-duration", "0"}, "-duration must be > 0"},
		{[]string{"pingpong", "-duration", "-1s"}, "-duration must be > 0"},
		{[]string{"pingpong", "-rounds", "-5"}, "-rounds must be >= 0"},
		{[]string{"pingpong", "extra"}, "unexpected arguments"},
	} {
		var stdout, stderr bytes.Buffer
		err := Run(c.args[0], c.args[1:], &stdout, &stderr)
		if err == nil {
			t.Errorf("Run(%v) succeeded", c.args)
			continue
		}
		if stdout.Len() != 0 {
			t.Errorf("Run(%v) wrote results: %q", c.args, stdout.String())
		}
		if !strings.Contains(stderr.String(), c.msg) || !strings.Contains(stderr.String(), "Usage of workload "+c.args[0]) {
			t.Errorf("Run(%v) = %v, stderr %q: want %q and the usage", c.args, err, stderr.String(), c.msg)
		}
	}
}

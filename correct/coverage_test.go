package correct

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// recount is Coverage the slow way, from the retained entries.
func recount(l *Log) Coverage {
	var c Coverage
	for i := 0; i < l.Len(); i++ {
		e := l.At(i)
		if e.Node >= 0 {
			c.Samples++
			if e.Calls >= 0 {
				c.Counted++
			}
			if e.Calls > 0 {
				c.Weighed++
			}
		}
	}
	return c
}

// The log's running coverage matches a recount through appends that wrap
// the ring, a remap that drops nodes, and a reset.
func TestLogCoverageFollowsRing(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, cap := range []int{0, 7, 1000} {
		l := NewLog(cap)
		for i := range 3000 {
			e := Entry{Node: int32(r.IntN(20)) - 2, Calls: float32(r.IntN(5)) - 1}
			l.Append(e)
			if i%97 == 0 {
				if got, want := l.Coverage(), recount(l); got != want {
					t.Fatalf("cap %d after %d appends: coverage %+v, recount %+v", cap, i+1, got, want)
				}
			}
		}
		l.Remap(func(n int32) int32 {
			if n%3 == 0 {
				return -1
			}
			return n
		})
		if got, want := l.Coverage(), recount(l); got != want {
			t.Fatalf("cap %d after remap: coverage %+v, recount %+v", cap, got, want)
		}
		l.Reset()
		if got := l.Coverage(); got != (Coverage{}) {
			t.Fatalf("cap %d after reset: %+v", cap, got)
		}
	}
}

func TestCoverageRule(t *testing.T) {
	for _, c := range []struct {
		cov    Coverage
		enough bool
		why    string
	}{
		{Coverage{}, false, "no sample carries"},
		{Coverage{Counted: 99, Weighed: 99, Samples: 100}, false, "99 samples counted, 100 needed"},
		{Coverage{Counted: 138, Weighed: 138, Samples: 4867}, false, "3% of samples counted, 50% needed"},
		{Coverage{Counted: 499, Weighed: 400, Samples: 1000}, false, "50% of samples counted"}, // 49.9% rounds up in words only
		{Coverage{Counted: 500, Weighed: 400, Samples: 1000}, true, ""},
		{Coverage{Counted: 3117, Weighed: 2000, Samples: 3387}, true, ""},
		// Pyenv's 3.11 with a probe on _PyEval_EvalFrameDefault: 88%
		// counted, 5 calls in the run.
		{Coverage{Counted: 3665, Weighed: 5, Samples: 4186}, false, "only 5 counted a call, 100 needed"},
	} {
		if got := c.cov.Enough(); got != c.enough {
			t.Errorf("%+v: Enough %v, want %v", c.cov, got, c.enough)
		}
		if why := c.cov.Why(); (c.why == "") != (why == "") || !strings.Contains(why, c.why) {
			t.Errorf("%+v: Why %q, want %q", c.cov, why, c.why)
		}
	}
}

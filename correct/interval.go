package correct

// Reading is what one sample carries for its thread: the group read of the sampling leader
// and the call counters, taken by the kernel at the instant of the sample.
type Reading struct {
	Time             uint64 // PERF_SAMPLE_TIME, ns
	Period           uint64 // nominal period of this sample (PERF_SAMPLE_PERIOD): lambda_i
	Leader           uint64 // the sampling leader's count (group read value of the leader)
	Calls            uint64 // sum of the call counters' raw counts; meaningful only if HasCalls
	HasCalls         bool
	Enabled, Running uint64 // the group's time_enabled / time_running; both 0 = not read
}

// Interval is one sample's view of the time since the previous sample of the same thread.
type Interval struct {
	// Calls is calls_i: the delta of Reading.Calls, scaled by dEnabled/dRunning when the group
	// was multiplexed (dRunning < dEnabled). -1 if unknown: first sample of a thread (unless
	// Thread.StartsAtZero), no counters in this or the previous reading, a counter went
	// backwards, or dRunning == 0.
	Calls    float64
	Lambda   float64 // lambda_i = Period
	Delta    float64 // delta_i = leader delta; 0 when unknown (see HasDelta)
	Latency  float64 // max(0, delta_i - lambda_i); 0 when delta unknown
	Gap      uint64  // Time delta (wall-clock gap, for display); 0 for the first
	First    bool    // the thread's first sample (also when StartsAtZero made it measurable)
	HasDelta bool    // Delta and Latency were measured (not first, no reset); Log keeps this
	Reset    bool    // a counter or the group's times went backwards: the base was resynchronised
}

// Thread holds one thread's previous reading, from which the next sample's interval is
// measured. The zero value is ready to use.
//
// The first sample of a thread has no previous reading, so by default its interval is unknown
// (Calls -1, no delta) and the sample carries weight 0 under density correction. That loses
// one sample per thread, which matters for short-lived threads. When the caller knows the
// thread's counters started at zero — events inherited into a new thread (inherit=1 gives
// the child fresh counts of 0), or events opened on an existing thread at attach time, which
// count from the open — it sets StartsAtZero, and the first sample is measured against an
// all-zero reading: Calls and Delta are the counts since the thread (or the events) started,
// and Enabled/Running since then scale them. Gap stays 0 (the start time is not known here).
// Do not set it when the first reading of a thread may come from events that were already
// counting (e.g. a group shared with other threads, or re-opened after samples were lost).
//
// A counter (leader, calls) or group time that goes backwards means the events were reset or
// replaced: the interval is unknown (Calls -1, no delta, Reset set) and the current reading
// becomes the base for the next sample. A uint64 counter never wraps in practice, so a wrap is
// treated as the reset it would look like.
type Thread struct {
	// StartsAtZero: the thread's counters were zero before its first sample (see above). Only
	// the first sample after creation or Forget is affected; a reset resynchronises to the
	// current reading instead.
	StartsAtZero bool

	prev Reading
	have bool
}

// Forget drops the previous reading, e.g. after the call counter set was reconfigured (the
// sum of counts would jump) or after lost records broke the sequence. The next sample is
// treated as a first sample.
func (t *Thread) Forget() { t.prev, t.have = Reading{}, false }

// Next measures the interval that ends at reading r and makes r the new base.
func (t *Thread) Next(r Reading) Interval {
	iv := Interval{Calls: -1, Lambda: float64(r.Period)}
	prev, have := t.prev, t.have
	t.prev, t.have = r, true
	if !have {
		iv.First = true
		if !t.StartsAtZero {
			return iv
		}
		prev = Reading{Time: r.Time, HasCalls: r.HasCalls} // zero counts; Gap 0
	}
	if r.Time >= prev.Time {
		iv.Gap = r.Time - prev.Time
	}

	// Anything going backwards means the events were reset or the group re-opened: nothing
	// in the previous reading relates to this one.
	if r.Enabled < prev.Enabled || r.Running < prev.Running || r.Leader < prev.Leader ||
		(r.HasCalls && prev.HasCalls && r.Calls < prev.Calls) {
		iv.Reset = true
		return iv
	}
	iv.Delta = float64(r.Leader - prev.Leader)
	iv.HasDelta = true
	if iv.Delta > iv.Lambda {
		iv.Latency = iv.Delta - iv.Lambda
	}

	if !r.HasCalls || !prev.HasCalls {
		return iv
	}
	calls := float64(r.Calls - prev.Calls)
	if r.Enabled != 0 || r.Running != 0 {
		// A multiplexed group is off the PMU part of the time, so the thread gets fewer
		// samples than its run time deserves; scaling each sample's calls by
		// enabled/running makes the sample stand for the calls of the whole span.
		dE, dR := r.Enabled-prev.Enabled, r.Running-prev.Running
		if dR == 0 {
			return iv // the counters did not run: no estimate
		}
		if dR < dE {
			calls *= float64(dE) / float64(dR)
		}
	}
	// Without group times (both 0: the read format lacked them) the counts are taken as they
	// are rather than discarded, which would zero every density weight.
	iv.Calls = calls
	return iv
}

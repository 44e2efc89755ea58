package cct

// Metrics are the values summed into a context. Every field is one value column of a pprof
// profile (see columns.go), so a new metric is a new field here, a line in Add, and a column.
type Metrics struct {
	Samples int64 // number of samples
	Time    int64 // sum of sample periods (ns for clocks, events for counters)
	// Calls is the estimated number of calls under the density weight,
	// CallsAdj under the density and latency weight (design §4). They are
	// derived from the sample log and set with AddSelf, not by Add.
	Calls    int64
	CallsAdj int64
	// CallsFlow is the calls of the call edge into this context under
	// control-flow correction (design §4b, package flow), set with AddSelf.
	CallsFlow int64
	// OffCPU is the time the context's threads spent off the CPU (blocked,
	// or waiting in the run queue) with this stack, in ns; Wall is its
	// time on the CPU (a clock's Time) and off it together. Both are kept
	// only when a profile records context switches (--mode offcpu|wall).
	OffCPU int64
	Wall   int64
}

// Add adds o to m.
func (m *Metrics) Add(o Metrics) {
	m.Samples += o.Samples
	m.Time += o.Time
	m.Calls += o.Calls
	m.CallsAdj += o.CallsAdj
	m.CallsFlow += o.CallsFlow
	m.OffCPU += o.OffCPU
	m.Wall += o.Wall
}

// IsZero reports whether every value of m is zero.
func (m Metrics) IsZero() bool { return m == Metrics{} }

package cct

// Metrics are the values summed into a context. Every field is one value column of a pprof
// profile (see columns.go), so a new metric is a new field here, a line in Add, and a column.
type Metrics struct {
	Samples int64 // number of samples
	Time    int64 // sum of sample periods (ns for clocks, events for counters)
}

// Add adds o to m.
func (m *Metrics) Add(o Metrics) {
	m.Samples += o.Samples
	m.Time += o.Time
}

// IsZero reports whether every value of m is zero.
func (m Metrics) IsZero() bool { return m == Metrics{} }

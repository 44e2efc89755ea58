package cct

// Thread names a thread of the profiled process, for pprof labels and thread filters.
type Thread struct {
	TID, PID uint32
	Name     string
}

// Meta is what a profile file says besides the tree: the unit of Metrics.Time, the sampling
// period, when and how long, the parameters as comments, and the threads.
type Meta struct {
	SampleType string // "cpu" with unit "nanoseconds" for clocks, or "cycles" with unit "count"
	Unit       string
	Period     int64 // nominal period (or 0 in frequency mode)
	PeriodType string
	// TimeNanos is the start of the profile (Unix ns); DurationNanos its length.
	TimeNanos, DurationNanos int64
	Comments                 []string // parameters: trigger, event, period/frequency, alpha, counter source
	Threads                  map[uint32]Thread
	// Calls says the tree carries call estimates: the profile then has the
	// calls/count and calls_adjusted/count columns.
	Calls bool
	// Flow says the tree carries control-flow-corrected call weights: the
	// calls_flow/count column.
	Flow bool
	// OffCPU and Wall say the tree carries off-CPU and wall-clock time:
	// the offcpu/nanoseconds and wall/nanoseconds columns. DefaultType
	// is the column pprof shows first ("": the trigger's, SampleType).
	OffCPU, Wall bool
	DefaultType  string
	// Modules says what is known of the binaries the frames name (their
	// Func.Module), by path: a backend symbolizes with it what cctop
	// could not. Missing entries are unknown, not errors.
	Modules map[string]Module
}

// Module is what a profile says of one binary besides its path.
type Module struct {
	// BuildID is the GNU build ID, in hex; "" when the binary has none.
	BuildID string
	// GoBuildID is the Go toolchain's build ID of a Go binary, as `go
	// tool buildid` prints it; Go binaries have no GNU one by default.
	GoBuildID string
	// Start, Limit and Offset place the executable segment: a frame's
	// module-relative address (an ELF virtual address) addr in
	// [Start, Limit) is at file offset addr - Start + Offset. All zero
	// when unknown.
	Start, Limit, Offset uint64
}

// withDefaults fills what a file needs: a clock profile unless said otherwise.
func (m Meta) withDefaults() Meta {
	if m.SampleType == "" {
		m.SampleType = "cpu"
		if m.Unit == "" {
			m.Unit = "nanoseconds"
		}
	}
	if m.Unit == "" {
		m.Unit = "count"
	}
	if m.PeriodType == "" {
		m.PeriodType = m.SampleType
	}
	return m
}

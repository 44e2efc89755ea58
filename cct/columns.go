package cct

import "github.com/google/pprof/profile"

// column binds one pprof value column to the Metrics field that holds it. Export writes the
// columns in the order of exportColumns; import binds each field to the file's column with
// importColumns. Adding a metric (calls/count, calls_adjusted/count) is one entry in each.
type column struct {
	Type, Unit string
	field      func(*Metrics) *int64
}

func samplesField(m *Metrics) *int64 { return &m.Samples }
func timeField(m *Metrics) *int64    { return &m.Time }
func callsField(m *Metrics) *int64   { return &m.Calls }
func adjField(m *Metrics) *int64     { return &m.CallsAdj }
func flowField(m *Metrics) *int64    { return &m.CallsFlow }
func offCPUField(m *Metrics) *int64  { return &m.OffCPU }
func wallField(m *Metrics) *int64    { return &m.Wall }

// exportColumns is the design's column order: samples/count first, then the trigger's
// metric (cpu/nanoseconds or cycles/count).
func exportColumns(m Meta) []column {
	cols := []column{
		{"samples", "count", samplesField},
		{m.SampleType, m.Unit, timeField},
	}
	if m.Calls {
		cols = append(cols, column{"calls", "count", callsField}, column{"calls_adjusted", "count", adjField})
	}
	if m.Flow {
		cols = append(cols, column{"calls_flow", "count", flowField})
	}
	if m.OffCPU {
		cols = append(cols, column{OffCPUType, "nanoseconds", offCPUField})
	}
	if m.Wall {
		cols = append(cols, column{WallType, "nanoseconds", wallField})
	}
	return cols
}

// The value columns of off-CPU and wall-clock time, offcpu/nanoseconds and
// wall/nanoseconds.
const (
	OffCPUType = "offcpu"
	WallType   = "wall"
)

// boundColumn is a Metrics field and the index of the file column it is read from.
type boundColumn struct {
	index int
	field func(*Metrics) *int64
	time  bool // the field is Time
}

// importColumns decides which columns of a foreign profile feed which field. Files from
// other tools name their columns freely, so the match is by convention rather than exact:
// the samples count is "samples" or the first count column (else the first column), the
// time is cpu/nanoseconds, else any nanoseconds column, else cycles.
func importColumns(types []*profile.ValueType) (cols []boundColumn, timeType *profile.ValueType) {
	samples := -1
	for i, vt := range types {
		if vt.Type == "samples" {
			samples = i
			break
		}
	}
	if samples < 0 {
		for i, vt := range types {
			if vt.Unit == "count" && vt.Type != "cycles" {
				samples = i
				break
			}
		}
	}
	if samples < 0 {
		samples = 0
	}
	cols = append(cols, boundColumn{index: samples, field: samplesField})

	tm := -1
	for i, vt := range types {
		if vt.Type == "cpu" && vt.Unit == "nanoseconds" {
			tm = i
			break
		}
	}
	if tm < 0 {
		for i, vt := range types {
			if vt.Unit == "nanoseconds" && vt.Type != OffCPUType && vt.Type != WallType {
				tm = i
				break
			}
		}
	}
	if tm < 0 {
		for i, vt := range types {
			if vt.Type == "cycles" {
				tm = i
				break
			}
		}
	}
	if tm >= 0 {
		cols = append(cols, boundColumn{index: tm, field: timeField, time: true})
		timeType = types[tm]
	}
	for i, vt := range types {
		switch {
		case vt.Type == "calls" && vt.Unit == "count":
			cols = append(cols, boundColumn{index: i, field: callsField})
		case vt.Type == "calls_adjusted" && vt.Unit == "count":
			cols = append(cols, boundColumn{index: i, field: adjField})
		case vt.Type == "calls_flow" && vt.Unit == "count":
			cols = append(cols, boundColumn{index: i, field: flowField})
		case vt.Type == OffCPUType && vt.Unit == "nanoseconds":
			cols = append(cols, boundColumn{index: i, field: offCPUField})
		case vt.Type == WallType && vt.Unit == "nanoseconds":
			cols = append(cols, boundColumn{index: i, field: wallField})
		}
	}
	return cols, timeType
}

// bindTime binds the time field to column index instead of the one importColumns chose.
func bindTime(cols []boundColumn, index int) []boundColumn {
	out := make([]boundColumn, 0, len(cols)+1)
	for _, c := range cols {
		if !c.time {
			out = append(out, c)
		}
	}
	return append(out, boundColumn{index: index, field: timeField, time: true})
}

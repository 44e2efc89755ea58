package cct

import (
	"iter"

	"github.com/google/pprof/profile"
)

// This file is what writers and readers of other file formats (package otlp) need
// from the tree and its pprof conventions, so that every format agrees on the value
// columns and on what a context holds.

// Column is one value column of a profile file: its type and unit, and the Metrics
// field that holds its values.
type Column struct {
	Type, Unit string
	field      func(*Metrics) *int64
	id         int // which field, for access without the call (see fieldOf)
}

// Of is c's value in m.
func (c Column) Of(m Metrics) int64 {
	if p := fieldOf(&m, c.id); p != nil {
		return *p
	}
	return c.call(m)
}

// call reads m through the column's func: m escapes here only.
func (c Column) call(m Metrics) int64 { return *c.field(&m) }

// AddTo adds v to c's field of m.
func (c Column) AddTo(m *Metrics, v int64) {
	if p := fieldOf(m, c.id); p != nil {
		*p += v
		return
	}
	*m = c.callAdd(*m, v)
}

func (c Column) callAdd(m Metrics, v int64) Metrics {
	*c.field(&m) += v
	return m
}

// fieldOf is field id of m, nil for one it does not know. A writer reads every
// column of every context: calling the column's func would move m to the heap
// each time, this direct switch does not.
func fieldOf(m *Metrics, id int) *int64 {
	switch id {
	case 1:
		return &m.Samples
	case 2:
		return &m.Time
	case 3:
		return &m.Calls
	case 4:
		return &m.CallsAdj
	case 5:
		return &m.CallsFlow
	case 6:
		return &m.OffCPU
	case 7:
		return &m.Wall
	}
	return nil
}

// fieldID finds which field f is by writing through it; 0 if fieldOf knows none.
func fieldID(f func(*Metrics) *int64) int {
	var m Metrics
	*f(&m) = 1
	for id := 1; fieldOf(&m, id) != nil; id++ {
		if *fieldOf(&m, id) == 1 {
			return id
		}
	}
	return 0
}

func exportedColumn(c column) Column {
	return Column{Type: c.Type, Unit: c.Unit, field: c.field, id: fieldID(c.field)}
}

// Columns is the value columns a profile of m has, in the order pprof files have
// them (samples/count, then the trigger's metric, then the optional ones), with m's
// defaults applied: what WriteProfile writes.
func Columns(m Meta) []Column {
	cols := exportColumns(m.withDefaults())
	out := make([]Column, len(cols))
	for i, c := range cols {
		out[i] = exportedColumn(c)
	}
	return out
}

// WithDefaults is m as files write it: a clock profile (cpu/nanoseconds) unless it
// says otherwise, and the period's type the trigger's.
func (m Meta) WithDefaults() Meta { return m.withDefaults() }

// DefaultSampleType is the type of the column a viewer shows first: DefaultType, or
// the trigger's (SampleType, after defaults).
func (m Meta) DefaultSampleType() string {
	if m.DefaultType != "" {
		return m.DefaultType
	}
	return m.withDefaults().SampleType
}

// BoundColumn is a Metrics field and the index of the file column it is read from.
type BoundColumn struct {
	Index int
	Column
}

// ImportColumns binds the value columns of a file, given by type and unit, to Metrics
// fields as ReadProfile does (see importColumns): one column may feed two fields (a
// lone cpu/nanoseconds column is both the samples and the time), and columns no field
// takes are not bound. timeType is the index of the column read as Time, -1 if none.
func ImportColumns(types []*profile.ValueType) (cols []BoundColumn, timeType int) {
	timeType = -1
	if len(types) == 0 {
		return nil, timeType
	}
	bound, tt := importColumns(types)
	for _, b := range bound {
		vt := types[b.index]
		cols = append(cols, BoundColumn{b.index, exportedColumn(column{vt.Type, vt.Unit, b.field})})
		if tt != nil && vt == tt {
			timeType = b.index
		}
	}
	return cols, timeType
}

// Leaf is the pc and line id had when it was first a leaf (what Stack's leaf frame
// carries), and whether it ever was.
func (t *Tree) Leaf(id NodeID) (addr uint64, line int, ok bool) {
	n := &t.nodes[id]
	return n.leafAddr, n.leafLine, n.hasLeaf
}

// ThreadSelves yields the per-thread self metrics of id, in no particular order and
// without allocating: Threads sorted, for writers that visit every context.
func (t *Tree) ThreadSelves(id NodeID) iter.Seq2[uint32, Metrics] {
	return func(yield func(uint32, Metrics) bool) {
		for i := t.nodes[id].firstThread; i >= 0; i = t.threads[i].next {
			if !yield(t.threads[i].tid, t.threads[i].m) {
				return
			}
		}
	}
}

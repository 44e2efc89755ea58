package otlp

import (
	"fmt"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/pprofile"
)

// mergeRecords puts every record into one Profiles. One record is returned as it is;
// more are merged into a new one: each record's dictionary entries are interned into
// the new dictionary (dict), and the indices of its profiles rewritten to point there.
//
// pdata's MergeTo does the same but indexes the whole destination dictionary again
// on every call, which is quadratic in a file of many windows (60 windows of 100k
// contexts: 12 s); dict keeps its index from one record to the next.
//
// Index 0 of every table means "none" (the format requires the zero entry there) and
// stays 0, the new dictionary's zero entry, as MergeTo has it. Any other index out of
// its table is an error.
func mergeRecords(recs []record) (pprofile.Profiles, error) {
	if len(recs) == 1 {
		return recs[0].ps, nil
	}
	dst := pprofile.NewProfiles()
	var m merger
	m.x.sync(dst.Dictionary())
	for _, r := range recs {
		if err := m.add(dst, r.ps); err != nil {
			return pprofile.Profiles{}, fmt.Errorf("otlp: %s: merging: %s", r.where, oneLine(err))
		}
	}
	return dst, nil
}

// merger maps one record's dictionary into the destination's: each remap slice is,
// per index of the record's table, the index in the destination.
type merger struct {
	x                                           dict
	strs, attrs, funcs, maps, locs, stacks, lks []int32
	tmp                                         []int32
	lines                                       []line
}

// remap is the index in the destination of entry i of a record's table.
func remap(table []int32, i int32, what string) (int32, error) {
	if i == 0 {
		return 0, nil
	}
	if i < 0 || int(i) >= len(table) {
		return 0, fmt.Errorf("%s index %d out of range [0, %d)", what, i, len(table))
	}
	return table[i], nil
}

// remapAll maps a list of indices into m.tmp.
func (m *merger) remapAll(s pcommon.Int32Slice, table []int32, what string) ([]int32, error) {
	m.tmp = m.tmp[:0]
	for _, i := range s.All() {
		j, err := remap(table, i, what)
		if err != nil {
			return nil, err
		}
		m.tmp = append(m.tmp, j)
	}
	return m.tmp, nil
}

func sized(s []int32, n int) []int32 {
	if cap(s) < n {
		return make([]int32, n)
	}
	return s[:n]
}

// add moves src's resource profiles into dst, with src's dictionary entries.
func (m *merger) add(dst, src pprofile.Profiles) error {
	if err := m.dictionary(src.Dictionary()); err != nil {
		return err
	}
	for ri, rp := range src.ResourceProfiles().All() {
		for si, sp := range rp.ScopeProfiles().All() {
			for pi, p := range sp.Profiles().All() {
				if err := m.profile(p); err != nil {
					return fmt.Errorf("resource %d scope %d profile %d: %w", ri, si, pi, err)
				}
			}
		}
	}
	src.ResourceProfiles().MoveAndAppendTo(dst.ResourceProfiles())
	return nil
}

func (m *merger) dictionary(d pprofile.ProfilesDictionary) error {
	x := &m.x
	m.strs = sized(m.strs, d.StringTable().Len())
	for i, s := range d.StringTable().All() {
		if i > 0 {
			m.strs[i] = x.str(s)
		}
	}
	str := func(i int32) (int32, error) { return remap(m.strs, i, "string") }

	m.attrs = sized(m.attrs, d.AttributeTable().Len())
	for i, a := range d.AttributeTable().All() {
		if i == 0 {
			continue
		}
		k, err := str(a.KeyStrindex())
		if err != nil {
			return fmt.Errorf("attribute %d key: %w", i, err)
		}
		u, err := str(a.UnitStrindex())
		if err != nil {
			return fmt.Errorf("attribute %d unit: %w", i, err)
		}
		m.attrs[i] = x.attrValue(k, u, a.Value())
	}

	m.funcs = sized(m.funcs, d.FunctionTable().Len())
	for i, f := range d.FunctionTable().All() {
		if i == 0 {
			continue
		}
		var s [3]int32
		for j, si := range [3]int32{f.NameStrindex(), f.SystemNameStrindex(), f.FilenameStrindex()} {
			var err error
			if s[j], err = str(si); err != nil {
				return fmt.Errorf("function %d: %w", i, err)
			}
		}
		m.funcs[i] = x.function(s[0], s[1], s[2], f.StartLine())
	}

	m.maps = sized(m.maps, d.MappingTable().Len())
	for i, mp := range d.MappingTable().All() {
		if i == 0 {
			continue
		}
		file, err := str(mp.FilenameStrindex())
		if err != nil {
			return fmt.Errorf("mapping %d file: %w", i, err)
		}
		attrs, err := m.remapAll(mp.AttributeIndices(), m.attrs, "attribute")
		if err != nil {
			return fmt.Errorf("mapping %d: %w", i, err)
		}
		m.maps[i] = x.mapping(file, mp.MemoryStart(), mp.MemoryLimit(), mp.FileOffset(), attrs)
	}

	m.locs = sized(m.locs, d.LocationTable().Len())
	for i, l := range d.LocationTable().All() {
		if i == 0 {
			continue
		}
		mi, err := remap(m.maps, l.MappingIndex(), "mapping")
		if err != nil {
			return fmt.Errorf("location %d: %w", i, err)
		}
		m.lines = m.lines[:0]
		for _, ln := range l.Lines().All() {
			fi, err := remap(m.funcs, ln.FunctionIndex(), "function")
			if err != nil {
				return fmt.Errorf("location %d: %w", i, err)
			}
			m.lines = append(m.lines, line{fi, ln.Line(), ln.Column()})
		}
		attrs, err := m.remapAll(l.AttributeIndices(), m.attrs, "attribute")
		if err != nil {
			return fmt.Errorf("location %d: %w", i, err)
		}
		m.locs[i] = x.location(mi, l.Address(), attrs, m.lines)
	}

	m.stacks = sized(m.stacks, d.StackTable().Len())
	for i, s := range d.StackTable().All() {
		if i == 0 {
			continue
		}
		locs, err := m.remapAll(s.LocationIndices(), m.locs, "location")
		if err != nil {
			return fmt.Errorf("stack %d: %w", i, err)
		}
		m.stacks[i] = x.stack(locs)
	}

	m.lks = sized(m.lks, d.LinkTable().Len())
	for i, l := range d.LinkTable().All() {
		if i > 0 {
			m.lks[i] = x.link(l.TraceID(), l.SpanID())
		}
	}
	return nil
}

// profile points p's indices into the destination's dictionary.
func (m *merger) profile(p pprofile.Profile) error {
	if err := m.rewrite(p.AttributeIndices(), m.attrs, "attribute"); err != nil {
		return err
	}
	for _, vt := range [2]pprofile.ValueType{p.SampleType(), p.PeriodType()} {
		t, err := remap(m.strs, vt.TypeStrindex(), "string")
		if err != nil {
			return err
		}
		u, err := remap(m.strs, vt.UnitStrindex(), "string")
		if err != nil {
			return err
		}
		vt.SetTypeStrindex(t)
		vt.SetUnitStrindex(u)
	}
	for i, s := range p.Samples().All() {
		st, err := remap(m.stacks, s.StackIndex(), "stack")
		if err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
		lk, err := remap(m.lks, s.LinkIndex(), "link")
		if err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
		if err := m.rewrite(s.AttributeIndices(), m.attrs, "attribute"); err != nil {
			return fmt.Errorf("sample %d: %w", i, err)
		}
		s.SetStackIndex(st)
		s.SetLinkIndex(lk)
	}
	return nil
}

// rewrite maps a list of indices in place.
func (m *merger) rewrite(s pcommon.Int32Slice, table []int32, what string) error {
	for k, i := range s.All() {
		j, err := remap(table, i, what)
		if err != nil {
			return err
		}
		s.SetAt(k, j)
	}
	return nil
}

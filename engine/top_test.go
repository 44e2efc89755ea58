package engine

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// topProfile has what pprof's ranking distinguishes: an inlined frame (which takes the
// flat value), recursion (counted once in the cumulative value), a location without
// lines in a named binary and one outside any, an empty stack and a zero sample.
func topProfile() *profile.Profile {
	fn := func(id uint64, name string) *profile.Function { return &profile.Function{ID: id, Name: name} }
	main, work, helper, rec := fn(1, "main"), fn(2, "work"), fn(3, "helper"), fn(4, "rec")
	bin := &profile.Mapping{ID: 1, Start: 0x1000, Limit: 0x9000, File: "/usr/bin/app"}
	loc := func(id uint64, m *profile.Mapping, fns ...*profile.Function) *profile.Location {
		l := &profile.Location{ID: id, Mapping: m, Address: 0x1000 + id}
		for _, f := range fns {
			l.Line = append(l.Line, profile.Line{Function: f})
		}
		return l
	}
	lMain, lWork, lRec := loc(1, bin, main), loc(2, bin, helper, work), loc(3, bin, rec)
	lBare, lNone := loc(4, bin), loc(5, nil)
	s := func(v int64, ls ...*profile.Location) *profile.Sample {
		return &profile.Sample{Location: ls, Value: []int64{1, v}}
	}
	return &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		Sample: []*profile.Sample{
			s(50, lWork, lMain),            // helper inlined into work: helper's flat
			s(30, lRec, lRec, lRec, lMain), // rec's cum once
			s(15, lBare, lMain),            // [app]
			s(4, lNone, lMain),             // <unknown>
			s(1),                           // no stack: in the total only
			s(0, lWork, lMain),             // nothing
		},
		Mapping: []*profile.Mapping{bin}, Location: []*profile.Location{lMain, lWork, lRec, lBare, lNone},
		Function: []*profile.Function{main, work, helper, rec},
	}
}

func TestFlatTop(t *testing.T) {
	entries, total := flatTop(topProfile(), nil, 1)
	if total != 100 {
		t.Errorf("total %d, want 100", total)
	}
	want := []topEntry{
		{"helper", 50, 50}, {"rec", 30, 30}, {"[app]", 15, 15}, {"<unknown>", 4, 4}, {"main", 0, 99}, {"work", 0, 50},
	}
	if !equalEntries(entries, want) {
		t.Errorf("top\n%v\nwant\n%v", entries, want)
	}
	// Under pprof's node fraction (0.5% of the flat values' sum, here 50) a function
	// goes: rec (30), [app] (15) and <unknown> (4).
	p := topProfile()
	p.Sample[0].Value[1] = 9950
	entries, total = flatTop(p, nil, 1)
	want = []topEntry{{"helper", 9950, 9950}, {"main", 0, 9999}, {"work", 0, 9950}}
	if !equalEntries(entries, want) || total != 10000 {
		t.Errorf("top with a cutoff of 50, of %d\n%v\nwant\n%v", total, entries, want)
	}
}

// TestFlatTopDiff: with a base, its values are subtracted and the percentages are of the
// base's total, as pprof's -diff_base has them.
func TestFlatTopDiff(t *testing.T) {
	base := topProfile()
	base.Sample[0].Value[1] = 20 // helper grew by 30
	base.Sample[1].Value[1] = 40 // rec shrank by 10
	entries, total := flatTop(topProfile(), base, 1)
	if total != 80 {
		t.Errorf("total %d, want the base's 80", total)
	}
	if entries[0].name != "helper" || entries[0].flat != 30 || entries[1].name != "rec" || entries[1].flat != -10 {
		t.Errorf("diff top %v", entries)
	}
}

func equalEntries(a, b []topEntry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestWriteTopUnits: values are written in the sample type's unit, and --top N cuts.
func TestWriteTopUnits(t *testing.T) {
	path := writeTestProfile(t, topProfile())
	var out bytes.Buffer
	if err := WriteTop(&out, ViewOptions{Sources: []string{path}}, 2); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 || !strings.Contains(lines[0], "cpu/nanoseconds") ||
		!strings.Contains(lines[3], "50ns  50.00%") || !strings.HasSuffix(lines[4], "  rec") {
		t.Errorf("top 2:\n%s", out.String())
	}
	out.Reset()
	if err := WriteTop(&out, ViewOptions{Sources: []string{path}, SampleIndex: "samples"}, 1); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "samples/count") || !strings.Contains(out.String(), "\n         2  33.33%") {
		t.Errorf("top 1 of samples:\n%s", out.String())
	}
}

// writeTestProfile writes p to a file of a test's own, gzipped as pprof writes it.
func writeTestProfile(t *testing.T, p *profile.Profile) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "p.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	return path
}

package cct

import (
	"bytes"
	"strings"
	"testing"
)

// TestOffCPUColumns: a wall profile carries offcpu/nanoseconds and
// wall/nanoseconds, shows wall first in pprof, labels off-CPU leaves with
// their reason, and reads back with the same values and flags.
func TestOffCPUColumns(t *testing.T) {
	tr := New()
	main := tr.Intern(Func{Name: "main", Module: "/bin/app"})
	nap := tr.Intern(Func{Name: "nap", Module: "/bin/app"})
	sleep := tr.Intern(Func{Name: OffCPUFrame("nanosleep")})
	// 30 ms on the CPU in main, 70 ms asleep under nap.
	tr.Add([]Frame{{Func: main, Addr: 0x10}}, 7, Metrics{Samples: 30, Time: 30e6, Wall: 30e6})
	tr.Add([]Frame{{Func: sleep}, {Func: nap, Addr: 0x20}, {Func: main, Addr: 0x30}}, 7, Metrics{OffCPU: 70e6, Wall: 70e6})
	meta := Meta{SampleType: "cpu", Unit: "nanoseconds", OffCPU: true, Wall: true, DefaultType: WallType,
		Threads: map[uint32]Thread{7: {TID: 7, PID: 7, Name: "app"}}}
	p := tr.Profile(meta)
	if p.DefaultSampleType != WallType {
		t.Errorf("default sample type %q, want wall", p.DefaultSampleType)
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type+"/"+st.Unit)
	}
	if got := strings.Join(types, " "); got != "samples/count cpu/nanoseconds offcpu/nanoseconds wall/nanoseconds" {
		t.Errorf("sample types %s", got)
	}
	reasons := 0
	for _, s := range p.Sample {
		leaf := s.Location[0].Line[0].Function.Name
		r := s.Label[labelOffCPUReason]
		switch {
		case leaf == OffCPUFrame("nanosleep"):
			if len(r) != 1 || r[0] != "nanosleep" {
				t.Errorf("off-CPU sample labels %v", s.Label)
			}
			if s.Value[2] != 70e6 || s.Value[3] != 70e6 || s.Value[0] != 0 {
				t.Errorf("off-CPU sample values %v", s.Value)
			}
			reasons++
		case len(r) > 0:
			t.Errorf("on-CPU sample %s has a reason %v", leaf, r)
		}
	}
	if reasons != 1 {
		t.Errorf("%d samples labelled with a reason, want 1", reasons)
	}
	var buf bytes.Buffer
	if err := tr.WriteProfile(&buf, meta); err != nil {
		t.Fatal(err)
	}
	got, gotMeta, err := ReadProfile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !gotMeta.OffCPU || !gotMeta.Wall || gotMeta.DefaultType != WallType {
		t.Errorf("meta read back %+v", gotMeta)
	}
	if tot := got.Total(); tot.OffCPU != 70e6 || tot.Wall != 100e6 || tot.Time != 30e6 {
		t.Errorf("totals read back %+v", tot)
	}
}

// TestReadOffCPUOnlyKeepsTime: a profile whose only nanoseconds columns are
// off-CPU and wall time does not read either as CPU time.
func TestReadOffCPUOnlyKeepsTime(t *testing.T) {
	tr := New()
	f := tr.Intern(Func{Name: OffCPUFrame("futex")})
	tr.Add([]Frame{{Func: f}}, 1, Metrics{Samples: 1, OffCPU: 5e6, Wall: 5e6})
	p := tr.Profile(Meta{SampleType: "switches", Unit: "count", OffCPU: true, Wall: true})
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadProfile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if tot := got.Total(); tot.Time != 0 || tot.OffCPU != 5e6 {
		t.Errorf("totals %+v: off-CPU time read as CPU time", tot)
	}
}

func TestWriteFoldedOf(t *testing.T) {
	tr := New()
	addPath(tr, "main;run", 1, Metrics{Samples: 3, Time: 3e6, Wall: 3e6})
	tr.Add(stackOf(tr, fr{name: "main"}, fr{name: "wait"}, fr{name: OffCPUFrame("futex")}), 1, Metrics{OffCPU: 9e6, Wall: 9e6})
	var buf bytes.Buffer
	if err := tr.WriteFoldedOf(&buf, func(m Metrics) int64 { return m.Wall }); err != nil {
		t.Fatal(err)
	}
	want := "main;run 3000000\nmain;wait;[off-cpu: futex] 9000000\n"
	if buf.String() != want {
		t.Errorf("wall folded:\n%s\nwant\n%s", buf.String(), want)
	}
	buf.Reset()
	if err := tr.WriteFolded(&buf); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "main;run 3\n" {
		t.Errorf("samples folded: %q", buf.String())
	}
}

func TestOffCPUReason(t *testing.T) {
	for _, c := range []struct {
		name, reason string
		ok           bool
	}{
		{OffCPUFrame("futex"), "futex", true},
		{OffCPUFrame("page fault"), "page fault", true},
		{"[off-cpu: x", "", false},
		{"main", "", false},
	} {
		r, ok := OffCPUReason(c.name)
		if r != c.reason || ok != c.ok {
			t.Errorf("OffCPUReason(%q) = %q, %v", c.name, r, ok)
		}
	}
}

package cct

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cctop/cctop/internal/testutil"
	"github.com/google/pprof/profile"
)

// TestSampleTypes: each column of a heap profile can be the tree's time, and pprof's
// rule picks the first one shown. Before, a heap profile's tree was empty: only a
// nanoseconds or cycles column could be its time.
func TestSampleTypes(t *testing.T) {
	p := testutil.HeapProfile("")
	if got := DefaultSampleIndex(p); got != 3 {
		t.Errorf("default index %d, want 3 (the last column: no default_sample_type)", got)
	}
	if got := DefaultSampleIndex(testutil.HeapProfile("alloc_space")); got != 1 {
		t.Errorf("default index %d, want 1 (default_sample_type alloc_space)", got)
	}
	for _, c := range []struct {
		spec  string
		index int
		err   string
	}{
		{"alloc_space", 1, ""}, {"2", 2, ""}, {"inuse_space", 3, ""},
		{"cpu", 0, `no sample type "cpu": the profile has alloc_objects/count, alloc_space/bytes, inuse_objects/count, inuse_space/bytes`},
		{"4", 0, "sample index 4 out of range"}, {"-1", 0, "sample index -1 out of range"},
	} {
		i, err := SampleIndex(p, c.spec)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("SampleIndex(%q): %v, want an error with %q", c.spec, err, c.err)
		case c.err == "" && (err != nil || i != c.index):
			t.Errorf("SampleIndex(%q) = %d, %v; want %d", c.spec, i, err, c.index)
		}
	}
	for i, want := range []struct {
		hold, churn int64
	}{{10, 4000}, {4 << 20, 64 << 20}, {10, 1}, {4 << 20, 16 << 10}} {
		tr, meta, err := FromProfileType(p, i)
		if err != nil {
			t.Fatal(err)
		}
		if meta.SampleType != p.SampleType[i].Type || meta.Unit != p.SampleType[i].Unit {
			t.Errorf("column %d: meta says %s/%s", i, meta.SampleType, meta.Unit)
		}
		hold, churn := mustFind(t, tr, "main.main", "main.hold"), mustFind(t, tr, "main.main", "main.churn")
		if hold.Self.Time != want.hold || churn.Self.Time != want.churn {
			t.Errorf("column %d: hold %d churn %d, want %d %d", i, hold.Self.Time, churn.Self.Time, want.hold, want.churn)
		}
	}
	if _, _, err := FromProfileType(p, 4); err == nil {
		t.Error("FromProfileType past the last column: no error")
	}
}

// TestLabelGroupsAsThreads: without thread labels, the samples' string labels (Go's
// goroutine labels) are what the thread filter filters by, one made-up thread per set.
func TestLabelGroupsAsThreads(t *testing.T) {
	p := testutil.HeapProfile("")
	p.Sample[0].Label = map[string][]string{"handler": {"/api"}, "tenant": {"a"}}
	p.Sample[1].Label = map[string][]string{"tenant": {"a"}, "handler": {"/api"}}
	p.Sample = append(p.Sample, &profile.Sample{Location: p.Sample[1].Location, Value: []int64{1, 1, 1, 1},
		Label: map[string][]string{"handler": {"/static"}}})
	_, meta, err := FromProfileType(p, 3)
	if err != nil {
		t.Fatal(err)
	}
	if len(meta.Threads) != 2 || meta.Threads[1].Name != "handler=/api, tenant=a" || meta.Threads[2].Name != "handler=/static" {
		t.Errorf("threads %+v", meta.Threads)
	}
	// With a thread label anywhere, labels are labels.
	p.Sample[2].NumLabel = map[string][]int64{"thread_id": {77}}
	if _, meta, _ = FromProfileType(p, 3); len(meta.Threads) != 1 || meta.Threads[77].TID != 77 {
		t.Errorf("threads with a thread_id label: %+v", meta.Threads)
	}
}

// TestLegacyFormats: the legacy formats pprof reads are read (gperftools CPU, whose
// first byte is 0, and text heap profiles), and a legacy file cut short, which pprof's
// parsers would take as a smaller profile, is an error.
func TestLegacyFormats(t *testing.T) {
	for _, c := range []struct{ file, typ string }{
		{"cppbench.cpu", "cpu"}, {"java.heap", "inuse_space"}, {"gobench.heap", "inuse_space"},
	} {
		data, err := os.ReadFile(filepath.Join("testdata/legacy", c.file))
		if err != nil {
			t.Fatal(err)
		}
		p, err := ParseProfile(bytes.NewReader(data))
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if got := p.SampleType[DefaultSampleIndex(p)].Type; got != c.typ || len(p.Sample) == 0 {
			t.Errorf("%s: default type %s and %d samples, want %s", c.file, got, len(p.Sample), c.typ)
		}
		for _, cut := range []int{len(data) / 2, len(data) - 1} {
			if _, err := ParseProfile(bytes.NewReader(data[:cut])); err == nil || !strings.Contains(err.Error(), "cut short") {
				t.Errorf("%s cut at %d of %d bytes: %v, want an error saying it was cut short", c.file, cut, len(data), err)
			}
		}
	}
	// The zero bytes of /dev/zero are not a CPU profile's header.
	if _, err := ParseProfile(bytes.NewReader(make([]byte, 4096))); err == nil || !strings.Contains(err.Error(), "zero byte") {
		t.Errorf("zeros: %v", err)
	}
}

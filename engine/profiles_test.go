package engine

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cctop/cctop/internal/testutil"
	"github.com/cctop/cctop/tui"
	"github.com/google/pprof/profile"
)

// TestTagFilter: pprof's -tagfocus and -tagignore on string and numeric labels.
func TestTagFilter(t *testing.T) {
	mk := func() *profile.Profile {
		p := topProfile()
		p.Sample[0].Label = map[string][]string{"handler": {"/api/users"}}
		p.Sample[0].NumLabel = map[string][]int64{"bytes": {4096}}
		p.Sample[1].Label = map[string][]string{"handler": {"/static"}, "tenant": {"b"}}
		p.Sample[1].NumLabel = map[string][]int64{"bytes": {64 << 20}}
		p.Sample[2].Label = map[string][]string{"tenant": {"a"}}
		return p
	}
	kept := func(focus, ignore string) string {
		f, err := parseTagFilter(focus, ignore)
		if err != nil {
			return "error: " + err.Error()
		}
		p := mk()
		f.apply(p)
		var vs []string
		for _, s := range p.Sample {
			vs = append(vs, fmt.Sprint(s.Value[1]))
		}
		return strings.Join(vs, " ")
	}
	for _, c := range []struct{ focus, ignore, want string }{
		{"handler=/api", "", "50"},
		{"handler=/api,/static", "", "50 30"},
		{"", "handler=/api", "30 15 4 1 0"},
		{"tenant:a", "", "15"},                 // no key: "key:value" matches
		{"handler:/static,tenant:b", "", "30"}, // no key: every expression matches some label
		{"bytes=1mb:", "", "30"},
		{":4kb", "", "50"},
		{"bytes=4096", "", "50"},
		{"", "bytes=1kb:128mb", "15 4 1 0"},
		{"handler=(", "", `error: --tagfocus "handler=(": bad regular expression "("`},
		{"bytes=1:x", "", `error: --tagfocus "bytes=1:x": bad upper bound "x"`},
		{"handler=", "", `error: --tagfocus "handler=": no value to match`},
	} {
		if got := kept(c.focus, c.ignore); got != c.want {
			t.Errorf("focus %q ignore %q: kept %q, want %q", c.focus, c.ignore, got, c.want)
		}
	}
}

// TestLoadProfiles: files merged, stdin, a base whose sample types differ, and the
// sample type chosen by name.
func TestLoadProfiles(t *testing.T) {
	a := writeTestProfile(t, topProfile())
	b := writeTestProfile(t, topProfile())
	l, err := loadProfiles(ViewOptions{Sources: []string{a, b}})
	if err != nil {
		t.Fatal(err)
	}
	if _, total := flatTop(l.prof, nil, l.index); total != 200 || l.name != "p.pb.gz + p.pb.gz" {
		t.Errorf("merged: total %d, name %q; want 200", total, l.name)
	}
	var raw bytes.Buffer
	topProfile().Write(&raw)
	if l, err = loadProfiles(ViewOptions{Sources: []string{"-"}, Stdin: &raw}); err != nil || len(l.prof.Sample) != 6 || l.name != "stdin" {
		t.Errorf("stdin: %v", err)
	}
	other := topProfile()
	other.SampleType[1] = &profile.ValueType{Type: "alloc_space", Unit: "bytes"}
	c := writeTestProfile(t, other)
	for _, o := range []ViewOptions{{Sources: []string{a}, Base: c}, {Sources: []string{a, c}}} {
		_, err := loadProfiles(o)
		if err == nil || !strings.Contains(err.Error(), "its sample types are samples/count, alloc_space/bytes, not samples/count, cpu/nanoseconds") {
			t.Errorf("%+v: %v, want the sample types named", o, err)
		}
	}
	if l, err = loadProfiles(ViewOptions{Sources: []string{a}, SampleIndex: "samples"}); err != nil || l.index != 0 {
		t.Errorf("--sample-index samples: %v, index %d", err, l.index)
	}
	if _, err = loadProfiles(ViewOptions{Sources: []string{a}, SampleIndex: "delay"}); err == nil || !strings.Contains(err.Error(), `no sample type "delay"`) {
		t.Errorf("--sample-index delay: %v", err)
	}
}

// TestFetchProfile: a profile over HTTP with seconds=N; a 404, a 500 and a server
// that never answers each give one line.
func TestFetchProfile(t *testing.T) {
	var raw bytes.Buffer
	topProfile().Write(&raw)
	var query string
	hang := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/debug/pprof/profile":
			query = r.URL.RawQuery
			w.Write(raw.Bytes())
		case "/broken":
			http.Error(w, "profile: something broke\nmore detail", http.StatusInternalServerError)
		case "/hang":
			<-hang
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	defer close(hang) // before Close, which waits for the handler
	l, err := loadProfiles(ViewOptions{Sources: []string{srv.URL + "/debug/pprof/profile"}, Seconds: 2})
	if err != nil || len(l.prof.Sample) != 6 || query != "seconds=2" {
		t.Errorf("fetch: %v, query %q", err, query)
	}
	for _, c := range []struct {
		path, want string
		timeout    time.Duration
	}{
		{"/debug/pprof/nothing", "404 Not Found: 404 page not found", 0},
		{"/broken", "500 Internal Server Error: profile: something broke", 0},
		{"/hang", "no profile within 300ms (--timeout)", 300 * time.Millisecond},
	} {
		_, err := loadProfiles(ViewOptions{Sources: []string{srv.URL + c.path}, Timeout: c.timeout})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.path, err, c.want)
		}
	}
}

// TestFileSourceSampleTypes: the sample-type key steps from inuse_space to the other
// size (alloc_space) first, then the counts; the header names the type and unit, and
// says only what a heap profile carries.
func TestFileSourceSampleTypes(t *testing.T) {
	p := testutil.HeapProfile("")
	path := writeTestProfile(t, p)
	s, err := newFileSource(path, "")
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for range 5 {
		snap := s.Snapshot()
		f := snap.Header.File
		if f == nil {
			t.Fatal("no file info in a file's header")
		}
		seen = append(seen, f.SampleType+"/"+snap.Unit)
		if f.Corrections || snap.Header.Samples != 2 || f.Types != 4 || f.Period != 524288 {
			t.Errorf("header %+v file %+v", snap.Header, f)
		}
		s.do(tui.Action{Kind: tui.CycleSampleType})
	}
	want := "inuse_space/bytes alloc_space/bytes alloc_objects/count inuse_objects/count inuse_space/bytes"
	if got := strings.Join(seen, " "); got != want {
		t.Errorf("cycle %s, want %s", got, want)
	}
	// Five steps from inuse_space: alloc_space, churn's 64 MiB against hold's 4.
	snap := s.Snapshot()
	churn, _ := snap.Tree.Find("main.main", "main.churn")
	if snap.Self[churn] != 64<<20 {
		t.Errorf("alloc_space of churn %v", snap.Self[churn])
	}
}

// TestFileSourceCallsOnlyWhenCounted: a profile with call columns opens on calls only
// where they counted something; one whose counters counted nothing (their functions too
// hot for the budget) opened on an empty tree.
func TestFileSourceCallsOnlyWhenCounted(t *testing.T) {
	for _, counted := range []bool{false, true} {
		p := topProfile()
		p.SampleType = append(p.SampleType, &profile.ValueType{Type: "calls", Unit: "count"}, &profile.ValueType{Type: "calls_adjusted", Unit: "count"})
		for _, s := range p.Sample {
			c := int64(0)
			if counted {
				c = 7
			}
			s.Value = append(s.Value, c, c)
		}
		p.DefaultSampleType = "cpu"
		s, err := newFileSource(writeTestProfile(t, p), "")
		if err != nil {
			t.Fatal(err)
		}
		want := "time"
		if counted {
			want = "calls"
		}
		if got := s.Snapshot().Metric; got != want {
			t.Errorf("calls counted: %v; the metric shown first is %s, want %s", counted, got, want)
		}
	}
}

// TestFileSourceDiffKeepsWhatWentAway: against a base, a context only the base has is in
// the tree, with nothing of its own and the base's weight to compare: the metric column
// shows it as what went away. Before, the tree was the new profile's alone.
func TestFileSourceDiffKeepsWhatWentAway(t *testing.T) {
	now := topProfile()
	now.Sample = slices.Delete(now.Sample, 1, 2) // no rec
	s, err := newFileSource(writeTestProfile(t, now), writeTestProfile(t, topProfile()))
	if err != nil {
		t.Fatal(err)
	}
	snap := s.Snapshot()
	if !snap.Diff || snap.Compare == nil {
		t.Fatalf("diff %v, compare %v", snap.Diff, snap.Compare != nil)
	}
	rec, ok := snap.Tree.Find("main", "rec", "rec", "rec")
	if !ok {
		t.Fatal("rec, which only the base has, is not in the tree")
	}
	if snap.Self[rec] != 0 || snap.Compare[rec] != 30 {
		t.Errorf("rec: self %v, base %v; want 0 and 30", snap.Self[rec], snap.Compare[rec])
	}
	if got := snap.Tree.Total().Time; got != 70 {
		t.Errorf("total %d: the base's contexts added weight", got)
	}
}

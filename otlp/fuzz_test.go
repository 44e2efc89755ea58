package otlp

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"go.opentelemetry.io/collector/pdata/pprofile"

	"github.com/cctop/cctop/cct"
)

// FuzzRead feeds arbitrary bytes to Read, Trees and Merge (and Sniff): errors are
// fine, a panic is not, an error is one line, and every tree is consistent and comes
// back the same through Append and Trees. Seeds are in testdata/fuzz/FuzzRead
// (regenerate with go test -run TestFuzzSeeds -update).
func FuzzRead(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("{}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		defer func(n int) { maxBytes = n }(maxBytes)
		maxBytes = 1 << 22 // a gzip bomb is an error sooner
		Sniff(data)
		ps, err := Read(data)
		if err != nil {
			checkError(t, err)
			return
		}
		checkProfiles(t, ps)
	})
}

// FuzzTrees decodes bytes with pdata's own unmarshaler, which takes dictionary
// indices out of range, and gives them to Trees unmerged: every index it follows must
// be checked.
func FuzzTrees(f *testing.F) {
	tr, meta, res := richTree()
	f.Add(protoBytes(f, mustAppend(f, Process{Resource: res, Tree: tr, Meta: meta})))
	f.Add(protoBytes(f, foreign()))
	f.Add(protoBytes(f, tinyProfiles(f)))
	f.Fuzz(func(t *testing.T, data []byte) {
		var u pprofile.ProtoUnmarshaler
		ps, err := u.UnmarshalProfiles(data)
		if err != nil {
			return
		}
		checkProfiles(t, ps)
	})
}

func checkError(t *testing.T, err error) {
	if msg := err.Error(); !strings.HasPrefix(msg, "otlp: ") || strings.Contains(msg, "\n") {
		t.Errorf("error %q is not one line starting otlp:", msg)
	}
}

// checkProfiles runs Trees and Merge on ps and checks what they give.
func checkProfiles(t *testing.T, ps pprofile.Profiles) {
	procs, err := Trees(ps)
	if err != nil {
		checkError(t, err)
		return
	}
	nodes := 0
	for _, p := range procs {
		checkInvariants(t, p.Tree)
		nodes += p.Tree.Len()
		again, err := Trees(mustAppend(t, p))
		if err != nil {
			t.Fatalf("reading back what Append wrote: %v", err)
		}
		if again[0].Tree.Total() != p.Tree.Total() {
			t.Errorf("total %+v after a round trip, was %+v", again[0].Tree.Total(), p.Tree.Total())
		}
		// dump is quadratic in depth; deep trees from tiny inputs would stall the fuzzer.
		if p.Tree.Len() < 2000 {
			if d1, d2 := dump(p.Tree), dump(again[0].Tree); d1 != d2 {
				t.Errorf("round trip differs:\n%s\nwas:\n%s", d2, d1)
			}
		}
	}
	tr, _ := Merge(procs)
	if nodes < 20000 {
		checkInvariants(t, tr)
	}
}

// tinyProfiles is a profile of one inlined frame under another, small enough for the
// fuzzer to mutate every part of.
func tinyProfiles(tb testing.TB) pprofile.Profiles {
	tr := cct.New()
	f := tr.Intern(cct.Func{Name: "f", Module: "/m", File: "f.c"})
	g := tr.Intern(cct.Func{Name: "g", Module: "/m"})
	tr.Add([]cct.Frame{{Func: f, Addr: 2, Line: 1, Inlined: true}, {Func: g, Addr: 2}}, 3, cct.Metrics{Samples: 1})
	return mustAppend(tb, Process{Resource: Resource{PID: 1}, Tree: tr,
		Meta: cct.Meta{SampleType: "samples", Unit: "count", Threads: map[uint32]cct.Thread{3: {TID: 3, Name: "t"}},
			Modules: map[string]cct.Module{"/m": {BuildID: "ab"}}}})
}

// TestFuzzSeeds writes FuzzRead's seed corpus under -update: a JSON line, length-
// prefixed proto records, a bare message, each gzip-compressed too, another
// producer's profile, and garbage.
func TestFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzRead")
	if !*update {
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("seed corpus missing (go test -run TestFuzzSeeds -update): %v", err)
		}
		return
	}
	tr, meta, res := richTree()
	small := Process{Resource: res, Tree: tr, Meta: meta}
	js := jsonBytes(t, mustAppend(t, small))
	pb := protoBytes(t, mustAppend(t, small))
	seeds := map[string][]byte{
		"json-line":    append(js, '\n'),
		"json-gz":      gz(t, append(js, '\n')),
		"proto-record": framed(pb),
		"proto-two":    framed(pb, protoBytes(t, foreign())),
		"proto-gz":     gz(t, framed(pb)),
		"bare":         pb,
		"foreign":      protoBytes(t, foreign()),
		"garbage":      []byte("\x00\x00\x00\x05\x0a\xff\x12 not a profile \xff\xfe"),
		"pprof":        mustPprof(t, tr, meta),
		"tiny-proto":   framed(protoBytes(t, tinyProfiles(t))),
		"tiny-json":    append(jsonBytes(t, tinyProfiles(t)), '\n'),
		"tiny-two":     framed(protoBytes(t, tinyProfiles(t)), protoBytes(t, tinyProfiles(t))),
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range seeds {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(b)))
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

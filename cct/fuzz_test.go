package cct

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// FuzzReadProfile feeds arbitrary bytes to ReadProfile: it must return an error or a
// consistent tree, never panic, and a tree it returns must survive a write/read cycle.
// Seeds are in testdata/fuzz/FuzzReadProfile (regenerate with -update).
func FuzzReadProfile(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0x1f, 0x8b})
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, meta, err := ReadProfile(bytes.NewReader(data))
		if err != nil {
			if tr != nil {
				t.Error("a tree with an error")
			}
			return
		}
		checkInvariants(t, tr)
		var buf bytes.Buffer
		if err := tr.WriteProfile(&buf, meta); err != nil {
			t.Fatalf("writing back: %v", err)
		}
		again, _, err := ReadProfile(&buf)
		if err != nil {
			t.Fatalf("reading back what was written: %v", err)
		}
		if again.Total() != tr.Total() {
			t.Errorf("total %v after a round trip, was %v", again.Total(), tr.Total())
		}
		// dump is quadratic in depth; deep trees from tiny inputs would stall the fuzzer.
		if tr.Len() < 2000 {
			if d1, d2 := dump(tr), dump(again); d1 != d2 {
				t.Errorf("round trip differs:\n%s\nwas:\n%s", d2, d1)
			}
		}
		if err := tr.WriteFolded(&bytes.Buffer{}); err != nil {
			t.Error(err)
		}
		tr.BottomUp()
		tr.Flat()
	})
}

// TestFuzzSeeds writes the seed corpus under -update: a cctop profile, a runtime/pprof
// profile and garbage.
func TestFuzzSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzReadProfile")
	if !*update {
		if _, err := os.Stat(dir); err != nil {
			t.Fatalf("seed corpus missing (go test -run TestFuzzSeeds -update): %v", err)
		}
		return
	}
	tr, meta := richTree()
	var cctop bytes.Buffer
	if err := tr.WriteProfile(&cctop, meta); err != nil {
		t.Fatal(err)
	}
	var plain bytes.Buffer
	if err := tr.Profile(meta).WriteUncompressed(&plain); err != nil {
		t.Fatal(err)
	}
	rt, err := os.ReadFile(filepath.Join("testdata", "runtime.pb.gz"))
	if err != nil {
		t.Fatal(err)
	}
	seeds := map[string][]byte{
		"cctop":        cctop.Bytes(),
		"cctop-plain":  plain.Bytes(),
		"runtime":      rt,
		"garbage":      []byte("\x08\x96\x01 not a profile \xff\xfe\x00"),
		"text":         []byte("--- contention:\ncycles/second=1\n"),
		"truncated-gz": cctop.Bytes()[:cctop.Len()/3],
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

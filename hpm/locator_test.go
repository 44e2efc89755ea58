package hpm

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLocatorRemembers: a function is looked for in its file once while
// the file stays the same, again once the file changes, and what is
// remembered is bounded.
func TestLocatorRemembers(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "prog")
	if err := os.WriteFile(bin, []byte("one"), 0o755); err != nil {
		t.Fatal(err)
	}
	l := NewLocator()
	calls := 0
	l.find = func(name, path string) (Target, bool) {
		calls++
		return Target{Func: name, Path: path, Offset: 0x40}, name != "nope"
	}
	flat := []FuncSample{{"hot", bin, 10}, {"nope", bin, 5}, {"warm", bin, 3}}
	for range 3 {
		ts := l.HottestFunctions(flat, 4)
		if len(ts) != 2 || ts[0].Func != "hot" || ts[1].Func != "warm" {
			t.Fatalf("picked %+v, want hot and warm", ts)
		}
	}
	if calls != 3 {
		t.Errorf("%d lookups for three picks of three functions, want 3", calls)
	}
	// The file changes (a rebuild): its functions are looked for again.
	if err := os.WriteFile(bin, []byte("two, longer"), 0o755); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Second)
	os.Chtimes(bin, later, later)
	l.HottestFunctions(flat, 4)
	if calls != 6 {
		t.Errorf("%d lookups after the file changed, want 6", calls)
	}
	// A file gone is no candidate, and is not looked for.
	os.Remove(bin)
	if ts := l.HottestFunctions(flat, 4); len(ts) != 0 {
		t.Errorf("picked %+v from a file that is gone", ts)
	}
	if calls != 6 {
		t.Errorf("%d lookups of a file that is gone", calls-6)
	}
	// Bounded.
	if err := os.WriteFile(bin, []byte("three"), 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range maxLocated + 10 {
		l.locate("f"+string(rune('a'+i%26))+string(rune(i)), bin)
	}
	if len(l.known) > maxLocated {
		t.Errorf("%d remembered, more than %d", len(l.known), maxLocated)
	}
}

package workload

import (
	"bytes"
	"debug/elf"
	"debug/gosym"
	"os"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// TestNamesAreFunctions checks every printed name against the binary's own
// function table (.gopclntab, which go test binaries keep although they drop
// .symtab), the table cctop symbolizes Go programs with: the name must be a
// function there, starting where the function value points.
func TestNamesAreFunctions(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	pcln, text := f.Section(".gopclntab"), f.Section(".text")
	if pcln == nil || text == nil {
		t.Skip("test binary has no .gopclntab or .text")
	}
	data, err := pcln.Data()
	if err != nil {
		t.Fatal(err)
	}
	table, err := gosym.NewTable(nil, gosym.NewLineTable(data, text.Addr))
	if err != nil {
		t.Fatal(err)
	}
	var bias uint64
	haveBias := false
	for name, edges := range expected {
		for _, e := range edges {
			for _, fn := range e {
				n := nameOf(fn)
				sym := table.LookupFunc(n)
				if sym == nil {
					t.Errorf("%s: %s is not in the binary's function table", name, n)
					continue
				}
				// A position-independent binary is loaded at an offset: the
				// same one for every function.
				pc := uint64(reflect.ValueOf(fn).Pointer())
				if !haveBias {
					bias, haveBias = pc-sym.Entry, true
				}
				if sym.Entry+bias != pc {
					t.Errorf("%s: %s starts at %#x+%#x in the table, its function value points at %#x", name, n, sym.Entry, bias, pc)
				}
			}
		}
	}
}

func tids(t *testing.T) map[string]bool {
	t.Helper()
	d, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[string]bool, len(d))
	for _, e := range d {
		m[e.Name()] = true
	}
	return m
}

// TestThreadsComeAndGo watches /proc/self/task while the threads workload
// runs: OS threads must appear that were not there before, and some of them
// must be gone by the end.
func TestThreadsComeAndGo(t *testing.T) {
	before := tids(t)
	var stdout, stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- Run("threads", []string{"-duration", "300ms"}, &stdout, &stderr)
	}()
	seen := map[string]bool{}
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("%v\n%s", err, stderr.String())
			}
			break wait
		case <-tick.C:
			for id := range tids(t) {
				if !before[id] {
					seen[id] = true
				}
			}
		}
	}
	after := tids(t)
	gone := 0
	for id := range seen {
		if !after[id] {
			gone++
		}
	}
	o := parseOutput(t, stdout.String())
	created, err := strconv.ParseUint(o.value(t, "threads"), 10, 64)
	if err != nil || created == 0 {
		t.Fatalf("threads line %q: want a count > 0", o.value(t, "threads"))
	}
	t.Logf("%d threads created; saw %d new OS threads, %d of them gone", created, len(seen), gone)
	if len(seen) < 5 || gone < 5 {
		t.Fatalf("saw %d new OS threads, %d gone by the end; want >= 5 of each", len(seen), gone)
	}
	if n := o.count(t, threadsWorker, threadsWork); n < created {
		t.Fatalf("%d threadsWork calls from %d threads; each thread calls it at least once", n, created)
	}
}

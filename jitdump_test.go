package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cctop/cctop/internal/testutil"
	"github.com/google/pprof/profile"
)

// jitdumpRun is one recording of testdata/tinyjit.c: its profile, summary,
// and the addresses of its code, X (A, then B) and Y (B moved).
type jitdumpRun struct {
	p       *profile.Profile
	stderr  string
	pid     int
	x, y    uint64
	dump    string
	samples map[string]int64 // "caller leaf@X|Y" -> samples
	jit     int64            // samples whose leaf is in X or Y
}

// codeSize is the size of the program's busy loop.
const codeSize = 6

func recordJITDump(t *testing.T, mode, phase string) *jitdumpRun {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skip("testdata/tinyjit.c copies x86-64 machine code")
	}
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	bin := testutil.Compile(t, dir, "gcc", "testdata/tinyjit.c", "-O2", "-g")
	stdout, stderr, code := testutil.Run(t, cctopBin, dir, "record", "--calls", "none", "-o", "j.pb.gz", "--", bin, mode, phase)
	r := &jitdumpRun{stderr: stderr, samples: map[string]int64{}}
	if _, err := fmt.Sscanf(stdout, "pid %d\nX %v\nY %v\n", &r.pid, &r.x, &r.y); err != nil {
		t.Fatalf("program output %q: %v\n%s", stdout, err, stderr)
	}
	r.dump = fmt.Sprintf("/tmp/jit-%d.dump", r.pid)
	t.Cleanup(func() { os.Remove(r.dump) })
	if code != 0 || !strings.Contains(stdout, "done") {
		t.Fatalf("record exit %d, program said %q:\n%s", code, stdout, stderr)
	}
	r.p = testutil.ReadProfile(t, filepath.Join(dir, "j.pb.gz"))
	col := testutil.ValueIndex(t, r.p, "samples")
	for _, s := range r.p.Sample {
		if len(s.Location) == 0 {
			continue
		}
		leaf := s.Location[0]
		var at string
		switch {
		case leaf.Address >= r.x && leaf.Address < r.x+codeSize:
			at = "X"
		case leaf.Address >= r.y && leaf.Address < r.y+codeSize:
			at = "Y"
		default:
			continue
		}
		names := testutil.StackNames(s)
		caller := "?"
		if len(names) > 1 {
			caller = names[1]
		}
		r.samples[caller+" "+names[0]+"@"+at] += s.Value[col]
		r.jit += s.Value[col]
	}
	t.Logf("%d samples in the JIT code: %v", r.jit, r.samples)
	return r
}

// jitdumpLines are the summary's lines about jitdumps.
func jitdumpLines(stderr string) []string {
	var out []string
	for l := range strings.Lines(stderr) {
		if strings.HasPrefix(l, "cctop: jitdump ") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// TestRecordJITDump is the acceptance check of jitdump support: a program
// runs function A at address X, then B loaded over it at X, then B moved
// to Y, a third of the time each (testdata/tinyjit.c). Only the samples'
// times tell A from B at X: each phase has its own caller, which the
// jitdump's CFI unwinds to, so a sample whose caller is run_a must be
// named A at X, run_b's B at X, run_moved's B at Y. Were time ignored,
// run_a's samples would be named B, the newest code at X; were the move
// ignored, run_moved's would be unnamed; without the CFI, the callers
// would be missing. B's frames carry its debug info's file and lines.
func TestRecordJITDump(t *testing.T) {
	r := recordJITDump(t, "good", "1")
	if r.jit < 150 {
		t.Fatalf("only %d samples in the JIT code:\n%s", r.jit, r.stderr)
	}
	want := map[string]string{
		"run_a":     "run_a jitdump_A@X",
		"run_b":     "run_b jitdump_B@X",
		"run_moved": "run_moved jitdump_B@Y",
	}
	// Per phase: a sample whose caller is run_a must be A at X, and so
	// on. Ignoring time misnames the samples of a phase that are
	// symbolized after the next load was written (here, the tens of ms
	// cctop's pipeline runs behind the samples): a tenth of run_a's.
	phase, wrong := map[string]int64{}, map[string]int64{}
	var other int64
	for k, n := range r.samples {
		caller := strings.Fields(k)[0]
		if _, ok := want[caller]; !ok {
			other += n
			continue
		}
		phase[caller] += n
		if want[caller] != k {
			wrong[caller] += n
		}
	}
	if other*50 > r.jit {
		t.Errorf("%d of %d samples in the JIT code lack their caller: %v", other, r.jit, r.samples)
	}
	for caller, k := range want {
		if wrong[caller]*100 > phase[caller] {
			t.Errorf("%d of %s's %d samples are not %s (more than 1%%)", wrong[caller], caller, phase[caller], k)
		}
		share := float64(r.samples[k]) / float64(r.jit)
		if share < 0.2 || share > 0.47 {
			t.Errorf("%s: %.1f%% of the JIT samples, want about a third", caller, 100*share)
		}
	}
	// B's frames carry b.js and the line of the entry at or below the pc;
	// A, written without debug info, none.
	for _, s := range r.p.Sample {
		leaf := s.Location[0]
		if len(leaf.Line) == 0 {
			continue
		}
		fn, line := leaf.Line[0].Function, leaf.Line[0].Line
		switch fn.Name {
		case "jitdump_B":
			start := r.x
			if leaf.Address >= r.y {
				start = r.y
			}
			wantLine := int64(42)
			if leaf.Address-start >= 3 {
				wantLine = 43
			}
			if fn.Filename != "b.js" || line != wantLine {
				t.Errorf("jitdump_B at %+#x: %s:%d, want b.js:%d", leaf.Address-start, fn.Filename, line, wantLine)
			}
		case "jitdump_A":
			if fn.Filename != "" || line != 0 {
				t.Errorf("jitdump_A has a line, %s:%d", fn.Filename, line)
			}
		}
	}
	if l := jitdumpLines(r.stderr); len(l) != 0 {
		t.Errorf("a good jitdump gave summary lines %q", l)
	}
}

// TestRecordJITDumpDamaged: a jitdump damaged in the middle, or cut inside
// its last record, stops nothing. The summary says so in one line, naming
// the file, and the profile is written with the code decoded before the
// damage named by time as ever.
func TestRecordJITDumpDamaged(t *testing.T) {
	for _, c := range []struct {
		mode, want string
		moved      bool // the move comes before the damage
	}{
		{"corrupt", "damaged at offset", false},
		{"truncated", "truncated at offset", true},
	} {
		t.Run(c.mode, func(t *testing.T) {
			r := recordJITDump(t, c.mode, "0.5")
			lines := jitdumpLines(r.stderr)
			if len(lines) != 1 || !strings.Contains(lines[0], r.dump+": "+c.want) || !strings.Contains(lines[0], "2 functions") {
				t.Errorf("summary lines about jitdumps %q, want one for %s saying %q and 2 functions named\n%s", lines, r.dump, c.want, r.stderr)
			}
			if r.jit < 60 {
				t.Fatalf("only %d samples in the JIT code:\n%s", r.jit, r.stderr)
			}
			a, b := r.samples["run_a jitdump_A@X"], r.samples["run_b jitdump_B@X"]
			if a*5 < r.jit || b*5 < r.jit {
				t.Errorf("A %d, B %d of %d JIT samples, want about a third each", a, b, r.jit)
			}
			if misnamed := r.samples["run_a jitdump_B@X"] + r.samples["run_b jitdump_A@X"]; misnamed*50 > r.jit {
				t.Errorf("%d samples of A and B misnamed", misnamed)
			}
			moved := r.samples["run_moved jitdump_B@Y"]
			if c.moved && moved*5 < r.jit || !c.moved && moved != 0 {
				t.Errorf("%d samples of B named at Y; the move is decoded: %v", moved, c.moved)
			}
		})
	}
}

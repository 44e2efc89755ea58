package engine

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/internal/testutil"
)

// TestLearnedCopies (issue 34): testdata/copyphases.c's steady thread
// runs frame-pointer code all along, its phases thread code without frame
// pointers for its first and last thirds. With default flags the steady
// thread goes to the small copy and stays, the phases thread goes down in
// its middle third and back up, and no stack is lost for it: the samples
// in nofp_mid carry the frames the kernel's chain skips, and the summary
// says the plan, naming the module that needed the copies.
func TestLearnedCopies(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("gcc not installed")
	}
	dir := t.TempDir()
	bin := testutil.Compile(t, dir, "gcc", "../testdata/copyphases.c", "-O2", "-fno-omit-frame-pointer", "-pthread")
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "-o", "cp.pb.gz", "--", bin, "6")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	m := regexp.MustCompile(`unwind fp \+ 512 B copies, (?:up to )?8 KiB(?: \([0-9.]+ KiB on average\))? for ([0-9.]+)% of samples \(needed in copyphases ([0-9.]+)%.*, (\d+) switches up, (\d+) down`).FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no learned plan in the summary:\n%s", stderr)
	}
	large, _ := strconv.ParseFloat(m[1], 64)
	needed, _ := strconv.ParseFloat(m[2], 64)
	ups, _ := strconv.Atoi(m[3])
	downs, _ := strconv.Atoi(m[4])
	// The phases thread needs the copy for two thirds of its half of the
	// samples; both threads start on it.
	if needed < 20 || needed > 45 {
		t.Errorf("copyphases needed the copy in %.1f%% of samples, want about a third:\n%s", needed, stderr)
	}
	if large < needed || large > 70 {
		t.Errorf("%.1f%% of samples on the large copy, want between %.1f%% and 70%%:\n%s", large, needed, stderr)
	}
	if ups < 1 || downs < 2 {
		t.Errorf("%d switches up and %d down, want the phases thread up once and both threads down:\n%s", ups, downs, stderr)
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "cp.pb.gz"))
	col := testutil.ValueIndex(t, p, "samples")
	var inMid, whole, cut, all int64
	for _, s := range p.Sample {
		names := testutil.StackNames(s)
		n := s.Value[col]
		all += n
		if names[len(names)-1] == cct.TruncatedName {
			cut += n
		}
		if slices.Contains(names, "nofp_mid") {
			inMid += n
			if inOrder(names, "nofp_mid", "nofp_outer", "phase_nofp", "phases") {
				whole += n
			}
		}
	}
	if inMid < 500 {
		t.Fatalf("only %d samples in nofp_mid:\n%s", inMid, stderr)
	}
	if whole*100 < inMid*97 {
		t.Errorf("%d of %d samples in nofp_mid have nofp_outer, phase_nofp, phases above, want >= 97%%:\n%s", whole, inMid, stderr)
	}
	if cut*100 > all*3 {
		t.Errorf("%d of %d stacks cut, want <= 3%%:\n%s", cut, all, stderr)
	}
}

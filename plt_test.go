package main

import (
	"bufio"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/cctop/cctop/internal/testutil"
	"github.com/google/pprof/profile"
)

// buildPLT builds testdata/plt.c against testdata/pltlib.c, the library
// built with libFlags, and returns the program's path.
func buildPLT(t *testing.T, dir string, libFlags ...string) string {
	t.Helper()
	for _, tool := range []string{"gcc", "objdump"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	lib := filepath.Join(dir, "libpltlib.so")
	bin := filepath.Join(dir, "plt")
	for _, args := range [][]string{
		append([]string{"-O2", "-shared", "-fPIC", "-o", lib, "testdata/pltlib.c"}, libFlags...),
		{"-O2", "-o", bin, "testdata/plt.c", "-L" + dir, "-lpltlib", "-Wl,-rpath," + dir},
	} {
		if out, err := exec.Command("gcc", args...).CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	for _, f := range []string{lib, bin} {
		dis, err := exec.Command("objdump", "-d", "--no-show-raw-insn", "-j", ".text", f).Output()
		if err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`call +[0-9a-f]+ <memcpy@plt>`).Match(dis) {
			t.Fatalf("%s does not call memcpy through its PLT", f)
		}
	}
	return bin
}

// leafShare is the percentage of a profile's samples whose leaf is the
// function name in a mapping of the file base.
func leafShare(t *testing.T, p *profile.Profile, name, base string) float64 {
	t.Helper()
	col := testutil.ValueIndex(t, p, "samples")
	var n, in int64
	for _, s := range p.Sample {
		n += s.Value[col]
		if len(s.Location) == 0 {
			continue
		}
		loc := s.Location[0]
		if loc.Mapping != nil && filepath.Base(loc.Mapping.File) == base && loc.Line[0].Function.Name == name {
			in += s.Value[col]
		}
	}
	if n == 0 {
		t.Fatal("no samples")
	}
	return 100 * float64(in) / float64(n)
}

// perfShares reads the perf.data that perf record wrote in dir and returns
// perf report's self shares by "dso sym", and perf's version.
func perfShares(t *testing.T, dir string) (map[string]float64, string) {
	t.Helper()
	data := filepath.Join(dir, "perf.data")
	out, err := exec.Command("perf", "report", "-i", data, "--stdio", "--sort", "dso,sym").Output()
	if err != nil {
		t.Fatalf("perf report: %v", err)
	}
	// "    12.90%  libpltlib.so  [.] memcpy@plt"
	row := regexp.MustCompile(`^\s*([0-9.]+)%\s+(\S+)\s+\[.\]\s+(.+?)\s*$`)
	shares := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if m := row.FindStringSubmatch(sc.Text()); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			shares[m[2]+" "+m[3]] += v
		}
	}
	version, _ := exec.Command("perf", "version").Output()
	return shares, strings.TrimSpace(string(version))
}

// TestPLTStubsMatchPerf: a library whose hot loop calls memcpy through its
// PLT, recorded by cctop and by perf at once, both attached to the same run:
// both name the stub "memcpy@plt", and both give it about the same share of
// the samples. (Two separate runs of the program put 10-14.5% of their time
// in the stub: compared across runs, the shares differed by that much.)
// With IBT stubs (.plt.sec), perf before 6.3 leaves the stub unnamed, and
// cctop's share is compared with that of the stub's addresses in perf's
// report.
func TestPLTStubsMatchPerf(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	for _, c := range []struct {
		name  string
		flags []string
	}{
		{"lazy", nil},
		{"ibt", []string{"-fcf-protection=full", "-Wl,-z,ibtplt"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			bin := buildPLT(t, dir, c.flags...)
			got, perf, version := recordWithPerf(t, dir, bin, "lib", "libpltlib.so")
			want, named := perfStubShare(t, perf, filepath.Join(dir, "libpltlib.so"), "libpltlib.so")
			if !named {
				if c.name == "lazy" && want >= 1 {
					t.Errorf("perf does not name the stub memcpy@plt: %v", perf)
				}
				t.Logf("%s leaves the stub unnamed", version)
			}
			checkStubShare(t, got, want, version)
		})
	}
}

// perfStubShare is perf's share of memcpy@plt in module (file path): the
// samples it names so, and, where it cannot name the stub, those it
// reports by their addresses in the stub (or, perf 6.1 on an executable,
// as _init, of size 0, which runs on over .plt).
func perfStubShare(t *testing.T, perf map[string]float64, path, module string) (share float64, named bool) {
	t.Helper()
	share, named = perf[module+" memcpy@plt"]
	lo, hi := stubRange(t, path, "memcpy@plt")
	for k, v := range perf {
		a, err := strconv.ParseUint(strings.TrimPrefix(k, module+" 0x"), 16, 64)
		if err == nil && strings.HasPrefix(k, module+" 0x") && a >= lo && a < hi {
			share += v
		}
	}
	return share + perf[module+" _init"], named
}

// recordWithPerf runs bin MODE 5 and records it with cctop and perf at once,
// attached to the same run, for 2 s: cctop's share of memcpy@plt in module,
// and perf's report by dso and symbol.
func recordWithPerf(t *testing.T, dir, bin, mode, module string) (float64, map[string]float64, string) {
	t.Helper()
	if _, err := exec.LookPath("perf"); err != nil {
		t.Skip("perf not installed")
	}
	target := exec.Command(bin, mode, "5")
	startCmd(t, target)
	pid := strconv.Itoa(target.Process.Pid)
	perfDone := make(chan []byte, 1)
	go func() {
		out, err := exec.Command("perf", "record", "-q", "-F", "999", "-p", pid, "-o", filepath.Join(dir, "perf.data"), "--", "sleep", "2.5").CombinedOutput()
		if err != nil {
			out = append(out, []byte("\n"+err.Error())...)
		} else {
			out = nil
		}
		perfDone <- out
	}()
	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "--calls", "none", "-d", "2s", "-o", "p.pb.gz", "-p", pid)
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	if out := <-perfDone; out != nil {
		t.Skipf("perf record does not work here: %s", out)
	}
	got := leafShare(t, testutil.ReadProfile(t, filepath.Join(dir, "p.pb.gz")), "memcpy@plt", module)
	perf, version := perfShares(t, dir)
	return got, perf, version
}

// checkStubShare compares cctop's share of the stub with perf's. Where perf
// gives it a few percent (Intel parts here: 10-14.5%), cctop must name it
// and agree within a third; where the CPU puts the stub's time on the
// instructions around it (an AMD EPYC here: 0.04-0.2% in perf), there is
// little to name, and the shares must agree within half a point.
func checkStubShare(t *testing.T, got, want float64, version string) {
	t.Helper()
	t.Logf("memcpy@plt: cctop %.2f%%, perf %.2f%% (%s)", got, want, version)
	if want < 1 {
		t.Logf("this CPU gives the stub %.2f%% of perf's samples: only the shares' agreement is checked", want)
		if d := got - want; d > 0.5 || d < -0.5 {
			t.Errorf("memcpy@plt: cctop %.2f%%, perf %.2f%%", got, want)
		}
		return
	}
	if got < 1 {
		t.Errorf("memcpy@plt holds %.2f%% of cctop's samples, %.2f%% of perf's", got, want)
	}
	if d := got - want; d > max(3, want/3) || -d > max(3, want/3) {
		t.Errorf("memcpy@plt: cctop %.1f%%, perf %.1f%%", got, want)
	}
}

// stubRange is the address range of the stub objdump labels name in path.
func stubRange(t *testing.T, path, name string) (uint64, uint64) {
	t.Helper()
	out, err := exec.Command("objdump", "-d", "--no-show-raw-insn", "-j", ".plt", "-j", ".plt.sec", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	label := regexp.MustCompile(`(?m)^([0-9a-f]+) <` + regexp.QuoteMeta(name) + `>:$`)
	m := label.FindSubmatch(out)
	if m == nil {
		t.Fatalf("objdump labels no %s in %s", name, path)
	}
	lo, _ := strconv.ParseUint(string(m[1]), 16, 64)
	return lo, lo + 16
}

// TestPLTExecutable: the stub of the executable's own PLT is named too,
// with perf's share of it. (perf 6.1 names its samples _init+0x70: _init,
// of size 0, runs on over .plt there.)
func TestPLTExecutable(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	bin := buildPLT(t, dir)
	got, perf, version := recordWithPerf(t, dir, bin, "exe", "plt")
	want, _ := perfStubShare(t, perf, bin, "plt")
	checkStubShare(t, got, want, version)
}

// TestUnnamedStrippedFunction: in a stripped build, the hot static
// function is one node named "[plt+0xOFF]", OFF the file offset of its
// first instruction (its symbol in the unstripped build, through the
// program headers), and pprof keeps its mapping and addresses so that
// tools can symbolize it again.
func TestUnnamedStrippedFunction(t *testing.T) {
	testutil.SkipIfNoPerf(t)
	dir := t.TempDir()
	full := buildPLT(t, dir)
	if err := os.Mkdir(filepath.Join(dir, "s"), 0o755); err != nil {
		t.Fatal(err)
	}
	stripped := filepath.Join(dir, "s", "plt")
	if out, err := exec.Command("strip", "-o", stripped, full).CombinedOutput(); err != nil {
		t.Skipf("strip: %v\n%s", err, out)
	}
	f, err := elf.Open(full)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, _ := f.Symbols()
	var spin elf.Symbol
	for _, s := range syms {
		if s.Name == "spin" {
			spin = s
		}
	}
	var off uint64
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && spin.Value >= p.Vaddr && spin.Value < p.Vaddr+p.Filesz {
			off = spin.Value - p.Vaddr + p.Off
		}
	}
	if spin.Size == 0 || off == 0 {
		t.Fatalf("spin not found in %s", full)
	}
	want := fmt.Sprintf("[plt+%#x]", off)

	_, stderr, code := testutil.Run(t, cctopBin, dir, "record", "--calls", "none", "-o", "p.pb.gz", "--", stripped, "spin", "2")
	if code != 0 {
		t.Fatalf("record exit %d:\n%s", code, stderr)
	}
	p := testutil.ReadProfile(t, filepath.Join(dir, "p.pb.gz"))
	if got := leafShare(t, p, want, "plt"); got < 80 {
		t.Errorf("%s holds %.1f%% of the samples", want, got)
	}
	for _, s := range p.Sample {
		for _, loc := range s.Location {
			if loc.Line[0].Function.Name != want {
				continue
			}
			if loc.Mapping == nil || loc.Mapping.File != stripped || loc.Address < spin.Value || loc.Address >= spin.Value+spin.Size {
				t.Fatalf("%s at %#x in %+v, want an address in [%#x, %#x) of %s",
					want, loc.Address, loc.Mapping, spin.Value, spin.Value+spin.Size, stripped)
			}
		}
	}
	for _, fn := range p.Function {
		if fn.Name == "[plt]" {
			t.Errorf("a frame is named by the bare module: %+v", fn)
		}
	}
}

package main

import (
	"context"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	rpprof "runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cctop/cctop/internal/testutil"
)

// topRow is one function of a flat top: its name and flat share in percent.
type topRow struct {
	name string
	flat float64
}

// parseTop reads the rows of go tool pprof -top's or cctop view --top's table: the
// lines after the one that starts with "flat", whose second field is flat%.
func parseTop(t *testing.T, out string) []topRow {
	t.Helper()
	var rows []topRow
	in := false
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && f[0] == "flat" {
			in = true
			continue
		}
		if !in || len(f) < 6 {
			continue
		}
		pct, err := strconv.ParseFloat(strings.TrimSuffix(f[1], "%"), 64)
		if err != nil {
			t.Fatalf("flat%% %q in %q", f[1], line)
		}
		name := strings.Join(f[5:], " ")
		name = strings.TrimSuffix(strings.TrimSuffix(name, " (inline)"), " (partial-inline)")
		rows = append(rows, topRow{name, pct})
	}
	return rows
}

// pprofTestdata is google/pprof's profile/testdata, from the module cache: its
// profiles are what pprof's own tests read, legacy formats among them.
func pprofTestdata(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/google/pprof").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	dir := filepath.Join(strings.TrimSpace(string(out)), "profile", "testdata")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		// The .string files are pprof's expected text, not profiles.
		if !strings.HasSuffix(e.Name(), ".string") {
			files = append(files, filepath.Join(dir, e.Name()))
		}
	}
	if len(files) < 10 {
		t.Fatalf("%d profiles in %s", len(files), dir)
	}
	return files
}

// TestViewTopMatchesPprof: for every profile in google/pprof's profile/testdata that
// go tool pprof -top reads, and a Go heap profile and a Go CPU profile, cctop view
// --top 5 gives the same five functions in the same order, with flat% within 0.1
// points, for the default sample type and every other one.
func TestViewTopMatchesPprof(t *testing.T) {
	files := append(pprofTestdata(t), heapProfileFile(t), "cct/testdata/runtime.pb.gz")
	compared := 0
	for _, file := range files {
		for _, index := range []string{"", "0", "1", "2", "3"} {
			args := []string{"tool", "pprof", "-top"}
			cargs := []string{"view", file, "--top", "5"}
			if index != "" {
				args = append(args, "-sample_index="+index)
				cargs = append(cargs, "--sample-index", index)
			}
			cmd := exec.Command("go", append(args, file)...)
			// No binaries to symbolize with: pprof shows what the file holds, as cctop.
			cmd.Env = append(os.Environ(), "PPROF_BINARY_PATH="+t.TempDir())
			ref, err := cmd.Output()
			if err != nil {
				if index == "" {
					t.Logf("%s: go tool pprof cannot read it (%v): left out", filepath.Base(file), err)
				}
				continue
			}
			want := parseTop(t, string(ref))
			if len(want) > 5 {
				want = want[:5]
			}
			out, stderr, code := testutil.Run(t, cctopBin, "", cargs...)
			if code != 0 {
				t.Errorf("%s: exit %d: %s", strings.Join(cargs, " "), code, stderr)
				continue
			}
			got := parseTop(t, out)
			compared++
			if len(got) != len(want) {
				t.Errorf("%s: %d rows, pprof %d\ncctop:\n%s\npprof:\n%s", strings.Join(cargs, " "), len(got), len(want), out, ref)
				continue
			}
			for i := range want {
				if got[i].name != want[i].name || got[i].flat-want[i].flat > 0.1 || want[i].flat-got[i].flat > 0.1 {
					t.Errorf("%s: row %d is %+v, pprof's %+v\ncctop:\n%s\npprof:\n%s", strings.Join(cargs, " "), i+1, got[i], want[i], out, ref)
					break
				}
			}
		}
	}
	t.Logf("%d tops of %d profiles compared", compared, len(files))
	if compared < len(files) {
		t.Errorf("compared %d tops of %d files", compared, len(files))
	}
}

// heapProfileFile is a heap profile written by a Go program (testdata/heapprog), run
// with args after the file's path.
func heapProfileFile(t *testing.T, args ...string) string {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "heapprog")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/heapprog").CombinedOutput(); err != nil {
		t.Fatalf("building heapprog: %v\n%s", err, out)
	}
	path := filepath.Join(dir, "heap.pb.gz")
	if out, err := exec.Command(bin, append([]string{path}, args...)...).CombinedOutput(); err != nil {
		t.Fatalf("heapprog: %v\n%s", err, out)
	}
	return path
}

// TestViewDiffMatchesPprof: --base subtracts as pprof's -diff_base does: the same top
// functions with the same flat% (of the base's total), and the TUI's metric column is the
// difference.
func TestViewDiffMatchesPprof(t *testing.T) {
	file, base := heapProfileFile(t), heapProfileFile(t, "half")
	for _, index := range []string{"inuse_space", "alloc_space", "inuse_objects"} {
		ref, err := exec.Command("go", "tool", "pprof", "-top", "-sample_index="+index, "-diff_base", base, file).Output()
		if err != nil {
			t.Fatalf("go tool pprof -diff_base: %v", err)
		}
		out, stderr, code := testutil.Run(t, cctopBin, "", "view", file, "--base", base, "--sample-index", index, "--top", "5")
		want, got := parseTop(t, string(ref)), parseTop(t, out)
		if len(want) > 5 {
			want = want[:5]
		}
		if code != 0 || len(got) != len(want) {
			t.Fatalf("%s: exit %d %s\n%s\npprof:\n%s", index, code, stderr, out, ref)
		}
		for i := range want {
			// pprof writes a negative flat's share without its sign; cctop keeps it.
			if g, w := math.Abs(got[i].flat), want[i].flat; got[i].name != want[i].name || g-w > 0.1 || w-g > 0.1 {
				t.Errorf("%s row %d: %+v, pprof's %+v\n%s\npprof:\n%s", index, i+1, got[i], want[i], out, ref)
			}
		}
	}
	s := newTmux(t, 120, 30, cctopBin+" view "+file+" --base "+base)
	s.waitFor(`±size`, 10*time.Second)
	s.waitFor(`\+2\.00MiB\s+\+\d+\.\d\s+main\.holdBig`, 5*time.Second)
	s.keys("q")
	s.waitFor(`CCTOP-EXITED 0`, 5*time.Second)
}

// pprofShare is go tool pprof's flat% of fn in file under sample index idx.
func pprofShare(t *testing.T, file, idx, fn string) float64 {
	t.Helper()
	out, err := exec.Command("go", "tool", "pprof", "-top", "-sample_index="+idx, file).Output()
	if err != nil {
		t.Fatalf("go tool pprof: %v", err)
	}
	for _, r := range parseTop(t, string(out)) {
		if r.name == fn {
			return r.flat
		}
	}
	t.Fatalf("%s not in pprof's top:\n%s", fn, out)
	return 0
}

// TestViewHeapInTmux: a Go program's heap profile, opened as a person would. The first
// screen shows the function that holds the most memory (inuse_space) with pprof's share;
// the sample-type key goes on to alloc_space, where the function that allocated the most
// leads.
func TestViewHeapInTmux(t *testing.T) {
	file := heapProfileFile(t)
	inuse := pprofShare(t, file, "inuse_space", "main.holdBig")
	alloc := pprofShare(t, file, "alloc_space", "main.churn")
	s := newTmux(t, 120, 30, cctopBin+" view "+file)
	s.waitFor(`type inuse_space/bytes \(4 types\)`, 10*time.Second)
	// The shares as the screen rounds them: pprof's two decimals, rounded again to one,
	// could differ from cctop's own rounding in the last digit.
	near := func(m []string, want float64) {
		t.Helper()
		for _, f := range m[1:] {
			if x, _ := strconv.ParseFloat(f, 64); math.Abs(x-want) > 0.1 {
				t.Errorf("share %s%% on screen, pprof's %.2f%%", f, want)
			}
		}
	}
	near(s.waitFor(`([\d.]+)%\s+([\d.]+)%\s+4\.00MiB\s+main\.holdBig`, 5*time.Second), inuse)
	if strings.Contains(s.screen(), "unwound") || strings.Contains(s.screen(), "density") {
		t.Errorf("a heap profile's header shows live-only facts:\n%s", s.screen())
	}
	s.keys("y")
	s.waitFor(`type alloc_space/bytes`, 5*time.Second)
	near(s.waitFor(`([\d.]+)%\s+([\d.]+)%\s+6\d\.\dMiB\s+main\.churn`, 5*time.Second), alloc)
	s.keys("q")
	s.waitFor(`CCTOP-EXITED 0`, 5*time.Second)

	// From standard input: the keys still come from the terminal.
	s = newTmux(t, 120, 30, "cat "+file+" | "+cctopBin+" view -")
	s.waitFor(`stdin\s+type inuse_space/bytes`, 10*time.Second)
	s.keys("y")
	s.waitFor(`type alloc_space/bytes`, 5*time.Second)
	s.keys("q")
	s.waitFor(`CCTOP-EXITED 0`, 5*time.Second)
}

//go:noinline
func viewTestSpin(stop <-chan struct{}) int {
	n := 0
	for {
		select {
		case <-stop:
			return n
		default:
		}
		for i := 0; i < 1e5; i++ {
			n += i ^ n
		}
	}
}

// TestViewNetHTTPPprof: cctop view reads a live net/http/pprof endpoint, as go tool
// pprof URL does: the heap, and a CPU profile of --seconds 2 while this test spins.
func TestViewNetHTTPPprof(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	base := "http://" + ln.Addr().String() + "/debug/pprof/"

	// gc=1: a heap profile is as of the last collection, and none may have
	// run yet in this process (CI once saw 0 bytes in use). And something
	// sampled must be in use then: an allocation far above the sampling
	// rate is always sampled, and it is held until the profile is read
	// (CI at 9f8f55c saw 109 samples, all freed: 0 bytes in use).
	held := make([]byte, 8<<20)
	out, stderr, code := testutil.Run(t, cctopBin, "", "view", base+"heap?gc=1", "--top", "5")
	if code != 0 || !strings.Contains(out, "inuse_space/bytes") || len(parseTop(t, out)) == 0 {
		t.Errorf("heap: exit %d\n%s%s", code, out, stderr)
	}
	runtime.KeepAlive(held)

	// The spinner runs under a goroutine label, as pprof.Do sets them.
	stop := make(chan struct{})
	done := make(chan int)
	go rpprof.Do(context.Background(), rpprof.Labels("worker", "spin"), func(context.Context) { done <- viewTestSpin(stop) })
	out, stderr, code = testutil.Run(t, cctopBin, "", "view", base+"profile", "--seconds", "2", "--top", "5")
	if code != 0 || !strings.Contains(out, "cpu/nanoseconds") || !strings.Contains(out, "viewTestSpin") {
		t.Errorf("profile --seconds 2: exit %d\n%s%s", code, out, stderr)
	}
	// The same kind of profile saved, and filtered by its labels.
	resp, err := http.Get(base + "profile?seconds=1")
	if err != nil {
		t.Fatal(err)
	}
	saved := filepath.Join(t.TempDir(), "cpu.pb.gz")
	data, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	close(stop)
	<-done
	if err != nil || os.WriteFile(saved, data, 0o644) != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flag string
		spin bool
	}{{"--tagfocus=worker=spin", true}, {"--tagignore=worker=spin", false}, {"--tagfocus=worker:sp", true}} {
		out, stderr, code := testutil.Run(t, cctopBin, "", "view", saved, c.flag, "--top", "20")
		if code != 0 || strings.Contains(out, "viewTestSpin") != c.spin {
			t.Errorf("%s: exit %d, viewTestSpin shown: %v, want %v\n%s%s", c.flag, code, !c.spin, c.spin, out, stderr)
		}
		// Everything kept ran under the label: below pprof.Do.
		if c.spin && !regexp.MustCompile(`100\.00%  runtime/pprof\.Do\n`).MatchString(out) {
			t.Errorf("%s: samples from outside the labelled goroutine:\n%s", c.flag, out)
		}
	}

	// The TUI on the same endpoint's heap.
	s := newTmux(t, 120, 30, cctopBin+" view '"+base+"heap?gc=1'")
	s.waitFor(`type inuse_space/bytes`, 10*time.Second)
	s.keys("q")
	s.waitFor(`CCTOP-EXITED 0`, 5*time.Second)

	// Bad endpoints: one line each, exit 1.
	hang, err := net.Listen("tcp", "127.0.0.1:0") // accepts, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer hang.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{base + "nothing"}, "404 Not Found"},
		{[]string{base + "profile", "--seconds", "-1"}, "--seconds must be positive"},
		{[]string{"http://" + hang.Addr().String() + "/debug/pprof/heap", "--timeout", "1s"}, "no profile within 1s (--timeout)"},
	} {
		_, stderr, code := testutil.Run(t, cctopBin, "", append([]string{"view"}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") > 1 && !strings.Contains(stderr, "usage") {
			t.Errorf("view %v: exit %d, %q; want %q", c.args, code, stderr, c.want)
		}
	}
	// A 500 from the profile handler: a CPU profile while another runs.
	busy := make(chan struct{})
	go func() {
		testutil.Run(t, cctopBin, "", "view", base+"profile", "--seconds", "3", "--top", "1")
		close(busy)
	}()
	time.Sleep(500 * time.Millisecond)
	_, stderr, code = testutil.Run(t, cctopBin, "", "view", base+"profile", "--seconds", "1", "--top", "1")
	<-busy
	if code != 1 || !strings.Contains(stderr, "500 Internal Server Error") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("a CPU profile while another runs: exit %d, %q; want a 500 in one line", code, stderr)
	}
}

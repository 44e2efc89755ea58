package symbol

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestParsePerfMapLine(t *testing.T) {
	for _, c := range []struct {
		line string
		want jitSym
		ok   bool
	}{
		{"7fd4677c6040 180 JS:*hotLoopFib /tmp/hot.js:1:20", jitSym{0x7fd4677c6040, 0x7fd4677c61c0, "JS:*hotLoopFib /tmp/hot.js:1:20"}, true},
		{"0x1000 0x10 LazyCompile:*fib /tmp/x.js:3", jitSym{0x1000, 0x1010, "LazyCompile:*fib /tmp/x.js:3"}, true},
		{"18C4000 300 Builtin:DeoptimizationEntry_Eager\r", jitSym{0x18c4000, 0x18c4300, "Builtin:DeoptimizationEntry_Eager"}, true},
		{"  10\t20   spaced  name  ", jitSym{0x10, 0x30, "spaced  name"}, true},
		{"10 20 bell\x07and\xffbad", jitSym{0x10, 0x30, "bell?and\uFFFDbad"}, true},
		{"ffffffffffffffff 1 wraps", jitSym{}, false},
		{"fffffffffffffff0 10 wraps-to-zero", jitSym{}, false},
		{"fffffffffffffff0 f last-bytes", jitSym{0xfffffffffffffff0, 0xffffffffffffffff, "last-bytes"}, true},
		{"10000000000000000 1 too-wide", jitSym{}, false},
		{"10 0 empty-range", jitSym{}, false},
		{"10 20", jitSym{}, false},
		{"10 20 ", jitSym{}, false},
		{"10 20name", jitSym{}, false},
		{"10-20 30 name", jitSym{}, false},
		{"0x 10 name", jitSym{}, false},
		{"g10 20 name", jitSym{}, false},
		{"", jitSym{}, false},
	} {
		got, ok := parsePerfMapLine([]byte(c.line))
		if ok != c.ok || got != c.want {
			t.Errorf("parsePerfMapLine(%q) = %+v, %v; want %+v, %v", c.line, got, ok, c.want, c.ok)
		}
	}
}

// naiveJIT is the reference for the table: every line kept, the last one
// covering an address names it.
type naiveJIT []jitSym

func (n naiveJIT) find(pc uint64) (string, bool) {
	for i := len(n) - 1; i >= 0; i-- {
		if n[i].start <= pc && pc < n[i].end {
			return n[i].name, true
		}
	}
	return "", false
}

// checkTable checks the table's invariants and that it answers like ref at
// every boundary of every line and around it.
func checkTable(t *testing.T, got jitTable, ref naiveJIT) {
	t.Helper()
	for i, s := range got {
		if s.start >= s.end || (i > 0 && got[i-1].end > s.start) {
			t.Fatalf("table not sorted and disjoint at %d: %+v", i, got)
		}
	}
	// Probing around a few hundred lines keeps the quadratic reference
	// fast on large fuzz inputs.
	stride := len(ref)/256 + 1
	for i, s := range ref {
		if i%stride != 0 && i != len(ref)-1 {
			continue
		}
		for _, pc := range []uint64{s.start - 1, s.start, s.start + (s.end-s.start)/2, s.end - 1, s.end} {
			gn, gok := got.find(pc)
			wn, wok := ref.find(pc)
			if gn != wn || gok != wok {
				t.Fatalf("find(%#x) = %q, %v; want %q, %v", pc, gn, gok, wn, wok)
			}
		}
	}
}

func TestJITTableMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		var tab jitTable
		var ref naiveJIT
		for range 1 + rng.IntN(5) {
			var batch []jitSym
			for range rng.IntN(40) {
				start := uint64(rng.IntN(400))
				if round%3 == 0 {
					// Mostly ascending, as a JIT fills a region.
					start = uint64(len(ref)+len(batch))*8 + uint64(rng.IntN(4))
				}
				s := jitSym{start, start + 1 + uint64(rng.IntN(30)), strconv.Itoa(len(ref) + len(batch))}
				batch = append(batch, s)
			}
			ref = append(ref, batch...)
			tab = tab.merge(batch)
			checkTable(t, tab, ref)
		}
	}
}

func TestJITTableMergeCases(t *testing.T) {
	s := func(start, end uint64, name string) jitSym { return jitSym{start, end, name} }
	for _, c := range []struct {
		name       string
		old, batch []jitSym
		want       jitTable
	}{
		{"split-middle", []jitSym{s(0, 100, "a")}, []jitSym{s(40, 60, "b")},
			jitTable{s(0, 40, "a"), s(40, 60, "b"), s(60, 100, "a")}},
		{"cover-several", []jitSym{s(0, 10, "a"), s(20, 30, "b"), s(40, 50, "c")}, []jitSym{s(5, 45, "n")},
			jitTable{s(0, 5, "a"), s(5, 45, "n"), s(45, 50, "c")}},
		{"within-batch-newest-wins", nil, []jitSym{s(0, 100, "old"), s(10, 20, "mid"), s(0, 15, "new")},
			jitTable{s(0, 15, "new"), s(15, 20, "mid"), s(20, 100, "old")}},
		{"append-past-end", []jitSym{s(0, 10, "a")}, []jitSym{s(10, 20, "b")},
			jitTable{s(0, 10, "a"), s(10, 20, "b")}},
		{"exact-replace", []jitSym{s(0, 10, "a"), s(10, 20, "b")}, []jitSym{s(0, 10, "c")},
			jitTable{s(0, 10, "c"), s(10, 20, "b")}},
	} {
		got := jitTable(nil).merge(c.old).merge(c.batch)
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// TestJITTableCap: past maxPerfMapEntries the table starts over from the
// newest batch instead of growing.
func TestJITTableCap(t *testing.T) {
	var p perfMapParser
	var b strings.Builder
	n := maxPerfMapEntries + perfMapBatch + 10
	for i := range n {
		fmt.Fprintf(&b, "%x 10 f%d\n", uint64(i)*16, i)
	}
	p.feed([]byte(b.String()))
	p.flush()
	if len(p.syms) > maxPerfMapEntries {
		t.Fatalf("%d entries, bound %d", len(p.syms), maxPerfMapEntries)
	}
	if name, ok := p.syms.find(uint64(n-1) * 16); !ok || name != fmt.Sprintf("f%d", n-1) {
		t.Errorf("newest entry lost: %q %v", name, ok)
	}
}

// TestPerfMapParserChunks: however the bytes are split, the same complete
// lines are parsed; a line is not parsed until its newline arrives, and
// over-long lines are skipped without buffering them.
func TestPerfMapParserChunks(t *testing.T) {
	long := strings.Repeat("x", maxPerfMapLine+10)
	text := "1000 10 first fn\n" +
		"garbage line\n" +
		"2000 10 " + long + "\n" +
		"3000 10 after long\n" +
		"1000 10 first fn again\n" +
		"4000 10 no newline yet"
	want := map[uint64]string{0x1000: "first fn again", 0x3000: "after long"}
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 200 {
		var p perfMapParser
		for rest := []byte(text); len(rest) > 0; {
			n := 1 + rng.IntN(len(rest))
			if round == 0 {
				n = 1 // byte by byte
			}
			p.feed(rest[:n])
			rest = rest[n:]
			if rng.IntN(3) == 0 {
				p.flush()
			}
			if len(p.partial) > maxPerfMapLine {
				t.Fatalf("partial line grew to %d bytes", len(p.partial))
			}
		}
		p.flush()
		for pc, name := range want {
			if got, ok := p.syms.find(pc); !ok || got != name {
				t.Errorf("round %d: find(%#x) = %q, %v; want %q", round, pc, got, ok, name)
			}
		}
		for _, pc := range []uint64{0x2000, 0x4000} {
			if got, ok := p.syms.find(pc); ok {
				t.Errorf("round %d: find(%#x) = %q; want nothing", round, pc, got)
			}
		}
		p.feed([]byte("\n"))
		p.flush()
		if got, _ := p.syms.find(0x4000); got != "no newline yet" {
			t.Errorf("round %d: completed line not parsed: %q", round, got)
		}
	}
}

func TestParseNSpid(t *testing.T) {
	for _, c := range []struct {
		status string
		want   int
	}{
		{"Name:\tx\nNSpid:\t4242\t17\t1\nNSpgid:\t4242\n", 1},
		{"Name:\tx\nNSpid:\t4242\n", 4242},
		{"Name:\tx\n", 7},
		{"NSpid:\n", 7},
		{"NSpid:\tbad\n", 7},
	} {
		if got := parseNSpid(c.status, 7); got != c.want {
			t.Errorf("parseNSpid(%q) = %d, want %d", c.status, got, c.want)
		}
	}
	if got := nsPID(os.Getpid()); got != os.Getpid() {
		t.Logf("this test runs in a PID namespace: NSpid %d for pid %d", got, os.Getpid())
	}
}

// TestPerfMapFile: the file is read incrementally, from where the last
// read stopped; a replaced or truncated file is read from the start; checks
// are rate-limited.
func TestPerfMapFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "perf-1.map")
	now := time.Now()
	m := &perfMap{
		paths: []string{filepath.Join(dir, "missing"), path},
		now:   func() time.Time { now = now.Add(time.Second); return now },
	}
	write := func(flag int, s string) {
		t.Helper()
		f, err := os.OpenFile(path, flag|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	expect := func(pc uint64, want string) {
		t.Helper()
		got, ok := m.lookup(pc)
		if got != want || ok != (want != "") {
			t.Errorf("lookup(%#x) = %q, %v; want %q", pc, got, ok, want)
		}
	}
	expect(0x1000, "") // no file yet
	write(os.O_CREATE, "1000 100 one\n2000 100 two\n3000 10 thr")
	expect(0x1000, "one")
	expect(0x3000, "") // partial line
	if st, _ := os.Stat(path); m.off != st.Size() {
		t.Errorf("offset %d after reading a %d-byte file", m.off, st.Size())
	}

	// Appends are parsed from the offset: overwrite the start of the file
	// behind the reader's back, and only the appended lines show.
	write(0, "1000 100 XXX\n")
	write(os.O_APPEND, "ee\n1000 80 one again\n")
	expect(0x3000, "three")
	expect(0x1000, "one again")
	expect(0x1090, "one") // the tail the newer line did not cover

	// Rate limit: within the interval nothing is read.
	m.every = time.Hour
	write(os.O_APPEND, "4000 10 four\n")
	expect(0x4000, "")
	m.every = 0
	expect(0x4000, "four")

	// Truncated in place: read from the start.
	write(os.O_TRUNC, "5000 10 five\n")
	expect(0x5000, "five")
	expect(0x1000, "")

	// A hit can be stale, so hits re-check too, though only every
	// hitsPerCheck lookups.
	write(os.O_APPEND, "5000 10 five again\n")
	seen := 0
	for name := "five"; name == "five"; seen++ {
		if seen > hitsPerCheck {
			t.Fatalf("still %q after %d hits", name, seen)
		}
		name, _ = m.lookup(0x5000)
	}
	if got, _ := m.lookup(0x5000); got != "five again" {
		t.Errorf("superseded hit: %q", got)
	}

	// Replaced by another file (a new inode), even one of the same size.
	repl := filepath.Join(dir, "new")
	if err := os.WriteFile(repl, []byte("6000 10 sixx\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(repl, path); err != nil {
		t.Fatal(err)
	}
	expect(0x6000, "sixx")
	expect(0x5000, "")

	// Removed: what was read stays.
	os.Remove(path)
	expect(0x6000, "sixx")

	// A symlink or a FIFO planted at the path is not followed or opened.
	os.Symlink(repl+"-target", path)
	os.WriteFile(repl+"-target", []byte("7000 10 seven\n"), 0o644)
	expect(0x7000, "")
	os.Remove(path)
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	expect(0x7000, "") // and does not hang
	expect(0x6000, "sixx")
}

// jitSource is a C program that behaves like a JIT: it copies code into
// anonymous memory made executable, and names it in /tmp/perf-PID.map (PID
// as its own PID namespace numbers it). It prints the code's addresses,
// then appends to the map on commands from stdin:
//
//	'1' half a line for the second function, without its newline
//	'2' the rest of that line
//	'3' a line that names the first function anew (recompiled in place)
//
// answering each with "done". At end of input it removes the map and exits.
const jitSource = `#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int main(void) {
	size_t size = 8192;
	unsigned char *code = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (code == MAP_FAILED) { perror("mmap"); return 1; }
	memset(code, 0xc3, size); /* ret */
	if (mprotect(code, size, PROT_READ | PROT_EXEC) != 0) { perror("mprotect"); return 1; }
	((void (*)(void))code)();
	char path[64];
	snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f) { perror(path); return 1; }
	fprintf(f, "%lx 40 jit_first_fn (compiled) with spaces\n", (unsigned long)code);
	fflush(f);
	printf("first %p\n", (void *)code);
	printf("second %p\n", (void *)(code + 0x100));
	printf("nspid 0x%x\n", (int)getpid());
	printf("main %p\n", (void *)main);
	printf("ready\n");
	fflush(stdout);
	char c;
	while (read(0, &c, 1) == 1) {
		switch (c) {
		case '1': fprintf(f, "%lx 40 jit_sec", (unsigned long)(code + 0x100)); break;
		case '2': fprintf(f, "ond_fn\n"); break;
		case '3': fprintf(f, "%lx 20 jit_first_fn recompiled\n", (unsigned long)code); break;
		default: continue;
		}
		fflush(f);
		printf("done\n");
		fflush(stdout);
	}
	fclose(f);
	unlink(path);
	return 0;
}
`

// buildJIT compiles jitSource and returns the program's path.
func buildJIT(t *testing.T) string {
	t.Helper()
	needTool(t, "gcc")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "jit.c"), []byte(jitSource), 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, dir, nil, "gcc", "-O1", "-o", "jit", "jit.c")
	return filepath.Join(dir, "jit")
}

// commander is a target that takes commands on stdin and acknowledges
// each on stdout.
type commander struct {
	*target
	stdin io.WriteCloser
	out   *bufio.Scanner
}

// startCommander runs name args like startTarget, keeping stdin and stdout.
func startCommander(t *testing.T, name string, args ...string) *commander {
	t.Helper()
	var stderr strings.Builder
	tg, stdin, out := launch(t, exec.Command(name, args...), &stderr)
	return &commander{target: tg, stdin: stdin, out: out}
}

// send gives the target one command and waits for its answer.
func (c *commander) send(t *testing.T, cmd string) {
	t.Helper()
	if _, err := io.WriteString(c.stdin, cmd); err != nil {
		t.Fatal(err)
	}
	if !c.out.Scan() || c.out.Text() != "done" {
		t.Fatalf("command %q: no answer (%v)", cmd, c.out.Err())
	}
}

// waitName looks pc up until it is named want or a deadline passes: the
// resolver re-reads the map at most every perfMapRecheck.
func waitName(t *testing.T, r *Resolver, pid int, pc uint64, want string) Frame {
	t.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for {
		f := lookup1(r, pid, pc)
		if f.Func == want {
			return f
		}
		if time.Now().After(deadline) {
			t.Fatalf("Lookup(%#x) = %+v, want Func %q", pc, f, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// checkJIT drives a running jitSource program and checks what the resolver
// names: the first function, nothing for a half-written line, the second
// once its line is complete, and the first's new name once superseded.
func checkJIT(t *testing.T, r *Resolver, pid int, c *commander) {
	t.Helper()
	first, second := c.addrs["first"], c.addrs["second"]
	f := waitName(t, r, pid, first+5, "jit_first_fn (compiled) with spaces")
	if f.Module != jitModule || f.Addr != first+5 {
		t.Errorf("JIT frame %+v, want Module %s Addr %#x", f, jitModule, first+5)
	}
	if f := lookup1(r, pid, first+0x40); f.Func != "" {
		t.Errorf("past the entry's size: %+v", f)
	}
	c.send(t, "1")
	// Twice the re-read interval: the half line has surely been seen.
	for end := time.Now().Add(2 * perfMapRecheck); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if f := lookup1(r, pid, second); f.Func != "" {
			t.Fatalf("half-written line named %#x: %+v", second, f)
		}
	}
	c.send(t, "2")
	waitName(t, r, pid, second+0x3f, "jit_second_fn")
	c.send(t, "3")
	waitName(t, r, pid, first, "jit_first_fn recompiled")
	if f := lookup1(r, pid, first+0x30); f.Func != "jit_first_fn (compiled) with spaces" {
		t.Errorf("tail of the first entry, not covered by the newer one: %+v", f)
	}
}

// TestJITPerfMap runs a JIT-like program and names its anonymous code from
// the perf map it writes and appends to, with mappings read from
// /proc/PID/maps and, as the sampler reports them, from MMAP records.
func TestJITPerfMap(t *testing.T) {
	jit := buildJIT(t)
	c := startCommander(t, jit)
	if c.addrs["nspid"] != uint64(c.pid) {
		t.Skipf("test runs in a PID namespace (pid %d is %d to itself)", c.pid, c.addrs["nspid"])
	}
	r := NewResolver()
	if err := r.LoadProc(c.pid); err != nil {
		t.Fatal(err)
	}
	var anon *Mapping
	for _, m := range r.Mappings(c.pid) {
		if m.Start <= c.addrs["first"] && c.addrs["first"] < m.Limit {
			anon = &m
		}
	}
	if anon == nil || anon.Path != "" {
		t.Fatalf("code at %#x not in an anonymous mapping: %+v", c.addrs["first"], anon)
	}
	checkJIT(t, r, c.pid, c)

	// The sampler's view: the same memory from an MMAP record.
	r2 := NewResolver()
	r2.AddMapping(c.pid, Mapping{Start: anon.Start, Limit: anon.Limit, Offset: anon.Start, Path: "//anon"})
	if f := lookup1(r2, c.pid, c.addrs["second"]); f.Func != "jit_second_fn" || f.Module != jitModule {
		t.Errorf("through a //anon MMAP mapping: %+v", f)
	}

	// A forked child has its own (here: no) perf map, even though it
	// inherits the mapping; exec and exit drop the parent's.
	child := 1<<22 + 7 // above the largest pid_max: no such process
	r.Fork(c.pid, child)
	if f := lookup1(r, child, c.addrs["second"]); f != (Frame{Addr: c.addrs["second"], JIT: true}) {
		t.Errorf("forked child named by its parent's perf map: %+v", f)
	}
	r.Exec(c.pid)
	if p := r.procs[c.pid]; p == nil || p.jit != nil {
		t.Errorf("perf map survived exec: %+v", p)
	}
	r.Exit(c.pid)
	if r.procs[c.pid] != nil {
		t.Error("exited pid still has state")
	}
}

// BenchmarkLookupJIT is a lookup in JIT code named by a perf map of 100k
// entries, the clock check included.
func BenchmarkLookupJIT(b *testing.B) {
	var lines strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&lines, "%x 40 JS:*fn%d /app/x.js:%d\n", 0x10000+i*0x40, i, i)
	}
	r := NewResolver()
	const pid = 1<<22 + 9
	r.AddMapping(pid, Mapping{Start: 0x10000, Limit: 0x10000 + 100000*0x40, Path: "//anon"})
	p := r.procs[pid]
	p.jit = &perfMap{every: perfMapRecheck, checked: time.Now(), now: time.Now}
	p.jit.parser.feed([]byte(lines.String()))
	p.jit.parser.flush()
	dst := make([]Frame, 0, 4)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		dst = r.Lookup(pid, 0x10000+uint64(i%100000)*0x40+3, dst[:0])
	}
	if dst[0].Func == "" {
		b.Fatal("not named")
	}
}

func TestAnonCode(t *testing.T) {
	for path, want := range map[string]bool{
		"": true, "//anon": true, "[anon:v8 code]": true, "[anon_shmem:x]": true,
		"/memfd:doublemapper (deleted)": true, "/dev/zero (deleted)": true,
		"/anon_hugepage (deleted)": true, "[heap]": true,
		"/usr/bin/node": false, "[vdso]": false, "[stack]": false, "[vsyscall]": false,
	} {
		if got := anonCode(path); got != want {
			t.Errorf("anonCode(%q) = %v, want %v", path, got, want)
		}
	}
}

// TestPerfMapLate: a pc of anonymous code that no perf map names comes
// back marked JIT, by its pc; the process's PerfMap names it once the map
// is written, late, and stays usable after the process's exit. A read
// waits for the recheck interval unless asked to read now, and Version
// moves only when the table changes.
func TestPerfMapLate(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "perf-7.map")
	const pid = 1<<22 + 11 // above the largest pid_max: no such process
	r := NewResolver()
	r.AddMapping(pid, Mapping{Start: 0x10000, Limit: 0x20000, Path: "//anon"})
	r.AddMapping(pid, Mapping{Start: 0x30000, Limit: 0x31000, Path: "[vsyscall]"})
	if pm := r.PerfMap(pid); pm != (PerfMap{}) || pm.Path() != "" || pm.Found() {
		t.Fatalf("a perf map before any lookup in anonymous code: %+v", pm)
	}
	now := time.Now()
	r.procs[pid].jit = &perfMap{paths: []string{path}, name: "/tmp/perf-7.map", every: time.Second,
		now: func() time.Time { return now }}
	if f := lookup1(r, pid, 0x10040); f != (Frame{Module: "//anon", Addr: 0x10040, JIT: true}) {
		t.Errorf("unnamed JIT pc: %+v", f)
	}
	if f := lookup1(r, pid, 0x30010); f.JIT || f.Module != "[vsyscall]" {
		t.Errorf("a pseudo mapping is no JIT code: %+v", f)
	}
	pm := r.PerfMap(pid)
	if pm.Path() != "/tmp/perf-7.map" || pm.Found() || pm.Entries() != 0 {
		t.Errorf("before the file: path %q, found %v, %d entries", pm.Path(), pm.Found(), pm.Entries())
	}
	v0 := pm.Version()
	if err := os.WriteFile(path, []byte("10000 80 late_fn\n10100 10 other"), 0o644); err != nil {
		t.Fatal(err)
	}
	pm.Refresh(false) // the lookup just checked: within the interval
	if _, ok := pm.Frame(0x10040); ok || pm.Version() != v0 {
		t.Errorf("read within the recheck interval")
	}
	r.Exit(pid) // the handle outlives the process
	pm.Refresh(true)
	f, ok := pm.Frame(0x10040)
	if !ok || f != (Frame{Func: "late_fn", Module: jitModule, Addr: 0x10040}) {
		t.Errorf("Frame(0x10040) = %+v, %v", f, ok)
	}
	if _, ok := pm.Frame(0x10100); ok {
		t.Error("a half-written line names code")
	}
	v1 := pm.Version()
	if v1 == v0 || !pm.Found() || pm.Entries() != 1 {
		t.Errorf("after the read: version %d (was %d), found %v, %d entries", v1, v0, pm.Found(), pm.Entries())
	}
	pm.Refresh(true)
	if pm.Version() != v1 {
		t.Error("version moved with nothing new")
	}
	f2, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f2.WriteString("_fn\n")
	f2.Close()
	now = now.Add(2 * time.Second)
	pm.Refresh(false)
	if f, ok := pm.Frame(0x10105); !ok || f.Func != "other_fn" || pm.Version() == v1 {
		t.Errorf("after the rest of the line: %+v, %v, version %d", f, ok, pm.Version())
	}
	if f, ok := (PerfMap{}).Frame(0x10040); ok || f != (Frame{}) {
		t.Error("the zero PerfMap names code")
	}
}

// TestPerfMapFallbackGuard: once a map was read where the process's root
// shows it, a different file at the fallback path (the host's /tmp, once
// the process and its /proc/PID/root are gone) is not taken for it.
func TestPerfMapFallbackGuard(t *testing.T) {
	dir := t.TempDir()
	inner, host := filepath.Join(dir, "root-perf-9.map"), filepath.Join(dir, "host-perf-9.map")
	os.WriteFile(inner, []byte("1000 10 inner_fn\n"), 0o644)
	os.WriteFile(host, []byte("1000 10 host_fn\n"), 0o644)
	m := &perfMap{paths: []string{inner, host}, now: time.Now}
	pm := PerfMap{m}
	pm.Refresh(true)
	os.Remove(inner)
	pm.Refresh(true)
	if f, _ := pm.Frame(0x1000); f.Func != "inner_fn" {
		t.Errorf("after the process's root went: %q", f.Func)
	}
	// A map never read before may be found at the fallback path.
	pm = PerfMap{&perfMap{paths: []string{inner, host}, now: time.Now}}
	pm.Refresh(true)
	if f, _ := pm.Frame(0x1000); f.Func != "host_fn" {
		t.Errorf("fallback path: %q", f.Func)
	}
}

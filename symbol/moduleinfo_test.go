package symbol

import (
	"bytes"
	"debug/elf"
	"encoding/hex"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// readelfText runs readelf with args on path.
func readelfText(t *testing.T, readelf string, args ...string) string {
	t.Helper()
	cmd := exec.Command(readelf, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("readelf %v: %v", args, err)
	}
	return string(out)
}

// readelfInfo is what readelf -n and -lW say of path: the GNU build id,
// and the executable PT_LOAD's offset, virtual address and file size.
func readelfInfo(t *testing.T, readelf, path string) (id []byte, off, vaddr, filesz uint64) {
	t.Helper()
	for _, line := range strings.Split(readelfText(t, readelf, "-n", path), "\n") {
		if h, ok := strings.CutPrefix(strings.TrimSpace(line), "Build ID: "); ok {
			var err error
			if id, err = hex.DecodeString(h); err != nil {
				t.Fatalf("readelf -n %s: %q", path, line)
			}
		}
	}
	num := func(s string) uint64 {
		v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
		if err != nil {
			t.Fatalf("readelf -lW %s: %q", path, s)
		}
		return v
	}
	for _, line := range strings.Split(readelfText(t, readelf, "-lW", path), "\n") {
		// LOAD Offset VirtAddr PhysAddr FileSiz MemSiz Flg... Align,
		// the flags spaced ("R E").
		f := strings.Fields(line)
		if len(f) >= 8 && f[0] == "LOAD" && strings.Contains(strings.Join(f[6:len(f)-1], ""), "E") {
			return id, num(f[1]), num(f[2]), num(f[4])
		}
	}
	t.Fatalf("readelf -lW %s: no executable LOAD", path)
	return
}

// TestModuleInfo checks ModuleInfo against readelf for the libc and the
// executable of a real process: nothing before the module is loaded, the
// build id and executable segment once it is, the same after the module
// is evicted while the process lives, nothing once it is gone; and a
// frame's Addr turns into the file offset its pc was mapped from.
func TestModuleInfo(t *testing.T) {
	readelf := needTool(t, "readelf")
	pid := startSleep(t)

	r := NewResolver()
	if err := r.LoadProc(pid); err != nil {
		t.Fatal(err)
	}
	if _, _, _, _, ok := r.ModuleInfo("/nonexistent/lib.so"); ok {
		t.Error("a path nothing maps has info")
	}
	if _, start, limit, _, ok := r.ModuleInfo(vdsoPath); !ok || limit <= start {
		t.Errorf("vdso: ok %v, [%#x, %#x)", ok, start, limit)
	}
	var checked []string
	for _, m := range r.Mappings(pid) {
		if !strings.HasPrefix(m.Path, "/") {
			continue
		}
		if _, _, _, _, ok := r.ModuleInfo(m.Path); ok {
			t.Errorf("%s: info before the module is loaded", m.Path)
		}
		pc := m.Start + (m.Limit-m.Start)/2
		fs := r.Lookup(pid, pc, nil)
		f := fs[len(fs)-1]
		id, start, limit, offset, ok := r.ModuleInfo(m.Path)
		if !ok {
			t.Errorf("%s: no info once loaded", m.Path)
			continue
		}
		wid, woff, wvaddr, wsize := readelfInfo(t, readelf, m.Path)
		if !bytes.Equal(id, wid) || start != wvaddr || limit != wvaddr+wsize || offset != woff {
			t.Errorf("%s: build id %x [%#x, %#x) at %#x; readelf: %x [%#x, %#x) at %#x",
				m.Path, id, start, limit, offset, wid, wvaddr, wvaddr+wsize, woff)
		}
		if f.Addr < start || f.Addr >= limit || f.Addr-start+offset != pc-m.Start+m.Offset {
			t.Errorf("%s: frame %+v at %#x: file offset %#x, mapped from %#x",
				m.Path, f, pc, f.Addr-start+offset, pc-m.Start+m.Offset)
		}

		// Evicted, its process alive: the same answer, from memory.
		r.SetBudget(1)
		if s := r.MemStats(); s.Evictions == 0 {
			t.Fatalf("nothing evicted under a budget of one byte: %+v", s)
		}
		id2, start2, limit2, offset2, ok := r.ModuleInfo(m.Path)
		if !ok || !bytes.Equal(id2, id) || start2 != start || limit2 != limit || offset2 != offset {
			t.Errorf("%s: after eviction: ok %v, %x [%#x, %#x) at %#x", m.Path, ok, id2, start2, limit2, offset2)
		}
		r.SetBudget(0)
		checked = append(checked, m.Path)
	}
	if len(checked) < 2 {
		t.Fatalf("checked %q of sleep's mappings, want its executable and libc", checked)
	}
	r.SetBudget(1)
	r.Exit(pid)
	for _, path := range checked {
		if _, _, _, _, ok := r.ModuleInfo(path); ok {
			t.Errorf("%s: info of an evicted module no live process maps", path)
		}
	}
}

// TestGoBuildID: the Go build ID read from a Go binary's note is the one
// `go tool buildid` prints; a C library has none.
func TestGoBuildID(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "buildid", exe).Output()
	if err != nil {
		t.Skipf("go tool buildid: %v", err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, want := goBuildID(f), strings.TrimSpace(string(out)); got != want {
		t.Errorf("Go build ID %q, go tool buildid says %q", got, want)
	}
	for _, p := range []string{"/bin/sh", "/usr/bin/sleep"} {
		if g, err := elf.Open(p); err == nil {
			if id := goBuildID(g); id != "" {
				t.Errorf("%s has a Go build ID %q", p, id)
			}
			g.Close()
		}
	}
}

// TestNamesOnly: a resolver set to names only names the same functions of
// a real process (sleep, and its libc) as a full one, without source lines
// or inlined frames, holding fewer bytes where the full one read DWARF.
func TestNamesOnly(t *testing.T) {
	pid := startSleep(t)

	full, names := NewResolver(), NewResolver()
	names.SetNamesOnly(true)
	for _, r := range []*Resolver{full, names} {
		if err := r.LoadProc(pid); err != nil {
			t.Fatal(err)
		}
	}
	named, lined := 0, 0
	for _, m := range full.Mappings(pid) {
		if !strings.HasPrefix(m.Path, "/") {
			continue
		}
		for pc := m.Start; pc < m.Limit; pc += (m.Limit - m.Start) / 64 {
			ff, nf := full.Lookup(pid, pc, nil), names.Lookup(pid, pc, nil)
			if len(ff) == 0 || len(nf) != 1 {
				t.Fatalf("%s %#x: %d frames, names only %d (want one)", m.Path, pc, len(ff), len(nf))
			}
			outer, got := ff[len(ff)-1], nf[0]
			if got.Line != 0 || got.File != "" || got.Inlined {
				t.Errorf("%s %#x: names only gave a source position: %+v", m.Path, pc, got)
			}
			if outer.Line != 0 {
				lined++
			}
			if !got.Unnamed && got.Func == outer.Func {
				named++
			}
		}
	}
	fs, ns := full.MemStats(), names.MemStats()
	t.Logf("%d pcs named by names only, %d with lines in full; %d bytes in full, %d names only", named, lined, fs.Bytes, ns.Bytes)
	if named == 0 {
		t.Error("names only named nothing")
	}
	if lined > 0 && ns.Bytes >= fs.Bytes {
		t.Errorf("full read lines (%d pcs) in %d bytes, names only holds %d", lined, fs.Bytes, ns.Bytes)
	}
}

// startSleep starts `sleep 1000`, killed when t ends, and returns its PID
// once it sleeps.
func startSleep(t *testing.T) int {
	t.Helper()
	sleepPath, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep")
	}
	cmd := exec.Command(sleepPath, "1000")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitAsleep(t, cmd.Process.Pid)
	return cmd.Process.Pid
}

package symbol

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// jd writes a little-endian jitdump for the resolver's tests.
type jd struct{ b []byte }

func newJD() *jd {
	w := &jd{}
	w.put(uint32(0x4A695444), uint32(1), uint32(40), uint32(62), uint32(0), uint32(1), uint64(1), uint64(0))
	return w
}

func (w *jd) put(vs ...any) {
	for _, v := range vs {
		switch v := v.(type) {
		case uint32:
			w.b = binary.LittleEndian.AppendUint32(w.b, v)
		case uint64:
			w.b = binary.LittleEndian.AppendUint64(w.b, v)
		case string:
			w.b = append(append(w.b, v...), 0)
		case []byte:
			w.b = append(w.b, v...)
		}
	}
}

// rec appends a record: its header, then fields.
func (w *jd) rec(id uint32, ts uint64, fields ...any) {
	body := &jd{}
	body.put(fields...)
	w.put(id, uint32(16+len(body.b)), ts)
	w.b = append(w.b, body.b...)
}

func (w *jd) load(ts, addr, size, index uint64, name string) {
	w.rec(0, ts, uint32(1), uint32(1), addr, addr, size, index, name, make([]byte, size))
}

// leafCFI appends unwinding info for a frameless leaf at addr of size
// bytes (CFA rsp+8, return address at CFA-8), its .eh_frame placed right
// after the code at the next 8-byte boundary.
func (w *jd) leafCFI(ts, addr, size uint64) {
	le := binary.LittleEndian
	var eh []byte
	eh = le.AppendUint32(eh, 20)
	eh = append(eh, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1, 0, 0)
	vaddr := addr + (size+7)&^7
	eh = le.AppendUint32(eh, 16)
	eh = le.AppendUint32(eh, uint32(len(eh)))
	eh = le.AppendUint32(eh, uint32(int32(int64(addr)-int64(vaddr+uint64(len(eh))))))
	eh = le.AppendUint32(eh, uint32(size))
	eh = append(eh, 0, 0, 0, 0)
	eh = le.AppendUint32(eh, 0)
	w.rec(4, ts, uint64(len(eh)), uint64(0), uint64(0), eh)
}

const (
	jdX = 0x7f0000001000
	jdY = 0x7f0000009000
)

// jitDumpProc is a resolver that knows our own process (a real pid, whose
// /proc/PID/root reaches the file) with anonymous code at jdX and jdY and
// the marker of a jitdump holding b; it returns the file's path too.
func jitDumpProc(t *testing.T, b []byte) (*Resolver, int, string) {
	t.Helper()
	return jitDumpClock(t, b, func() uint64 { return 1 << 40 })
}

// jitDumpClock is jitDumpProc with now as the clock.
func jitDumpClock(t *testing.T, b []byte, now func() uint64) (*Resolver, int, string) {
	t.Helper()
	old := monoNow
	monoNow = now
	t.Cleanup(func() { monoNow = old })
	pid := os.Getpid()
	path := filepath.Join(t.TempDir(), "jit-"+strconv.Itoa(pid)+".dump")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	r := NewResolver()
	r.AddMapping(pid, Mapping{Start: jdX, Limit: jdX + 0x1000, Path: "//anon"})
	r.AddMapping(pid, Mapping{Start: jdY, Limit: jdY + 0x1000, Path: "//anon"})
	r.AddMapping(pid, Mapping{Start: 0x7f0000100000, Limit: 0x7f0000101000, Path: path})
	t.Cleanup(func() { r.Exit(pid) })
	return r, pid, path
}

func jitName(r *Resolver, pid int, pc, at uint64) string {
	r.SetTime(at)
	fs := r.Lookup(pid, pc, nil)
	if len(fs) != 1 || fs[0].Module != jitModule {
		return "-"
	}
	return fs[0].Func
}

// TestJITDumpNamesByTime: a pc in anonymous code is named by the code the
// jitdump placed there at the sample's time, with its source line; what
// the runtime appends later is read when samples as new as it come; a
// pc the dump does not name is left to the perf map.
func TestJITDumpNamesByTime(t *testing.T) {
	const ms = uint64(time.Millisecond)
	var now uint64
	w := newJD()
	w.load(100*ms, jdX, 16, 1, "A")
	r, pid, path := jitDumpClock(t, w.b, func() uint64 { return now })
	now = 160 * ms
	if got := jitName(r, pid, jdX+4, 150*ms); got != "A" {
		t.Fatalf("at 150: %s, want A", got)
	}
	// The runtime compiles B over A, with lines, then moves it.
	w2 := &jd{}
	w2.rec(2, 199*ms, uint64(jdX), uint64(2), uint64(jdX), uint32(7), uint32(0), "b.js", uint64(jdX+8), uint32(9), uint32(0), "b.js")
	w2.load(200*ms, jdX, 16, 2, "B")
	w2.rec(1, 300*ms, uint32(1), uint32(1), uint64(jdY), uint64(jdX), uint64(jdY), uint64(16), uint64(2))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(w2.b)
	f.Close()
	// Samples older than the last read are answered from the table as
	// it was: A, at a time nothing else was there.
	now = 161 * ms
	if got := jitName(r, pid, jdX+4, 140*ms); got != "A" {
		t.Errorf("at 140: %s, want A", got)
	}
	// A sample newer than the last read reads the file again.
	now = 320 * ms
	for _, c := range []struct {
		pc, at uint64
		want   string
	}{
		{jdX + 4, 250 * ms, "B"}, {jdX + 4, 150 * ms, "A"}, {jdX + 4, 350 * ms, "-"}, {jdY + 4, 350 * ms, "B"},
		{jdY + 4, 250 * ms, "-"}, {jdX + 4, 50 * ms, "-"}, {jdX + 4, 0, "B"}, {jdX + 0x20, 250 * ms, "-"},
	} {
		if got := jitName(r, pid, c.pc, c.at); got != c.want {
			t.Errorf("Lookup(%#x) at %dms: %s, want %s", c.pc, c.at/ms, got, c.want)
		}
	}
	// A runtime that buffers its writes puts records in the file after
	// their time: a miss reads the file again, at most every
	// perfMapRecheck.
	w3 := &jd{}
	w3.load(290*ms, jdX+0x100, 16, 3, "late")
	f, _ = os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write(w3.b)
	f.Close()
	now += uint64(perfMapRecheck) / 2
	if got := jitName(r, pid, jdX+0x104, 295*ms); got != "-" {
		t.Errorf("read again within %v: %s", perfMapRecheck, got)
	}
	now += uint64(perfMapRecheck)
	if got := jitName(r, pid, jdX+0x104, 295*ms); got != "late" {
		t.Errorf("a late record after %v: %s", perfMapRecheck, got)
	}
	r.SetTime(350 * ms)
	fs := r.Lookup(pid, jdY+9, nil)
	if len(fs) != 1 || fs[0].File != "b.js" || fs[0].Line != 9 || fs[0].Addr != jdY+9 {
		t.Errorf("moved B's frame: %+v", fs)
	}
	if p := r.JITProblems(); len(p) != 0 {
		t.Errorf("problems of a good file: %q", p)
	}
}

// TestJITDumpUnwind: the unwinder steps out of JIT code with the CFI the
// jitdump gives for it; without it, it cannot.
func TestJITDumpUnwind(t *testing.T) {
	for _, withCFI := range []bool{true, false} {
		w := newJD()
		if withCFI {
			w.leafCFI(99, jdX, 16)
		}
		w.load(100, jdX, 16, 1, "A")
		r, pid, _ := jitDumpProc(t, w.b)
		r.SetTime(150)
		const sp = 0x7ffd0000
		var regs Regs
		regs[RegPC], regs[RegSP], regs[RegFP] = jdX+4, sp, 0
		stack := binary.LittleEndian.AppendUint64(nil, 0x401234) // the return address
		stack = append(stack, make([]byte, 64)...)
		pcs, _ := r.UnwindUser(pid, &regs, 1<<RegPC|1<<RegSP, stack, 0, nil)
		if withCFI && (len(pcs) < 2 || pcs[1] != 0x401234) {
			t.Errorf("with CFI: unwound %#x, want the return address 0x401234 second", pcs)
		}
		if !withCFI && len(pcs) > 1 && pcs[1] == 0x401234 {
			t.Errorf("without CFI: unwound %#x", pcs)
		}
	}
}

// TestJITDumpProblems: a damaged record stops decoding with one line for
// the summary, and what came before is still named; a file cut inside a
// record counts as truncated once its process is gone, not before.
func TestJITDumpProblems(t *testing.T) {
	w := newJD()
	w.load(100, jdX, 16, 1, "A")
	off := len(w.b)
	w.put(uint32(0), uint32(8), uint64(200)) // a record of 8 bytes
	w.load(300, jdY, 16, 2, "never")
	r, pid, path := jitDumpProc(t, w.b)
	if got := jitName(r, pid, jdX, 150); got != "A" {
		t.Errorf("A before the damage: %s", got)
	}
	if got := jitName(r, pid, jdY, 350); got == "never" {
		t.Error("a record after the damage was used")
	}
	p := r.JITProblems()
	if len(p) != 1 || !strings.Contains(p[0], path) || !strings.Contains(p[0], "offset "+strconv.Itoa(off)) || !strings.Contains(p[0], "1 functions") || strings.Contains(p[0], "\n") {
		t.Errorf("problems %q", p)
	}
	r.Exit(pid)
	if q := r.JITProblems(); len(q) != 1 || q[0] != p[0] {
		t.Errorf("after exit: %q, want %q", q, p)
	}

	w = newJD()
	w.load(100, jdX, 16, 1, "A")
	cut := len(w.b)
	w.load(200, jdY, 16, 2, "B")
	r, pid, path = jitDumpProc(t, w.b[:cut+20])
	if got := jitName(r, pid, jdX, 150); got != "A" {
		t.Errorf("A of the truncated file: %s", got)
	}
	if p := r.JITProblems(); len(p) != 0 {
		t.Errorf("a live process's file being written is no problem: %q", p)
	}
	r.Exit(pid)
	p = r.JITProblems()
	if len(p) != 1 || !strings.Contains(p[0], path+": truncated at offset "+strconv.Itoa(cut)) {
		t.Errorf("truncated file after exit: %q", p)
	}
}

// TestJITDumpMarker: only jit-<digits>.dump marks a jitdump, and a marker
// that is a symlink is not followed.
func TestJITDumpMarker(t *testing.T) {
	for path, want := range map[string]bool{
		"/tmp/jit-123.dump": true, "/x/jit-1.dump (deleted)": true, "jit-42.dump": true,
		"/tmp/jit-.dump": false, "/tmp/jit-12a.dump": false, "/tmp/perf-1.map": false, "/tmp/xjit-1.dump": false,
		"/tmp/jit-1.dumps": false, "/tmp/jit-12345678901.dump": false,
	} {
		if isJITDump(path) != want {
			t.Errorf("isJITDump(%q) = %v", path, !want)
		}
	}
	w := newJD()
	w.load(100, jdX, 16, 1, "A")
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	os.WriteFile(real, w.b, 0o644)
	pid := os.Getpid()
	link := filepath.Join(dir, "jit-"+strconv.Itoa(pid)+".dump")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	r := NewResolver()
	r.AddMapping(pid, Mapping{Start: jdX, Limit: jdX + 0x1000, Path: "//anon"})
	r.AddMapping(pid, Mapping{Start: 0x7f0000100000, Limit: 0x7f0000101000, Path: link})
	if got := jitName(r, pid, jdX, 150); got == "A" {
		t.Error("a symlinked marker was followed")
	}
	p := r.JITProblems()
	if len(p) != 1 || !strings.Contains(p[0], "cannot read it") {
		t.Errorf("problems %q", p)
	}
}

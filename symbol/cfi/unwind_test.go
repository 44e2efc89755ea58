package cfi

import (
	"bufio"
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// stackSnapshot is what testdata/stack.c reports.
type stackSnapshot struct {
	regs     Regs
	sp       uint64
	stack    []byte
	libcBase uint64
	libcPath string
	bt       []uint64 // backtrace(): bt[0] is in the leaf, then return addresses
}

func (s *stackSnapshot) mem(addr uint64) (uint64, bool) {
	off := addr - s.sp
	if addr < s.sp || off > uint64(len(s.stack)) || uint64(len(s.stack))-off < 8 {
		return 0, false
	}
	return binary.LittleEndian.Uint64(s.stack[off:]), true
}

func runStackProgram(t *testing.T, bin string) *stackSnapshot {
	t.Helper()
	out := filepath.Join(t.TempDir(), "stack.bin")
	b, err := exec.Command(bin, out).Output()
	if err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	s := &stackSnapshot{}
	if s.stack, err = os.ReadFile(out); err != nil {
		t.Fatal(err)
	}
	hex := func(f string) uint64 {
		v, err := strconv.ParseUint(f, 16, 64)
		if err != nil {
			t.Fatalf("%q in output:\n%s", f, b)
		}
		return v
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		switch {
		case len(f) == 9 && f[0] == "regs":
			// rip rsp rbp rbx r12 r13 r14 r15
			for i, reg := range []int{RegRA, RegRSP, RegRBP, RegRBX, RegR12, RegR13, RegR14, RegR15} {
				s.regs.Set(reg, hex(f[i+1]))
			}
			s.sp = s.regs.R[RegRSP]
		case len(f) == 3 && f[0] == "libc":
			s.libcBase, s.libcPath = hex(f[1]), f[2]
		case len(f) > 1 && f[0] == "bt":
			for _, a := range f[1:] {
				s.bt = append(s.bt, hex(a))
			}
		}
	}
	if s.sp == 0 || len(s.bt) < 10 || s.libcPath == "-" {
		t.Fatalf("incomplete output:\n%s", b)
	}
	return s
}

func loadFile(t testing.TB, path string) *Table {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tab, err := Load(f)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestStepRealStack unwinds a stack copied by a running -O2 program without
// frame pointers, through a stack-realigning function, one whose CFA is an
// expression (DRAP), main and libc's start code, and expects exactly the
// return addresses backtrace() printed.
func TestStepRealStack(t *testing.T) {
	bin := compile(t, t.TempDir(), "stack.c", "stack", "-O2", "-fomit-frame-pointer", "-no-pie")
	s := runStackProgram(t, bin)
	exe := loadFile(t, bin)
	lc := loadFile(t, s.libcPath)

	regs := s.regs
	var got []uint64
	var kinds []string
	signal := false
	for i := 0; i < 64; i++ {
		pc := regs.R[RegRA]
		// Only the leaf's pc is exact; the others are return addresses.
		lookup := pc
		if i > 0 && !signal {
			lookup--
		}
		tab := exe
		if pc >= s.libcBase {
			tab, lookup = lc, lookup-s.libcBase
		}
		r, ok := tab.Rule(lookup)
		if !ok {
			t.Fatalf("frame %d: no rule for pc %#x", i, pc)
		}
		kinds = append(kinds, r.CFA().Kind().String()+":"+r.String())
		signal = r.Signal()
		if !r.Step(&regs, s.mem) {
			// The outermost frame, _start, marks its return address undefined.
			if r.Reg(RegRA).Kind() != Undefined {
				t.Errorf("frame %d (pc %#x, rule %v): Step failed before the outermost frame", i, pc, r)
			}
			break
		}
		got = append(got, regs.R[RegRA])
	}
	want := s.bt[1:]
	if !slices.Equal(got, want) {
		t.Errorf("unwound return addresses\n got %x\nwant %x\nrules:\n%s", got, want, strings.Join(kinds, "\n"))
	}
	var expr, rbp bool
	for _, k := range kinds {
		expr = expr || strings.HasPrefix(k, "val-expr:")
		rbp = rbp || strings.Contains(k, "cfa=rbp+")
	}
	if !expr || !rbp {
		t.Errorf("the chain should include an expression CFA (%v) and an RBP-based one (%v):\n%s", expr, rbp, strings.Join(kinds, "\n"))
	}

	// The frame pointer chain of the same stack is no substitute: without
	// -fno-omit-frame-pointer it goes wrong within a frame or two.
	fp := fpWalk(s)
	if slices.Equal(fp, want) {
		t.Errorf("the frame pointer chain also finds %x: the test does not need CFI", fp)
	}
	t.Logf("unwound %d frames through %s and %s; frame pointer walk: %x", len(got), filepath.Base(bin), filepath.Base(s.libcPath), fp)
}

// fpWalk follows saved RBPs from the leaf, the way an unwinder that trusts
// frame pointers would.
func fpWalk(s *stackSnapshot) []uint64 {
	var out []uint64
	bp := s.regs.R[RegRBP]
	for i := 0; i < 16; i++ {
		ra, ok1 := s.mem(bp + 8)
		next, ok2 := s.mem(bp)
		if !ok1 || !ok2 {
			break
		}
		out = append(out, ra)
		if next <= bp {
			break
		}
		bp = next
	}
	return out
}

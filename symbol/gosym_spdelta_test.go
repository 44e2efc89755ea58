package symbol

import (
	"bufio"
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// objdumpInsn is one instruction as go tool objdump prints it.
type objdumpInsn struct {
	addr uint64
	asm  string
}

// objdump disassembles the functions of bin matching re.
func objdump(t *testing.T, bin, re string) map[string][]objdumpInsn {
	t.Helper()
	out, err := exec.Command(goTool(t), "tool", "objdump", "-s", re, bin).Output()
	if err != nil {
		t.Fatalf("go tool objdump: %v", err)
	}
	funcs := map[string][]objdumpInsn{}
	var cur string
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "TEXT "); ok {
			cur, _, _ = strings.Cut(name, "(SB)")
			continue
		}
		// "  file:line\t\t0xaddr\t\thex\t\tasm\t\t"
		var fields []string
		for f := range strings.SplitSeq(line, "\t") {
			if f = strings.TrimSpace(f); f != "" {
				fields = append(fields, f)
			}
		}
		if cur == "" || len(fields) < 4 {
			continue
		}
		addr, err := strconv.ParseUint(fields[1], 0, 64)
		if err != nil {
			t.Fatalf("objdump line %q", line)
		}
		funcs[cur] = append(funcs[cur], objdumpInsn{addr, fields[3]})
	}
	return funcs
}

// TestGoSPDelta checks spDelta against the amd64 prologue and epilogue
// go tool objdump shows for functions of the inline test program:
// 0 at the entry, 8 once BP is pushed, frame+8 once SUBQ $frame, SP has
// run and until ADDQ $frame, SP has, 8 again before POPQ BP, 0 at each
// RET and at the call to morestack (which runs before the frame exists).
// The stripped build must give the same deltas.
func TestGoSPDelta(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("checks amd64 prologues")
	}
	dir, _ := buildInlineTargets(t, "")
	bin := filepath.Join(dir, "default")
	g := openGoTable(t, bin)
	stripped := openGoTable(t, filepath.Join(dir, "stripped"))
	funcs := objdump(t, bin, `^main\.(outer|record|main)$`)
	if len(funcs) != 3 {
		t.Fatalf("objdump found %d functions", len(funcs))
	}
	for name, insns := range funcs {
		entry, ok := g.lookupFunc(name)
		if !ok || entry != insns[0].addr {
			t.Fatalf("%s: entry %#x, %v; objdump has %#x", name, entry, ok, insns[0].addr)
		}
		// want holds the checks: pc -> delta.
		want := map[uint64]int64{entry: 0}
		frame := int64(-1)
		for i, in := range insns {
			var next uint64
			if i+1 < len(insns) {
				next = insns[i+1].addr
			}
			switch {
			case in.asm == "PUSHQ BP":
				want[in.addr], want[next] = 0, 8
			case strings.HasPrefix(in.asm, "SUBQ $") && strings.HasSuffix(in.asm, ", SP") && frame < 0:
				n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(in.asm, "SUBQ $"), ", SP"), 0, 64)
				if err != nil {
					t.Fatalf("%s: %q", name, in.asm)
				}
				frame = n
				want[in.addr] = 8
				// The body, to the first epilogue.
				for _, b := range insns[i+1:] {
					want[b.addr] = frame + 8
					if b.asm == "ADDQ $"+"0x"+strconv.FormatInt(frame, 16)+", SP" {
						break
					}
				}
			case strings.HasPrefix(in.asm, "ADDQ $") && strings.HasSuffix(in.asm, ", SP") && frame >= 0:
				want[in.addr], want[next] = frame+8, 8
			case in.asm == "POPQ BP":
				want[in.addr], want[next] = 8, 0
			case in.asm == "RET", strings.HasPrefix(in.asm, "CALL runtime.morestack"):
				want[in.addr] = 0
			}
		}
		if frame < 0 {
			t.Fatalf("%s: no SUBQ $n, SP in\n%v", name, insns)
		}
		delete(want, 0)
		for pc, w := range want {
			if got, ok := g.spDelta(pc); !ok || got != w {
				t.Errorf("%s: spDelta(%#x) = %d, %v; want %d", name, pc, got, ok, w)
			}
		}
		// Every pc, not just instruction starts, has a delta, and the
		// stripped build's table agrees (its code is the same).
		if e, _ := stripped.lookupFunc(name); e != entry {
			t.Fatalf("%s: stripped entry %#x, not %#x", name, e, entry)
		}
		last := insns[len(insns)-1].addr
		for pc := entry; pc <= last; pc++ {
			d, ok := g.spDelta(pc)
			s, sok := stripped.spDelta(pc)
			if !ok || !sok || d != s || d < 0 || d > frame+8 {
				t.Errorf("%s: spDelta(%#x) = %d, %v; stripped %d, %v", name, pc, d, ok, s, sok)
			}
		}
		t.Logf("%s: frame %#x, %d checks", name, frame, len(want))
	}

	// Unwinding stops at the functions that start stacks.
	for name, want := range map[string]bool{"runtime.goexit": true, "runtime.mstart": true, "runtime.rt0_go": true, "main.outer": false, "runtime.main": false} {
		entry, ok := g.lookupFunc(name)
		if !ok {
			t.Fatalf("%s not found", name)
		}
		if got := g.topFrame(entry); got != want {
			t.Errorf("topFrame(%s) = %v", name, got)
		}
	}
}

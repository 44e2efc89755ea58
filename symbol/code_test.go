package symbol

import (
	"bytes"
	"os"
	"testing"
)

func TestCallBefore(t *testing.T) {
	for _, c := range []struct {
		name string
		code []byte
		want bool
	}{
		{"call rel32", []byte{0x90, 0xe8, 1, 2, 3, 4}, true},
		{"call *%rax", []byte{0x90, 0xff, 0xd0}, true},
		{"call *%r11 (REX.B)", []byte{0x41, 0xff, 0xd3}, true},
		{"call *(%rax)", []byte{0xff, 0x10}, true},
		{"call *0x8(%rbx)", []byte{0xff, 0x53, 0x08}, true},
		{"call *0x100(%rbx)", []byte{0xff, 0x93, 0, 1, 0, 0}, true},
		{"call *(%rax,%rbx,8)", []byte{0xff, 0x14, 0xd8}, true},
		{"call *0x10(%rsp)", []byte{0xff, 0x54, 0x24, 0x10}, true},
		{"call *0x1000(%rax,%rcx,4)", []byte{0xff, 0x94, 0x88, 0, 0x10, 0, 0}, true},
		{"call *0x1000(,%rcx,8)", []byte{0xff, 0x14, 0xcd, 0, 0x10, 0, 0}, true},
		{"call *0x0(%rip) (PLT-less)", []byte{0xff, 0x15, 1, 2, 3, 4}, true},
		{"notrack call *%rdx", []byte{0x3e, 0xff, 0xd2}, true},
		{"call *%r12 via SIB", []byte{0x41, 0xff, 0x14, 0x24}, true},
		{"jmp *%rax (ff /4)", []byte{0xff, 0xe0}, false},
		{"push (ff /6)", []byte{0xff, 0x30}, false},
		{"ret", []byte{0xc3}, false},
		{"nops", []byte{0x90, 0x90, 0x90, 0x90, 0x90, 0x90}, false},
		{"ModRM wants a disp32 it lacks", []byte{0x90, 0x90, 0xff, 0x15, 1}, false},
		{"ModRM wants a SIB it lacks", []byte{0xff, 0x14}, false},
		{"empty", nil, false},
	} {
		if got := callBefore(c.code); got != c.want {
			t.Errorf("%s: % x: %v, want %v", c.name, c.code, got, c.want)
		}
	}
}

func TestFPPrologue(t *testing.T) {
	for _, c := range []struct {
		code []byte
		push int
		fp   bool
	}{
		{[]byte{0x55, 0x48, 0x89, 0xe5, 0x90}, 0, true},
		{[]byte{0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5}, 4, true},
		{[]byte{0x55, 0x48, 0x8b, 0xec}, 0, true},
		{[]byte{0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0xec, 0x08}, 4, false},
		{[]byte{0x55, 0x53, 0x48, 0x83}, 0, false}, // push %rbp as a saved register
		{[]byte{0x48, 0x8d, 0x05}, 0, false},
		{nil, 0, false},
	} {
		push, fp := fpPrologue(c.code)
		if push != c.push || fp != c.fp {
			t.Errorf("% x: push %d fp %v, want %d %v", c.code, push, fp, c.push, c.fp)
		}
	}
}

// TestReadCode reads this process's code through the resolver and finds
// the bytes the file has; anonymous memory has no code to read.
func TestReadCode(t *testing.T) {
	pid := os.Getpid()
	r := NewResolver()
	if err := r.LoadProc(pid); err != nil {
		t.Skip(err)
	}
	p := r.procs[pid]
	exe, err := os.ReadFile("/proc/self/exe")
	if err != nil {
		t.Skip(err)
	}
	read := 0
	for i := range p.maps {
		m := &p.maps[i]
		if m.Path != "/proc/self/exe" && !sameFile(m.Path, "/proc/self/exe") {
			continue
		}
		// Across a chunk boundary, and at the end of the mapping.
		for _, at := range []uint64{m.Start + codeChunk - 3, m.Limit - 16} {
			buf := make([]byte, 16)
			if !r.readCode(pid, m, at, buf) {
				t.Fatalf("cannot read %#x of %s", at, m.Path)
			}
			off := at - m.Start + m.Offset
			if want := exe[off : off+16]; !bytes.Equal(buf, want) {
				t.Errorf("%#x: % x, want % x", at, buf, want)
			}
			read++
		}
		if r.readCode(pid, m, m.Limit-8, make([]byte, 16)) {
			t.Errorf("read past the end of the mapping")
		}
	}
	if read == 0 {
		t.Skip("own executable not among the mappings")
	}
	anon := &mapping{Mapping: Mapping{Start: 0x1000, Limit: 0x2000}}
	if r.readCode(pid, anon, 0x1000, make([]byte, 4)) {
		t.Errorf("read code of anonymous memory")
	}
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// FuzzCallBefore: any bytes before a return address are decided without
// panicking, only the last maxCallLen of them count, and every encoding of
// an indirect call (FF /2 with any ModRM, SIB and displacement, with or
// without prefixes) is recognised after any bytes.
func FuzzCallBefore(f *testing.F) {
	f.Add([]byte{0xe8, 1, 2, 3, 4}, byte(0xd0), byte(0x24), false)
	f.Add([]byte{0x90, 0xff}, byte(0x14), byte(0x25), true)
	f.Add([]byte{}, byte(0x15), byte(0), false)
	f.Fuzz(func(t *testing.T, code []byte, modrm, sib byte, rex bool) {
		got := callBefore(code)
		if n := len(code); n > maxCallLen && callBefore(code[n-maxCallLen:]) != got {
			t.Fatalf("% x: depends on more than the last %d bytes", code, maxCallLen)
		}
		modrm = modrm&^0x38 | 2<<3 // reg field 2: call
		insn := []byte{0xff, modrm}
		mod, rm := modrm>>6, modrm&7
		if mod != 3 && rm == 4 {
			insn = append(insn, sib)
		}
		switch {
		case mod == 0 && rm == 5, mod == 0 && rm == 4 && sib&7 == 5, mod == 2:
			insn = append(insn, 1, 2, 3, 4)
		case mod == 1:
			insn = append(insn, 5)
		}
		if rex {
			insn = append([]byte{0x48}, insn...)
		}
		all := append(append([]byte(nil), code...), insn...)
		if !callBefore(all) {
			t.Fatalf("% x: call % x not recognised", all, insn)
		}
	})
}

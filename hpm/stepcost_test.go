package hpm

import (
	"os"
	"reflect"
	"runtime"
	"testing"
)

func TestEmulatedX86(t *testing.T) {
	for _, c := range []struct {
		name string
		code []byte
		want bool
	}{
		{"push %rbp", []byte{0x55, 0x48, 0x89, 0xe5}, true},
		{"push %r15", []byte{0x41, 0x57}, true},
		{"rex.b but not a push (mov %r8d,...)", []byte{0x41, 0x89, 0xc0}, false},
		{"endbr64", []byte{0xf3, 0x0f, 0x1e, 0xfa, 0x55}, false},
		{"test %rdi,%rdi (Debian python3's PyUnicode_New)", []byte{0x48, 0x85, 0xff}, false},
		{"sub $8,%rsp", []byte{0x48, 0x83, 0xec, 0x08}, false},
		{"Go stack check: cmp 0x10(%r14),%rsp", []byte{0x49, 0x3b, 0x66, 0x10}, false},
		{"nop", []byte{0x90}, true},
		{"nopl (multi-byte)", []byte{0x0f, 0x1f, 0x00}, false},
		{"jmp rel32", []byte{0xe9, 0, 0, 0, 0}, true},
		{"call rel32", []byte{0xe8, 0, 0, 0, 0}, true},
		{"je rel32", []byte{0x0f, 0x84, 0, 0, 0, 0}, true},
		{"jne rel8", []byte{0x75, 0x10}, true},
		{"empty", nil, false},
		{"lone rex.b", []byte{0x41}, false},
	} {
		if got := emulatedX86(c.code); got != c.want {
			t.Errorf("%s: emulated %v, want %v", c.name, got, c.want)
		}
	}
}

// On this test binary's own code: a Go function's entry is its stack check
// (stepped); past it, the PUSHQ BP (emulated).
func TestEmulatedOnGoCode(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the classifier knows x86-64 only")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	name := runtime.FuncForPC(reflect.ValueOf(framedTarget).Pointer()).Name()
	ts, err := ResolveTargets(exe, []string{name})
	if err != nil {
		t.Skipf("no symbol table to resolve %s: %v", name, err)
	}
	if emu, known := ts[0].Emulated(); !known || emu {
		t.Errorf("%s's entry (a stack check): emulated %v known %v, want stepped", name, emu, known)
	}
	moved, d := ts[0].AfterStackCheck()
	if d == 0 {
		t.Fatalf("%s: no stack check found", name)
	}
	if emu, known := moved.Emulated(); !known || !emu {
		t.Errorf("%s past its stack check (PUSHQ BP): emulated %v known %v, want emulated", name, emu, known)
	}
}

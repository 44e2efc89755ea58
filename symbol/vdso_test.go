package symbol

import (
	"bytes"
	"debug/elf"
	"os"
	"strings"
	"testing"
)

// vdsoFunc finds, with debug/elf alone, the address of clock_gettime in the
// vdso image of pid mapped at m: the expected pc and name.
func vdsoFunc(t *testing.T, pid int, m Mapping) (pc uint64, names []string) {
	t.Helper()
	img := readMem(pid, m.Start, m.Limit-m.Start)
	if img == nil {
		t.Skip("cannot read vdso image")
	}
	f, err := elf.NewFile(bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	syms, err := f.DynamicSymbols()
	if err != nil {
		t.Fatal(err)
	}
	var value uint64
	for _, s := range syms {
		if s.Name == "__vdso_clock_gettime" {
			value = s.Value
		}
	}
	for _, s := range syms {
		if s.Value == value && elf.ST_TYPE(s.Info) == elf.STT_FUNC {
			names = append(names, s.Name)
		}
	}
	if value == 0 {
		t.Skip("vdso without __vdso_clock_gettime")
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && value >= p.Vaddr && value < p.Vaddr+p.Filesz {
			return m.Start + value - p.Vaddr + p.Off, names
		}
	}
	t.Fatal("clock_gettime outside the vdso's PT_LOAD")
	return 0, nil
}

func vdsoMapping(t *testing.T, r *Resolver, pid int) Mapping {
	t.Helper()
	for _, m := range r.Mappings(pid) {
		if m.Path == "[vdso]" {
			return m
		}
	}
	t.Skip("no [vdso] mapping")
	return Mapping{}
}

func TestVDSO(t *testing.T) {
	check := func(t *testing.T, r *Resolver, pid int) {
		m := vdsoMapping(t, r, pid)
		pc, names := vdsoFunc(t, pid, m)
		f := lookup1(r, pid, pc+1)
		if f.Module != "[vdso]" || !strings.Contains(f.Func, "clock_gettime") {
			t.Fatalf("Lookup(vdso clock_gettime+1) = %+v (aliases %v)", f, names)
		}
		if f.Func != "__vdso_clock_gettime" {
			// Global beats weak: clock_gettime is a weak alias.
			t.Errorf("Func = %s, want __vdso_clock_gettime", f.Func)
		}
	}
	t.Run("self", func(t *testing.T) {
		r := NewResolver()
		if err := r.LoadProc(os.Getpid()); err != nil {
			t.Fatal(err)
		}
		check(t, r, os.Getpid())
	})
	t.Run("child", func(t *testing.T) {
		prog, _ := buildC(t, cBuilds[0])
		tg := startTarget(t, prog)
		r := NewResolver()
		if err := r.LoadProc(tg.pid); err != nil {
			t.Fatal(err)
		}
		check(t, r, tg.pid)
	})
	t.Run("fallback-to-self", func(t *testing.T) {
		// The target is gone (pid 0 has no /proc entry): the image comes
		// from our own vdso.
		self := NewResolver()
		if err := self.LoadProc(os.Getpid()); err != nil {
			t.Fatal(err)
		}
		m := vdsoMapping(t, self, os.Getpid())
		pc, _ := vdsoFunc(t, os.Getpid(), m)
		r := NewResolver()
		r.AddMapping(0, m)
		if f := lookup1(r, 0, pc); f.Func != "__vdso_clock_gettime" {
			t.Errorf("Lookup = %+v", f)
		}
	})
}

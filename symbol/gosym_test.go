package symbol

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// goTool finds the go command that runs this test: go test puts its GOROOT
// in the environment; else the one on PATH.
func goTool(t *testing.T) string {
	t.Helper()
	if root := os.Getenv("GOROOT"); root != "" {
		if p := filepath.Join(root, "bin", "go"); fileExists(p) {
			return p
		}
	}
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// TestGoBinaries builds a Go program several ways and checks that its
// goMainDir is a directory holding testdata/src/gomain.go.txt as the
// main package of a module, for go build.
func goMainDir(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "src", "gomain.go.txt"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "main.go"), src, 0o644)
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/target\n\ngo 1.21\n"), 0o644)
	return dir
}

// function resolves to name and file:line through the pclntab, including
// with the symbol table stripped and as a PIE. The external-linking builds
// put C startup code ahead of Go's text, so runtime.text is not the start
// of .text; stripped, the pclntab header's textStart must be used.
func TestGoBinaries(t *testing.T) {
	gobin, dir := goTool(t), goMainDir(t)

	builds := []struct {
		name  string
		cgo   bool
		flags []string
	}{
		{"default", false, nil},
		{"stripped", false, []string{"-ldflags=-s -w"}},
		{"pie", false, []string{"-buildmode=pie"}},
		{"pie-stripped", false, []string{"-buildmode=pie", "-ldflags=-s -w"}},
		{"external", true, []string{"-ldflags=-linkmode=external"}},
		{"external-stripped", true, []string{"-ldflags=-linkmode=external -s -w"}},
		{"external-pie-stripped", true, []string{"-buildmode=pie", "-ldflags=-linkmode=external -s -w"}},
	}
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			env := []string{"CGO_ENABLED=0", "GOFLAGS=-mod=mod"}
			if b.cgo {
				needTool(t, "gcc")
				env[0] = "CGO_ENABLED=1"
			}
			args := append([]string{"build", "-o", b.name}, b.flags...)
			run(t, dir, env, gobin, args...)
			bin := realPath(t, filepath.Join(dir, b.name))
			tg := startTarget(t, bin)
			r := NewResolver()
			if err := r.LoadProc(tg.pid); err != nil {
				t.Fatal(err)
			}
			pc := tg.addrs["main.work"]
			for _, d := range []uint64{0, 5} {
				f := lookup1(r, tg.pid, pc+d)
				want := int(tg.addrs[fmt.Sprintf("line+%d", d)])
				if f.Func != "main.work" || f.Module != bin || f.File != filepath.Join(dir, "main.go") || f.Line != want {
					t.Errorf("Lookup(main.work+%d) = %+v, want line %d", d, f, want)
				}
			}
			// The uprobe offset of main.work is where the running process
			// has it mapped from.
			for _, m := range r.Mappings(tg.pid) {
				if m.Start <= pc && pc < m.Limit {
					want := pc - m.Start + m.Offset
					if got, err := FuncOffset(bin, "main.work"); err != nil || got != want {
						t.Errorf("FuncOffset(main.work) = %#x, %v; want %#x", got, err, want)
					}
				}
			}
			if syms, _ := elfOpenSymbols(bin); len(syms) > 0 {
				if want := elfSymbol(t, bin, "main.work"); lookup1(r, tg.pid, pc).Addr != want {
					t.Errorf("Addr %#x, want %#x", lookup1(r, tg.pid, pc).Addr, want)
				}
			} else if !strings.Contains(b.name, "stripped") {
				t.Error("no symbol table in an unstripped build")
			}
		})
	}
}

//go:noinline
func selfTestFunc(n int) int {
	if n < 2 {
		return n
	}
	return selfTestFunc(n-1) + selfTestFunc(n-2)
}

// TestSelf resolves pcs of this test binary and compares with what the Go
// runtime itself says about them.
func TestSelf(t *testing.T) {
	r := NewResolver()
	pid := os.Getpid()
	if err := r.LoadProc(pid); err != nil {
		t.Fatal(err)
	}
	for _, fn := range []any{selfTestFunc, TestSelf, NewResolver, strings.Index, runtime.GC} {
		entry := uint64(reflect.ValueOf(fn).Pointer())
		for _, pc := range []uint64{entry, entry + 3} {
			rf := runtime.FuncForPC(uintptr(pc))
			file, line := rf.FileLine(uintptr(pc))
			f := lookup1(r, pid, pc)
			if f.Func != rf.Name() || f.File != file || f.Line != line {
				t.Errorf("Lookup(%#x) = %s %s:%d, runtime says %s %s:%d", pc, f.Func, f.File, f.Line, rf.Name(), file, line)
			}
		}
	}
}

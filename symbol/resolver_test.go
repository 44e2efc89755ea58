package symbol

import (
	"reflect"
	"testing"
)

func mp(start, limit, off uint64, path string) Mapping {
	return Mapping{Start: start, Limit: limit, Offset: off, Path: path}
}

func TestAddMappingOverlap(t *testing.T) {
	base := []Mapping{
		mp(0x1000, 0x5000, 0x0, "/a"),
		mp(0x6000, 0x8000, 0x2000, "/b"),
		mp(0x9000, 0xa000, 0x0, "/c"),
	}
	cases := []struct {
		name string
		add  Mapping
		want []Mapping
	}{
		{"disjoint", mp(0x5000, 0x6000, 0, "/n"), []Mapping{
			mp(0x1000, 0x5000, 0x0, "/a"), mp(0x5000, 0x6000, 0, "/n"), mp(0x6000, 0x8000, 0x2000, "/b"), mp(0x9000, 0xa000, 0x0, "/c"),
		}},
		{"split-middle", mp(0x2000, 0x3000, 0x100000, "/n"), []Mapping{
			mp(0x1000, 0x2000, 0x0, "/a"), mp(0x2000, 0x3000, 0x100000, "/n"), mp(0x3000, 0x5000, 0x2000, "/a"), mp(0x6000, 0x8000, 0x2000, "/b"), mp(0x9000, 0xa000, 0x0, "/c"),
		}},
		{"trim-tail-and-head", mp(0x4000, 0x7000, 0, "/n"), []Mapping{
			mp(0x1000, 0x4000, 0x0, "/a"), mp(0x4000, 0x7000, 0, "/n"), mp(0x7000, 0x8000, 0x3000, "/b"), mp(0x9000, 0xa000, 0x0, "/c"),
		}},
		{"cover-several", mp(0x0, 0x9800, 0, "/n"), []Mapping{
			mp(0x0, 0x9800, 0, "/n"), mp(0x9800, 0xa000, 0x800, "/c"),
		}},
		{"exact-replace", mp(0x6000, 0x8000, 0x7000, "/n"), []Mapping{
			mp(0x1000, 0x5000, 0x0, "/a"), mp(0x6000, 0x8000, 0x7000, "/n"), mp(0x9000, 0xa000, 0x0, "/c"),
		}},
		{"empty-ignored", mp(0x3000, 0x3000, 0, "/n"), base},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewResolver()
			for _, m := range base {
				r.AddMapping(7, m)
			}
			r.AddMapping(7, c.add)
			if got := r.Mappings(7); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %x\nwant %x", got, c.want)
			}
		})
	}
}

func TestForkExecExit(t *testing.T) {
	r := NewResolver()
	r.AddMapping(1, mp(0x1000, 0x2000, 0, "/bin/parent"))
	r.Fork(1, 2)
	r.AddMapping(2, mp(0x3000, 0x4000, 0, "/lib/child-only"))
	if got := len(r.Mappings(1)); got != 1 {
		t.Errorf("child's mmap leaked into parent: %d mappings", got)
	}
	if f := lookup1(r, 2, 0x1800); f.Module != "/bin/parent" {
		t.Errorf("child does not see inherited mapping: %+v", f)
	}
	r.Exec(2)
	if f := lookup1(r, 2, 0x1800); f != (Frame{Addr: 0x1800}) {
		t.Errorf("mapping survived exec: %+v", f)
	}
	r.AddMapping(2, mp(0x1000, 0x2000, 0, "/bin/new"))
	if f := lookup1(r, 2, 0x1800); f.Module != "/bin/new" {
		t.Errorf("after exec+mmap: %+v", f)
	}
	if f := lookup1(r, 1, 0x1800); f.Module != "/bin/parent" {
		t.Errorf("parent changed by child's exec: %+v", f)
	}
	r.Exit(2)
	if r.Mappings(2) != nil {
		t.Error("exited pid still has mappings")
	}
	r.Fork(99, 3) // unknown parent: known, empty child
	if f := lookup1(r, 3, 0x1800); f != (Frame{Addr: 0x1800}) {
		t.Errorf("child of unknown parent: %+v", f)
	}
	r.Fork(1, 1) // a thread of pid 1 is not a new address space
	if len(r.Mappings(1)) != 1 {
		t.Error("Fork(pid, pid) changed pid")
	}
}

// TestLookupUnreadable: mappings whose file cannot be opened have no
// symbols but are named by module and file offset; pseudo and anonymous
// mappings keep the pc, anonymous ones (a device mapped as anonymous
// memory too) marked as JIT code a perf map may name later.
func TestLookupUnreadable(t *testing.T) {
	r := NewResolver()
	r.AddMapping(5, mp(0x10000, 0x20000, 0x3000, "/nonexistent/lib.so"))
	r.AddMapping(5, mp(0x30000, 0x31000, 0, ""))
	r.AddMapping(5, mp(0x40000, 0x41000, 0, "[vsyscall]"))
	r.AddMapping(5, mp(0x50000, 0x51000, 0, "/dev/zero (deleted)"))
	for _, c := range []struct {
		pc   uint64
		want Frame
	}{
		{0x10010, Frame{Func: "[lib.so+0x3010]", Module: "/nonexistent/lib.so", Addr: 0x3010, Unnamed: true}},
		{0x50010, Frame{Module: "/dev/zero (deleted)", Addr: 0x50010, JIT: true}},
		{0x30010, Frame{Module: "", Addr: 0x30010, JIT: true}},
		{0x40010, Frame{Module: "[vsyscall]", Addr: 0x40010}},
		{0x20000, Frame{Addr: 0x20000}},
	} {
		if got := lookup1(r, 5, c.pc); got != c.want {
			t.Errorf("Lookup(%#x) = %+v, want %+v", c.pc, got, c.want)
		}
	}
	if fs := r.Lookup(42, 0x10, []Frame{{Func: "keep"}}); len(fs) != 2 || fs[0].Func != "keep" || fs[1] != (Frame{Addr: 0x10}) {
		t.Errorf("unknown pid: %+v", fs)
	}
}

func TestAddMappingCopiesBuildID(t *testing.T) {
	r := NewResolver()
	id := []byte{1, 2, 3}
	r.AddMapping(1, Mapping{Start: 1, Limit: 2, Path: "/x", BuildID: id})
	id[0] = 9
	if got := r.Mappings(1)[0].BuildID; got[0] != 1 {
		t.Error("AddMapping kept the caller's buffer")
	}
}

package symbol

import (
	"fmt"
	"reflect"
	"testing"
)

func TestParseMapsLine(t *testing.T) {
	cases := []struct {
		line     string
		want     Mapping
		exec, ok bool
	}{
		{"55d4c7a5e000-55d4c7a60000 r-xp 00002000 08:01 1234                       /usr/bin/cat",
			Mapping{Start: 0x55d4c7a5e000, Limit: 0x55d4c7a60000, Offset: 0x2000, Major: 8, Minor: 1, Inode: 1234, Path: "/usr/bin/cat"}, true, true},
		{"7ffd1a3f0000-7ffd1a3f2000 r-xp 00000000 00:00 0                          [vdso]",
			Mapping{Start: 0x7ffd1a3f0000, Limit: 0x7ffd1a3f2000, Path: "[vdso]"}, true, true},
		{"7f0000000000-7f0000001000 rw-p 00000000 00:00 0 ",
			Mapping{Start: 0x7f0000000000, Limit: 0x7f0000001000}, false, true},
		{"7f0000000000-7f0000001000 r-xp 00001000 fd:1a 99 /tmp/my dir/a.out (deleted)",
			Mapping{Start: 0x7f0000000000, Limit: 0x7f0000001000, Offset: 0x1000, Major: 0xfd, Minor: 0x1a, Inode: 99, Path: "/tmp/my dir/a.out (deleted)"}, true, true},
		{"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]",
			Mapping{Start: 0xffffffffff600000, Limit: 0xffffffffff601000, Path: "[vsyscall]"}, true, true},
		{"", Mapping{}, false, false},
		{"1000-1000 r-xp 0 00:00 0", Mapping{}, false, false}, // empty range
		{"2000-1000 r-xp 0 00:00 0", Mapping{}, false, false},
		{"1000-2000 r-x 0 00:00 0", Mapping{}, false, false},
		{"1000-2000 r-xp 0 0000 0", Mapping{}, false, false},
		{"1000-2000 r-xp 0 00:00 -1", Mapping{}, false, false},
		{"10000000000000000-10000000000000001 r-xp 0 00:00 0", Mapping{}, false, false},
	}
	for _, c := range cases {
		m, exec, ok := parseMapsLine(c.line)
		if !reflect.DeepEqual(m, c.want) || exec != c.exec || ok != c.ok {
			t.Errorf("parseMapsLine(%q) = %+v, %v, %v; want %+v, %v, %v", c.line, m, exec, ok, c.want, c.exec, c.ok)
		}
	}
}

func formatMapsLine(m Mapping, perms string) string {
	return fmt.Sprintf("%x-%x %s %08x %02x:%02x %d    %s", m.Start, m.Limit, perms, m.Offset, m.Major, m.Minor, m.Inode, m.Path)
}

// FuzzMaps checks that the parser never panics, accepts only sane ranges,
// and that what it accepts survives a round trip through the kernel's
// format.
func FuzzMaps(f *testing.F) {
	f.Add("55d4c7a5e000-55d4c7a60000 r-xp 00002000 08:01 1234                       /usr/bin/cat")
	f.Add("7ffd1a3f0000-7ffd1a3f2000 r-xp 00000000 00:00 0                          [vdso]")
	f.Fuzz(func(t *testing.T, line string) {
		m, exec, ok := parseMapsLine(line)
		if !ok {
			if exec || !reflect.DeepEqual(m, Mapping{}) {
				t.Fatalf("rejected line returned %+v, %v", m, exec)
			}
			return
		}
		if m.Start >= m.Limit {
			t.Fatalf("empty range accepted: %+v", m)
		}
		perms := "r--p"
		if exec {
			perms = "r-xp"
		}
		m2, exec2, ok2 := parseMapsLine(formatMapsLine(m, perms))
		if !ok2 || exec2 != exec || !reflect.DeepEqual(m, m2) {
			t.Fatalf("round trip of %q: %+v -> %+v", line, m, m2)
		}
		// Lookups through it stay inside it. (The path is dropped: the
		// fuzzer must not make the test open arbitrary files.)
		m.Path = ""
		r := NewResolver()
		r.AddMapping(1, m)
		for _, pc := range []uint64{m.Start, m.Limit - 1} {
			if f := lookup1(r, 1, pc); f.Addr != pc {
				t.Fatalf("anonymous mapping: %+v", f)
			}
		}
	})
}

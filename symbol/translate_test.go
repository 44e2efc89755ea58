package symbol

import "testing"

func TestOffsetToVaddr(t *testing.T) {
	// Program headers copied from real binaries (readelf -l).
	libc := []segment{ // Debian 12 libc.so.6
		{off: 0x0, vaddr: 0x0, filesz: 0x25388},
		{off: 0x26000, vaddr: 0x26000, filesz: 0x1550fc, exec: true},
		{off: 0x17c000, vaddr: 0x17c000, filesz: 0x52c31},
		{off: 0x1cf8d0, vaddr: 0x1cf8d0, filesz: 0x4f98},
	}
	nopie := []segment{ // gcc -no-pie
		{off: 0x0, vaddr: 0x400000, filesz: 0x540},
		{off: 0x1000, vaddr: 0x401000, filesz: 0x169, exec: true},
		{off: 0x2000, vaddr: 0x402000, filesz: 0xdc},
		{off: 0x2dd8, vaddr: 0x403dd8, filesz: 0x248},
	}
	textseg := []segment{ // gcc -shared -Wl,-Ttext-segment=0x200000
		{off: 0x0, vaddr: 0x200000, filesz: 0x490},
		{off: 0x1000, vaddr: 0x201000, filesz: 0x129, exec: true},
		{off: 0x2000, vaddr: 0x202000, filesz: 0xf0},
		{off: 0x2e60, vaddr: 0x203e60, filesz: 0x1a8},
	}
	gonopie := []segment{ // go build: one R+X segment from offset 0
		{off: 0x0, vaddr: 0x400000, filesz: 0xa0231, exec: true},
		{off: 0xa1000, vaddr: 0x4a1000, filesz: 0xdaac8},
	}
	// Synthetic: text whose address and offset disagree by a non-page
	// amount, overlapping the file range of a non-executable segment.
	odd := []segment{
		{off: 0x0, vaddr: 0x10000, filesz: 0x1800},
		{off: 0x1000, vaddr: 0x81234000, filesz: 0x2000, exec: true},
		{off: 0x3a00, vaddr: 0x90000a00, filesz: 0x100},
	}
	cases := []struct {
		name string
		segs []segment
		off  uint64
		want uint64
		ok   bool
	}{
		// In a PIE or library the mapping of the text segment starts at
		// file offset 0x26000; pc - start + 0x26000 = 0x9c840 is memset.
		{"libc memset", libc, 0x9c840, 0x9c840, true},
		{"libc text start", libc, 0x26000, 0x26000, true},
		{"libc rodata", libc, 0x17c010, 0x17c010, true},
		{"nopie main", nopie, 0x1136, 0x401136, true},
		{"nopie text end", nopie, 0x1168, 0x401168, true},
		// The RW segment's page begins before p_offset; the kernel maps
		// it along with the segment at the same distance.
		{"nopie data page", nopie, 0x2000 + 0xd00, 0x403d00, true},
		{"textseg lib_global", textseg, 0x10f9, 0x2010f9, true},
		{"go text", gonopie, 0x5a123, 0x45a123, true},
		{"odd text wins overlap", odd, 0x1100, 0x81234100, true},
		{"odd before text", odd, 0x0fff, 0x10fff, true},
		{"odd page head", odd, 0x3800, 0x90000800, true},
		{"odd past everything", odd, 0x5000, 0, false},
		{"no headers", nil, 0x1234, 0x1234, true},
	}
	for _, c := range cases {
		got, ok := offsetToVaddr(c.segs, c.off)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: offsetToVaddr(%#x) = %#x, %v; want %#x, %v", c.name, c.off, got, ok, c.want, c.ok)
		}
		if c.ok && c.segs != nil && c.name != "nopie data page" && c.name != "odd page head" {
			if back, ok := vaddrToOffset(c.segs, got); !ok || back != c.off {
				t.Errorf("%s: vaddrToOffset(%#x) = %#x, %v", c.name, got, back, ok)
			}
		}
	}
}

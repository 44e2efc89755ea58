package symbol

import (
	"bytes"
	"strconv"
	"testing"
)

// FuzzKallsyms: /proc/kallsyms as any text (a kernel with odd modules, a
// truncated read): parsing never panics, the table is sorted for lookup,
// and every lookup answers with a name the input held.
func FuzzKallsyms(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte, pc uint64) {
		k := parseKallsyms(bytes.NewReader(data))
		if k == nil {
			return
		}
		if n := len(k.offs) + len(k.wide); n != k.len() || (k.offs != nil && k.wide != nil) {
			t.Fatalf("table misaligned: %d addresses, %d names", n, k.len())
		}
		for i := 1; i < k.len(); i++ {
			if k.addr(i) <= k.addr(i-1) || k.ends[i] < k.ends[i-1] {
				t.Fatalf("table not sorted at %d: %#x after %#x", i, k.addr(i), k.addr(i-1))
			}
		}
		if k.len() > 0 && int(k.ends[k.len()-1]) != len(k.names) {
			t.Fatalf("names end at %d of %d bytes", k.ends[k.len()-1], len(k.names))
		}
		if name, ok := k.lookup(pc); ok && !bytes.Contains(data, []byte(name)) {
			t.Fatalf("name %q is not in the input", name)
		}
	})
}

// FuzzNSpid: a /proc/PID/status of any content gives a positive pid.
func FuzzNSpid(f *testing.F) {
	f.Fuzz(func(t *testing.T, status string, pid int) {
		if pid <= 0 {
			pid = 1
		}
		got := parseNSpid(status, pid)
		if got <= 0 {
			t.Fatalf("NSpid %d from %q", got, status)
		}
		if got != pid && !bytes.Contains([]byte(status), []byte(strconv.Itoa(got))) {
			t.Fatalf("NSpid %d is not in %q", got, status)
		}
	})
}

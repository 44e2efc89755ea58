package symbol

import (
	"bytes"
	"slices"
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
		if !slices.IsSorted(k.addrs) || len(k.addrs) != len(k.names) {
			t.Fatalf("table not sorted or misaligned: %d addrs, %d names", len(k.addrs), len(k.names))
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

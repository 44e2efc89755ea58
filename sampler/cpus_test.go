package sampler

import (
	"reflect"
	"strings"
	"testing"
)

// TestChooseCPUs: -C's list against a 64-CPU machine's online list, and
// the kernel's list format written back.
func TestChooseCPUs(t *testing.T) {
	online := make([]int, 64)
	for i := range online {
		online[i] = i
	}
	if got, err := chooseCPUs(online, nil); err != nil || len(got) != 64 {
		t.Errorf("no list: %d CPUs, %v; want all 64", len(got), err)
	}
	want, err := ParseCPUList("63,2-3,3,0")
	if err != nil || !reflect.DeepEqual(want, []int{0, 2, 3, 63}) {
		t.Fatalf("ParseCPUList: %v %v", want, err)
	}
	if got, err := chooseCPUs(online, want); err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("chooseCPUs: %v %v", got, err)
	}
	holes := append(append([]int{}, online[:8]...), online[12:40]...)
	_, err = chooseCPUs(holes, []int{1, 9})
	if err == nil || !strings.Contains(err.Error(), "CPU 9 is not online (online: 0-7,12-39)") {
		t.Errorf("CPU 9 offline: %v", err)
	}
	for in, out := range map[string]string{"0": "0", "0-1": "0-1", "0,2,4-6,8": "0,2,4-6,8", "5-7,1": "1,5-7"} {
		cpus, err := ParseCPUList(in)
		if err != nil || formatCPUList(cpus) != out {
			t.Errorf("%q: %q %v, want %q", in, formatCPUList(cpus), err, out)
		}
	}
}

package sampler

import (
	"os"
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

// TestSelects: a selection takes its pids, and processes by name, read
// once: a process not taken is remembered until it executes another
// program or exits, and the memory is bounded.
func TestSelects(t *testing.T) {
	self := os.Getpid()
	comm := readComm(self, self)
	if comm == "" {
		t.Skip("no /proc")
	}
	s := &Session{cfg: Config{AllProcesses: true, Select: &Selection{PIDs: []int{1 << 30}, Names: []string{comm}}}}
	if !s.selects(1<<30) || !s.selects(self) {
		t.Errorf("a selected pid or name not taken")
	}
	other := os.Getppid()
	if readComm(other, other) == comm {
		t.Skip("the parent has the test's name")
	}
	if s.selects(other) || !s.rejected[other] {
		t.Errorf("pid %d (%s) taken, or not remembered as not taken", other, readComm(other, other))
	}
	s.hostRecord(&Record{Kind: KindComm, PID: uint32(other), TID: uint32(other), Misc: miscCommExec})
	if s.rejected[other] {
		t.Error("an exec did not forget that the process was not taken")
	}
	for pid := 1 << 24; pid < 1<<24+maxRejected+10; pid++ {
		s.rejected[pid] = true
	}
	s.selects(other)
	if len(s.rejected) > maxRejected {
		t.Errorf("%d processes remembered, bound %d", len(s.rejected), maxRejected)
	}
	if (&Session{}).selects(other) != true {
		t.Error("no selection: a process not taken")
	}
}

package python

import (
	"os"
	"testing"
)

// BenchmarkReadStack reads the main thread's stack of a live sleeper.py,
// with each CPython of the machine: the system calls and the decoding of
// one read, the code objects cached; BenchmarkReadStackAgain as the poller
// reads a thread whose frames stay where they were.
func BenchmarkReadStack(b *testing.B)      { benchmarkReadStack(b, false) }
func BenchmarkReadStackAgain(b *testing.B) { benchmarkReadStack(b, true) }

// benchmarkReadStack reads with or without the last read's speculation.
func benchmarkReadStack(b *testing.B, speculative bool) {
	if os.Getuid() != 0 {
		b.Skip("needs root")
	}
	for _, py := range interpreters() {
		b.Run(py.name, func(b *testing.B) {
			t := &testing.T{}
			cmd := startSleeper(t, py.path)
			defer func() { cmd.Process.Kill(); cmd.Wait() }()
			pid := cmd.Process.Pid
			mem := ProcessMemory(pid)
			in, err := Find(pid, mem)
			if err != nil {
				b.Fatal(err)
			}
			states, err := in.threadStates(mem, nil)
			if err != nil {
				b.Fatal(err)
			}
			var main uint64
			for _, s := range states {
				if s.tid == pid {
					main = s.addr
				}
			}
			rd := newReader(in, mem)
			var dst []Frame
			var spec *speculation
			if speculative {
				spec = &speculation{}
			}
			b.ResetTimer()
			calls := rd.pages.reads
			for i := 0; i < b.N; i++ {
				dst, err = rd.stack(main, uint64(i), dst[:0], spec)
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(rd.pages.reads-calls)/float64(b.N), "syscalls/op")
		})
	}
}

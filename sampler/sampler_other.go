//go:build !linux

package sampler

import (
	"context"
	"errors"
	"os"
	"syscall"
	"time"
)

// errNotLinux: perf_event_open exists only on Linux. The stubs keep the
// packages that import sampler building (and vettable) everywhere.
var errNotLinux = errors.New("cctop samples with perf_event_open, which needs Linux")

type Session struct{}

func Open(Config) (*Session, error)                           { return nil, errNotLinux }
func (*Session) Run(context.Context, func(*Batch)) error      { return errNotLinux }
func (*Session) Next(context.Context) (*Batch, error)         { return &Batch{}, errNotLinux }
func (*Session) PID() int                                     { return 0 }
func (*Session) Notes() []string                              { return nil }
func (*Session) KernelFrames() bool                           { return false }
func (*Session) Followed() bool                               { return false }
func (*Session) DetachEvents() ([]*os.File, []string)         { return nil, nil }
func (*Session) ProbeEvents() int                             { return 0 }
func (*Session) MemberIndex(uint64) int                       { return -1 }
func (*Session) Stats() Stats                                 { return Stats{} }
func (*Session) ExitStatus() *os.ProcessState                 { return nil }
func (*Session) ExitCode() (int, string)                      { return -1, "" }
func (*Session) Exited() bool                                 { return true }
func (*Session) Target() TargetState                          { return TargetState{} }
func (*Session) CPUs() int                                    { return 0 }
func MayLockMemory() bool                                     { return false }
func (*Session) ExitSignal() (syscall.Signal, bool)           { return 0, false }
func SignalName(sig syscall.Signal) string                    { return sig.String() }
func (*Session) Stop(time.Duration)                           {}
func (*Session) Close() error                                 { return nil }
func ProbeEvent(EventSpec, bool) error                        { return errNotLinux }
func UprobeType() (uint32, error)                             { return 0, errNotLinux }
func ProbeStackCopy() error                                   { return errNotLinux }
func ProbeBranchStack() error                                 { return errNotLinux }
func OpenUprobeCounter(string, uint64, int) (*Counter, error) { return nil, errNotLinux }
func OpenBreakpointCounter(uint64, int) (*Counter, error)     { return nil, errNotLinux }
func (*Session) TrialBreakpoints([]EventSpec, []int, time.Duration, time.Duration, func([]uint64, time.Duration) bool) (*ProbeTrial, error) {
	return nil, errNotLinux
}

type Counter struct{}

// EventRef names one opened event (see the Linux build).
type EventRef struct{ Group, Member int }

func (*Counter) Read() (uint64, error) { return 0, errNotLinux }
func (*Counter) Close() error          { return nil }

func FixPerfEvent() string  { return errNotLinux.Error() }
func FixSystemWide() string { return errNotLinux.Error() }
func SystemWideAllowed() (bool, string) {
	return false, errNotLinux.Error()
}
func UprobesPermitted() error     { return errNotLinux }
func DeleteProbes([]string) error { return errNotLinux }

func (*Session) ProbeFootprint() (int, int, bool) { return 0, 0, false }

type ProbeTrial struct {
	Hits []uint64
	CPU  time.Duration
}

func (*ProbeTrial) Close()                                    {}
func (t *ProbeTrial) Split([]bool) (*ProbeTrial, *ProbeTrial) { return t, &ProbeTrial{} }
func (*Session) TrialProbes([]EventSpec, []int, time.Duration) (*ProbeTrial, error) {
	return nil, errNotLinux
}
func (*Session) ProbesWhy() string            { return errNotLinux.Error() }
func TracefsProbes() (bool, string)           { return false, errNotLinux.Error() }
func (*Session) ReopenCost(int) time.Duration { return 0 }
func (*Session) Background(fn func())         { fn() }
func (*Session) Threads() []Thread            { return nil }
func (*Session) BusiestThreads(int) []int     { return nil }
func (*Session) ThreadsSeen() int             { return 0 }
func (*Session) OffCPU() (string, string)     { return "", "" }
func (*Session) SetSwitchSamples(bool) error  { return nil }
func (*Session) SwitchSamplesOn() bool        { return false }
func (*Session) SwitchSamplesAllowed() bool   { return false }

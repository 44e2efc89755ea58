package sampler

import (
	"fmt"
	"sort"
	"strings"
)

// perf_event_attr.type values.
const (
	TypeHardware = 0
	TypeSoftware = 1
)

// EventSpec names one perf event: the sampling leader or a group member.
type EventSpec struct {
	Name    string
	Type    uint32
	Config  uint64
	Config1 uint64
	Config2 uint64
	// Hardware is true for events that need a PMU.
	Hardware bool
	// UprobePath, when set, makes this a uprobe PMU event on the
	// instruction at file offset UprobeOffset of that ELF file (a
	// function's entry). Entry probes only: return probes corrupt Go
	// stacks.
	UprobePath   string
	UprobeOffset uint64
}

var namedEvents = map[string]EventSpec{
	"cpu-clock":  {Name: "cpu-clock", Type: TypeSoftware, Config: 0},
	"task-clock": {Name: "task-clock", Type: TypeSoftware, Config: 1},
	"cycles":     {Name: "cycles", Type: TypeHardware, Config: 0, Hardware: true},
}

// ParseEvent resolves a sampling event name given with -e.
func ParseEvent(name string) (EventSpec, error) {
	if e, ok := namedEvents[name]; ok {
		return e, nil
	}
	names := make([]string, 0, len(namedEvents))
	for n := range namedEvents {
		names = append(names, n)
	}
	sort.Strings(names)
	return EventSpec{}, fmt.Errorf("unknown event %q (known: %s)", name, strings.Join(names, ", "))
}

// IsClock reports whether the event counts nanoseconds.
func (e EventSpec) IsClock() bool {
	return e.Type == TypeSoftware && (e.Config == 0 || e.Config == 1)
}

package otlp

import (
	"maps"
	"slices"
	"strconv"

	"go.opentelemetry.io/collector/pdata/pcommon"
)

// The attribute names this package writes and reads. The standard ones are the
// OpenTelemetry semantic conventions' names; the cctop.* ones say what only cctop has.
const (
	AttrHostName       = "host.name"
	AttrPID            = "process.pid"
	AttrExecutableName = "process.executable.name"
	AttrExecutablePath = "process.executable.path"
	AttrContainerID    = "container.id"
	AttrServiceName    = "service.name"

	// On samples.
	AttrThreadID   = "thread.id"
	AttrThreadName = "thread.name"
	// AttrOffCPUReason is why the thread was off the CPU, on the samples of an
	// off-CPU leaf (cct.OffCPUFrame).
	AttrOffCPUReason = "cctop.offcpu.reason"

	// AttrBuildID is a mapping's GNU build ID, in hex.
	AttrBuildID = "process.executable.build_id.gnu"
	// AttrGoBuildID is a Go binary's Go build ID (go tool buildid).
	AttrGoBuildID = "process.executable.build_id.go"

	// AttrParameters is, on every profile, the parameters of the run (cct.Meta.Comments),
	// as an array of strings.
	AttrParameters = "cctop.parameters"

	// ScopeName is the instrumentation scope of the profiles cctop writes.
	ScopeName = "cctop"
)

// Resource is what an OTLP resource says of the process a profile is of.
type Resource struct {
	HostName       string
	PID            int64
	ExecutableName string
	ExecutablePath string
	ContainerID    string
	ServiceName    string
	// Extra are any other attributes, written as strings; on reading, every attribute
	// not above, as its string form.
	Extra map[string]string
}

// put writes r into attrs; empty fields are left out.
func (r Resource) put(attrs pcommon.Map) {
	attrs.EnsureCapacity(6 + len(r.Extra))
	for _, kv := range [...]struct{ k, v string }{
		{AttrHostName, r.HostName},
		{AttrExecutableName, r.ExecutableName},
		{AttrExecutablePath, r.ExecutablePath},
		{AttrContainerID, r.ContainerID},
		{AttrServiceName, r.ServiceName},
	} {
		if kv.v != "" {
			attrs.PutStr(kv.k, kv.v)
		}
	}
	if r.PID != 0 {
		attrs.PutInt(AttrPID, r.PID)
	}
	for _, k := range slices.Sorted(maps.Keys(r.Extra)) {
		if _, taken := attrs.Get(k); !taken {
			attrs.PutStr(k, r.Extra[k])
		}
	}
}

// resourceOf reads r back from attrs. A pid given as a string of digits is taken too.
func resourceOf(attrs pcommon.Map) Resource {
	var r Resource
	for k, v := range attrs.All() {
		switch k {
		case AttrHostName:
			r.HostName = v.AsString()
		case AttrPID:
			r.PID = intOf(v)
		case AttrExecutableName:
			r.ExecutableName = v.AsString()
		case AttrExecutablePath:
			r.ExecutablePath = v.AsString()
		case AttrContainerID:
			r.ContainerID = v.AsString()
		case AttrServiceName:
			r.ServiceName = v.AsString()
		default:
			if r.Extra == nil {
				r.Extra = make(map[string]string)
			}
			r.Extra[k] = v.AsString()
		}
	}
	return r
}

// intOf is v as an integer: an int, or a string of one; 0 otherwise.
func intOf(v pcommon.Value) int64 {
	switch v.Type() {
	case pcommon.ValueTypeInt:
		return v.Int()
	case pcommon.ValueTypeStr:
		n, _ := strconv.ParseInt(v.Str(), 10, 64)
		return n
	}
	return 0
}

package otlp

import (
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/cctop/cctop/cct"
)

// procKey is what makes two profiles the same process: windows of one process share
// it and add up.
type procKey struct {
	host, container, exe, name string
	pid                        int64
}

func keyOf(r Resource) procKey {
	return procKey{r.HostName, r.ContainerID, r.ExecutablePath, r.ExecutableName, r.PID}
}

// Merge adds every process and window of procs into one tree, for a viewer. Windows
// of one process (same host, container, pid and executable) add up. When there is
// more than one process, each one's contexts go under a root frame naming it, like
// "[python3 1234]", so that processes stay apart.
//
// The Meta is the first process's, covering the span of all of them, with every
// thread, module and parameter. A process whose trigger metric (SampleType/Unit)
// differs from the first one's does not add its Time to it (a comment says so); its
// other columns still add.
func Merge(procs []Process) (*cct.Tree, cct.Meta) {
	var keys []procKey
	groups := map[procKey][]int{}
	for i, p := range procs {
		if p.Tree == nil {
			continue
		}
		k := keyOf(p.Resource)
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], i)
	}
	out := cct.New()
	meta := mergeMeta(procs)
	skipped := map[string]int{}
	var labels []string
	for _, k := range keys {
		var prefix string
		if len(keys) > 1 {
			prefix = label(procs[groups[k][0]].Resource, labels)
			labels = append(labels, prefix)
		}
		for _, i := range groups[k] {
			p := procs[i]
			sameTime := p.Meta.SampleType == meta.SampleType && p.Meta.Unit == meta.Unit
			if !sameTime && p.Tree.Total().Time != 0 {
				skipped[p.Meta.SampleType+"/"+p.Meta.Unit]++
			}
			if prefix == "" && sameTime {
				out.Merge(p.Tree)
				continue
			}
			graft(out, p.Tree, prefix, !sameTime)
		}
	}
	for _, what := range slices.Sorted(maps.Keys(skipped)) {
		meta.Comments = append(meta.Comments, fmt.Sprintf("merge: the %s time of %d profiles is left out: not in %s/%s",
			what, skipped[what], meta.SampleType, meta.Unit))
	}
	return out, meta
}

// label names a process's root frame, unlike the labels before it.
func label(r Resource, taken []string) string {
	name := r.ExecutableName
	if name == "" && r.ExecutablePath != "" {
		name = filepath.Base(r.ExecutablePath)
	}
	if name == "" {
		name = r.ServiceName
	}
	if name == "" {
		name = "process"
	}
	if r.PID != 0 {
		name += " " + strconv.FormatInt(r.PID, 10)
	}
	// The first of these that no other process has: the host tells apart processes
	// of a fleet, the container those of one host.
	cands := []string{"[" + name + "]"}
	if r.HostName != "" {
		cands = append(cands, "["+name+" @"+r.HostName+"]")
	}
	if r.ContainerID != "" {
		cands = append(cands, "["+name+" @"+r.ContainerID[:min(12, len(r.ContainerID))]+"]")
	}
	for _, l := range cands {
		if !slices.Contains(taken, l) {
			return l
		}
	}
	for n := 2; ; n++ {
		if l := "[" + name + " #" + strconv.Itoa(n) + "]"; !slices.Contains(taken, l) {
			return l
		}
	}
}

// graft adds every context of src into dst, under a root frame named prefix (none if
// empty), without src's Time when dropTime.
func graft(dst, src *cct.Tree, prefix string, dropTime bool) {
	funcs := make([]cct.FuncID, src.NumFuncs())
	for i := 1; i < len(funcs); i++ {
		funcs[i] = dst.Intern(src.Func(cct.FuncID(i)))
	}
	var top []cct.Frame
	if prefix != "" {
		top = []cct.Frame{{Func: dst.Intern(cct.Func{Name: prefix})}}
	}
	var frames []cct.Frame
	for id := range cct.NodeID(src.Len()) {
		have := false
		for tid, self := range src.ThreadSelves(id) {
			if dropTime {
				self.Time = 0
			}
			if self.IsZero() {
				continue
			}
			if !have {
				frames = frames[:0]
				for _, f := range src.Stack(id) {
					f.Func = funcs[f.Func]
					frames = append(frames, f)
				}
				frames, have = append(frames, top...), true
			}
			dst.Add(frames, tid, self)
		}
	}
}

// mergeMeta is the Meta of procs together.
func mergeMeta(procs []Process) cct.Meta {
	var m cct.Meta
	first := true
	var start, end int64
	for _, p := range procs {
		if p.Tree == nil {
			continue
		}
		pm := p.Meta
		if first {
			m = pm
			m.Comments, m.Threads, m.Modules = nil, nil, nil
			first = false
		}
		if m.SampleType == "" && pm.SampleType != "" {
			// A process with no time column takes none from others' either.
			m.SampleType, m.Unit, m.PeriodType, m.Period = pm.SampleType, pm.Unit, pm.PeriodType, pm.Period
		}
		m.Calls = m.Calls || pm.Calls
		m.Flow = m.Flow || pm.Flow
		m.OffCPU = m.OffCPU || pm.OffCPU
		m.Wall = m.Wall || pm.Wall
		if pm.TimeNanos != 0 {
			if start == 0 || pm.TimeNanos < start {
				start = pm.TimeNanos
			}
			end = max(end, pm.TimeNanos+pm.DurationNanos)
		}
		for _, c := range pm.Comments {
			if !slices.Contains(m.Comments, c) {
				m.Comments = append(m.Comments, c)
			}
		}
		for tid, th := range pm.Threads {
			if m.Threads == nil {
				m.Threads = make(map[uint32]cct.Thread)
			}
			if _, ok := m.Threads[tid]; !ok {
				m.Threads[tid] = th
			}
		}
		for path, mod := range pm.Modules {
			if m.Modules == nil {
				m.Modules = make(map[string]cct.Module)
			}
			if _, ok := m.Modules[path]; !ok {
				m.Modules[path] = mod
			}
		}
	}
	if start != 0 {
		m.TimeNanos, m.DurationNanos = start, end-start
	}
	return m
}

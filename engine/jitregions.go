package engine

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/lang"
	"github.com/cctop/cctop/symbol"
)

// What the profile ran of JIT code, per process: how many samples have a
// frame in code that lives only in memory, how many of those a runtime
// named, and from what (a perf map, a jitdump, nothing), for the summary,
// doctor -p and the counters panel, each with the fix where nothing names
// it.

// maxJITRegions bounds the processes counted one by one; the others are
// counted together.
const maxJITRegions = 1024

// jitSourceEvery is how often, in a process's JIT samples, the resolver is
// asked what names its code until something does.
const jitSourceEvery = 256

type jitRegion struct {
	samples, unnamed uint64
	source           string // symbol.Resolver.JITSource, once found
}

type jitRegions struct {
	procs  map[uint32]*jitRegion
	others jitRegion
}

// addJIT counts the sample of process pid whose user frames are user.
func (b *builder) addJIT(pid uint32, user []symbol.Frame) {
	jit, unnamed := false, false
	for i := range user {
		f := &user[i]
		if f.JIT {
			jit, unnamed = true, true
		} else if f.Module == symbol.JITModule {
			jit = true
		}
	}
	if !jit {
		return
	}
	j := &b.jitSeen
	if j.procs == nil {
		j.procs = make(map[uint32]*jitRegion)
	}
	r := j.procs[pid]
	if r == nil {
		if len(j.procs) >= maxJITRegions {
			r = &j.others
		} else {
			r = &jitRegion{}
			j.procs[pid] = r
		}
	}
	r.samples++
	if unnamed {
		r.unnamed++
	}
	if r.source == "" && r != &j.others && r.samples%jitSourceEvery == 1 {
		r.source = b.res.JITSource(int(pid))
	}
}

// jitRegionLines says, a line per process (hottest first, at most limit),
// what share of the profile's samples run JIT code and what names it.
func (b *builder) jitRegionLines(names map[uint32]cct.Thread, limit int) []string {
	j := &b.jitSeen
	total := b.samples
	if total == 0 || len(j.procs) == 0 && j.others.samples == 0 {
		return nil
	}
	pct := func(n uint64) float64 { return 100 * float64(n) / float64(total) }
	pids := slices.Collect(maps.Keys(j.procs))
	slices.SortFunc(pids, func(a, c uint32) int { return cmp.Compare(j.procs[c].samples, j.procs[a].samples) })
	var out []string
	rest, restProcs := j.others.samples, 0
	for i, pid := range pids {
		r := j.procs[pid]
		if i >= limit {
			rest += r.samples
			restProcs++
			continue
		}
		if src := b.res.JITSource(int(pid)); src != "" {
			r.source = src // alive: as it is now
		}
		comm := names[pid].Name
		who := "pid " + strconv.FormatUint(uint64(pid), 10)
		if comm != "" {
			who = comm + " (" + who + ")"
		}
		s := fmt.Sprintf("JIT code: %s: %.1f%% of samples run code that lives only in memory", who, pct(r.samples))
		switch {
		case r.source != "" && r.unnamed == 0:
			s += ", named by its " + r.source
		case r.source != "":
			s += fmt.Sprintf(", named by its %s; %.1f%% had a frame it did not name when sampled", r.source, pct(r.unnamed))
		default:
			s += "; no perf map or jitdump names it: " + lang.JITAdvice(lang.Runtime(comm))
		}
		out = append(out, s)
	}
	if rest > 0 {
		more := strconv.Itoa(restProcs) + " more processes"
		if j.others.samples > 0 {
			more = "more processes"
		}
		out = append(out, fmt.Sprintf("JIT code: %.1f%% of samples in the code of %s", pct(rest), more))
	}
	return out
}

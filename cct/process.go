package cct

import (
	"fmt"
	"strconv"
	"strings"
)

// A profile of several processes (a host, or a target and the children it
// forked) has each process as the outermost frame of its stacks: a
// function of module ProcessModule named "TITLE [pid N]", TITLE its command
// line as it read when first sampled (shortened), with its comm (the
// kernel's name of it, perf's comm) as the linkage name, and "COMM [pid
// N]" as its short name. Views show the
// process as the tree's first level, and may merge processes by comm. A
// pprof profile carries it as labels (pid, comm, process) rather than as a
// location, and reading one with several pids makes the frames again.
const ProcessModule = "[process]"

// maxTitle bounds a process frame's title: a command line can be
// kilobytes, and a postgres backend's is rewritten as it works.
const maxTitle = 60

// ProcessFunc is the frame of process pid, titled by its command line
// (or its comm when that is empty: a kernel thread).
func ProcessFunc(pid uint32, title, comm string) Func {
	title = strings.Join(strings.Fields(title), " ")
	if title == "" {
		title = comm
	}
	if title == "" {
		title = "?"
	}
	if r := []rune(title); len(r) > maxTitle {
		title = string(r[:maxTitle-1]) + "…"
	}
	name := fmt.Sprintf("%s [pid %d]", title, pid)
	return Func{Name: name, Short: processShort(pid, comm, title), Module: ProcessModule, System: comm}
}

// processShort is a process frame's name in a row: its comm and pid, the
// command line being in the details. A row is narrow, and a host's
// processes of one program (postgres backends) differ in their pids.
func processShort(pid uint32, comm, title string) string {
	if comm == "" {
		comm, _, _ = strings.Cut(title, " ")
	}
	return fmt.Sprintf("%s [pid %d]", comm, pid)
}

// IsProcess says whether f is a process frame.
func (f Func) IsProcess() bool { return f.Module == ProcessModule }

// ProcessPID is the pid of a process frame, 0 for another.
func (f Func) ProcessPID() uint32 {
	if !f.IsProcess() {
		return 0
	}
	i := strings.LastIndex(f.Name, " [pid ")
	if i < 0 || !strings.HasSuffix(f.Name, "]") {
		return 0
	}
	pid, err := strconv.ParseUint(f.Name[i+len(" [pid "):len(f.Name)-1], 10, 32)
	if err != nil {
		return 0
	}
	return uint32(pid)
}

// Comm is the comm of a process frame ("" for another): what merging
// processes by name groups them by.
func (f Func) Comm() string {
	if !f.IsProcess() {
		return ""
	}
	return f.System
}

// Reroot puts every context under one new context of fn at the top: the
// tree of one process becomes that process's branch when a second one
// appears. The root's own samples (empty stacks) go to fn's context too.
// remap[old] is each old node's new id, for per-node data held elsewhere.
func (t *Tree) Reroot(fn FuncID) (remap []NodeID) {
	t.checkFunc(fn)
	nt := &Tree{
		funcs:       t.funcs,
		funcIndex:   t.funcIndex,
		children:    make(map[childKey]NodeID, len(t.children)+1),
		threads:     make([]threadSelf, 0, len(t.threads)),
		threadIndex: make(map[threadKey]int32, len(t.threadIndex)),
	}
	root := t.nodes[0]
	root.firstChild, root.nextSibling, root.firstThread, root.ident = NoNode, NoNode, -1, rootIdent
	root.Self, root.hasLeaf = Metrics{}, false
	nt.nodes = append(make([]node, 0, len(t.nodes)+1), root)
	top := nt.child(0, fn, 0, 0, false)
	remap = make([]NodeID, len(t.nodes))
	remap[0] = top
	nt.nodes[top].Self = t.nodes[0].Self
	for i := 1; i < len(t.nodes); i++ {
		o := &t.nodes[i]
		id := nt.child(remap[o.Parent], o.Func, o.CallSite, o.Line, o.Inlined)
		n := &nt.nodes[id]
		n.Self = o.Self
		n.leafAddr, n.leafLine, n.hasLeaf = o.leafAddr, o.leafLine, o.hasLeaf
		remap[i] = id
	}
	for i := range t.nodes {
		for j := t.nodes[i].firstThread; j >= 0; j = t.threads[j].next {
			nt.copyAddrs(nt.addThread(remap[i], t.threads[j].tid, t.threads[j].m), t, j)
		}
	}
	nt.addrsDropped = t.addrsDropped
	nt.settle()
	*t = *nt
	return remap
}

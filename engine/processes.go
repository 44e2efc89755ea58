package engine

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/cctop/cctop/cct"
)

// procLevel puts each sample's process at the top of its stack
// (cct.ProcessModule) where a profile has more than one: from the start
// over the host, and in a target's profile from the first sample of a
// process other than the target (a child it forked), the contexts sampled
// until then moved under the target's process (cct.Tree.Reroot). A
// profile of one process keeps no such level. The agent's windows are cut
// by process instead and never have it.
type procLevel struct {
	enabled bool   // the level may be made (record, top)
	on      bool   // samples get their process frame
	target  uint32 // a target session's process: another turns the level on
	pid     uint32 // the sample's, from frameStack
	funcs   map[uint32]cct.FuncID
	// comms are the processes' names from COMM records (their main
	// thread's), for a process gone before /proc could be read.
	comms map[uint32]string
	// procDir is /proc, or a test's stand-in.
	procDir string
}

// enableProcesses has the builder add process frames: at once over the
// host (allProcesses), else when a process other than target is sampled.
func (b *builder) enableProcesses(allProcesses bool, target uint32) {
	p := &b.proc
	p.enabled, p.on, p.target = true, allProcesses, target
	p.funcs, p.comms = map[uint32]cct.FuncID{}, map[uint32]string{}
	if p.procDir == "" {
		p.procDir = "/proc"
	}
}

// processFrame is the frame of the sample's process, or false when the
// profile has no process level (yet). The first sample of a second
// process in a target's profile moves what came before under the target.
func (b *builder) processFrame() (cct.Frame, bool) {
	p := &b.proc
	if !p.enabled || p.pid == 0 {
		return cct.Frame{}, false
	}
	if !p.on {
		if p.pid == p.target || p.target == 0 {
			return cct.Frame{}, false
		}
		p.on = true
		if b.tree.Len() > 1 {
			b.remapNodes(b.tree.Reroot(b.processFunc(p.target)))
		}
	}
	return cct.Frame{Func: b.processFunc(p.pid)}, true
}

// processFunc is pid's frame's function, titled by its command line when
// first asked for.
func (b *builder) processFunc(pid uint32) cct.FuncID {
	p := &b.proc
	if fn, ok := p.funcs[pid]; ok {
		return fn
	}
	comm := strings.TrimSpace(string(readBounded(fmt.Sprintf("%s/%d/comm", p.procDir, pid), 64)))
	if comm == "" {
		comm = p.comms[pid]
	}
	title := string(bytes.ReplaceAll(readBounded(fmt.Sprintf("%s/%d/cmdline", p.procDir, pid), 4096), []byte{0}, []byte{' '}))
	fn := b.tree.Intern(cct.ProcessFunc(pid, title, comm))
	p.funcs[pid] = fn
	return fn
}

// noteComm keeps the name a COMM record gives a process's main thread.
func (b *builder) noteComm(pid, tid uint32, comm string) {
	if b.proc.comms != nil && pid == tid && comm != "" {
		b.proc.comms[pid] = comm
	}
}

// forgetProcess drops pid's frame: a program it executes, or a process
// that reuses its pid, is titled anew.
func (b *builder) forgetProcess(pid uint32) {
	if b.proc.funcs != nil {
		delete(b.proc.funcs, pid)
		delete(b.proc.comms, pid)
	}
}

// readBounded reads at most n bytes of a file of /proc: a process's
// command line is the process's to make as long as it likes.
func readBounded(path string, n int64) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, n))
	return b
}

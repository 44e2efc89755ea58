package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/cctop/cctop/sampler"
)

// releaseCmd is the hidden command that takes over a session's probe events
// and closes them by exiting.
const releaseCmd = "__release-probes"

// closeSession closes sess. Closing a uprobe event takes the kernel about
// 0.1 s, and a session counting calls with uprobes has one per thread, CPU
// and probe: a quit would keep the user looking at a blank terminal for
// seconds (5 s for the demo, 12 s attached to a 4-thread target). Those
// events go to a detached child that pays for closing them, and cctop
// returns at once. The events are disabled first, so they count nothing
// more; the probes stay in the target's code until the child is done.
func closeSession(sess *sampler.Session, stderr io.Writer) {
	defer sess.Close()
	n := sess.ProbeEvents()
	if n <= 16 {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	files := sess.DetachEvents()
	cmd := exec.Command(exe, releaseCmd)
	cmd.ExtraFiles = files
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	err = cmd.Start()
	if err != nil {
		fmt.Fprintf(stderr, "cctop: closing %d probe events (the kernel takes about 0.1 s to remove each uprobe)...\n", n)
	}
	for _, f := range files {
		f.Close() // the child holds its own copies; on failure this is the slow close
	}
	if err == nil {
		cmd.Process.Release()
	}
}

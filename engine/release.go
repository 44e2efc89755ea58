package engine

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"github.com/cctop/cctop/sampler"
)

// ReleaseCmd is the hidden command that takes over a session's probe events,
// closes them, and then deletes the tracefs probes they used (its
// arguments).
const ReleaseCmd = "__release-probes"

// releaseSlowCloses is how many slow event closes (each waits for the kernel
// to unregister a uprobe, about 0.1 s) cctop pays itself before it hands
// the events to a release child: none, as one probe on two CPUs was 0.2 s
// of a 3.6 s recording's wall time.
const releaseSlowCloses = 0

// closeSession closes sess. Closing the last event on a uprobe takes the
// kernel about 0.1 s (with tracefs probes one close per probe, with the
// uprobe PMU one per thread, CPU and probe): those events go to a detached
// child that pays for closing them, and cctop returns at once. The events
// are disabled first, so they count nothing more; the probes stay in the
// target's code until the child is done, a fraction of a second with tracefs
// probes.
func closeSession(sess *sampler.Session, stderr io.Writer) {
	defer sess.Close()
	n := sess.ProbeEvents()
	if n <= releaseSlowCloses {
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	files, probes := sess.DetachEvents()
	cmd := exec.Command(exe, append([]string{ReleaseCmd, strconv.Itoa(len(files))}, probes...)...)
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
		return
	}
	sampler.DeleteProbes(probes)
}

// Release is the release child: it closes the events it was handed (file
// descriptors 3 and up, as many as args[0] says) and deletes the probes
// named in the other args.
func Release(args []string) {
	if len(args) == 0 {
		return
	}
	if n, err := strconv.Atoi(args[0]); err == nil && n > 0 {
		closeInherited(n)
	}
	sampler.DeleteProbes(args[1:])
}

// Command rusage runs a profiler for a bench script and reports what it
// cost over its whole life, exit included: perf record collects build IDs
// after its SIGINT, and cctop agent sends its last window then, work that
// reading /proc/PID/stat before the signal misses.
//
// usage: rusage OUT CMD [ARG...]
//
// It writes the command's pid to OUT.pid as soon as it runs (for the
// script's RSS readings), passes SIGINT and SIGTERM on, and at the
// command's exit writes "CPU_SECONDS MAXRSS_KIB" (user and system time,
// peak resident set) to OUT. It exits with the command's status.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: rusage OUT CMD [ARG...]")
		os.Exit(2)
	}
	out := os.Args[1]
	cmd := exec.Command(os.Args[2], os.Args[3:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "rusage:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(out+".pid", fmt.Appendf(nil, "%d\n", cmd.Process.Pid), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "rusage:", err)
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if ru != nil {
		cpu := float64(ru.Utime.Sec+ru.Stime.Sec) + float64(ru.Utime.Usec+ru.Stime.Usec)/1e6
		if werr := os.WriteFile(out, fmt.Appendf(nil, "%.3f %d\n", cpu, ru.Maxrss), 0o644); werr != nil {
			fmt.Fprintln(os.Stderr, "rusage:", werr)
		}
	}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			os.Exit(max(ee.ExitCode(), 1))
		}
		os.Exit(1)
	}
}

package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/cctop/cctop/engine"
)

func cmdDoctor(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	pid := fs.Int("p", 0, "also sample process `PID` for about 2 s and say how completely its stacks unwind, by module")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("doctor takes no arguments")
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "p" })
	if set && *pid <= 0 {
		return usageError("bad PID %d", *pid)
	}
	checks := engine.Doctor()
	sampling := true
	for _, c := range checks {
		status := "ok"
		if !c.OK {
			status = "NO"
		}
		fmt.Fprintf(w, "%-20s %-3s %s\n", c.Name, status, c.Detail)
		if !c.OK && c.Fix != "" {
			fmt.Fprintf(w, "%-20s     fix: %s\n", "", c.Fix)
		}
		if !c.OK && c.Fatal {
			sampling = false
		}
	}
	if !sampling {
		return &exitError{code: 1, msg: "sampling does not work here: see the fix above"}
	}
	if *pid > 0 {
		return engine.DoctorProcess(*pid, w)
	}
	return nil
}

package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cctop/cctop/engine"
)

func cmdRecord(args []string, stderr io.Writer) error {
	sigCtx, stopSignals := catchSignals()
	defer stopSignals()
	fs, tf := newTargetFlags("record")
	tf.hostByDefault = true
	var dur durationFlag
	fs.Var(&dur, "d", "stop after `DURATION`")
	out := fs.String("o", "cctop.pb.gz", "output `FILE`")
	format := fs.String("format", "pprof", "output format: pprof or folded")
	of := addOTLPFlags(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *format != "pprof" && *format != "folded" {
		return usageError("unknown --format %q (pprof or folded)", *format)
	}
	if *out == "" {
		return usageError("-o needs a file name")
	}
	if err := engine.CheckWritable(*out); err != nil {
		return err
	}
	cfg, plan, err := tf.resolve(fs)
	if err != nil {
		return err
	}
	fl, err := of.open(func(format string, args ...any) { fmt.Fprintf(stderr, "cctop: "+format+"\n", args...) })
	if err != nil {
		return err
	}

	// Ctrl-C, SIGTERM and SIGHUP end the recording; the profile is still
	// written.
	ctx, stop := runContext(sigCtx, dur.d)
	defer stop()

	cfg.Stdin = os.Stdin
	rec, err := engine.Record(ctx, cfg, plan, stderr)
	if err != nil {
		fl.close(context.Background())
		return err
	}
	defer rec.Close(stderr)
	if cfg.AllProcesses && !tf.all && cfg.Select == nil {
		fmt.Fprintln(stderr, "cctop: no target: sampled every process on the host (-a); -p PID or -- CMD for one")
	}
	if err := rec.WriteProfile(*out, *format); err != nil {
		return err
	}
	rec.Summary(stderr)
	fmt.Fprintf(stderr, "cctop: wrote %s\n", *out)
	if fl == nil {
		return nil
	}
	// The file is written first: a collector that is away loses the
	// push, not the profile.
	fl.push(rec.Window())
	fctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = fl.close(fctx)
	fmt.Fprintf(stderr, "cctop: %s\n", fl.status())
	return cmp.Or(err, fl.undelivered())
}

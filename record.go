package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/sampler"
	"github.com/cctop/cctop/symbol"
)

func cmdRecord(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("record", flag.ContinueOnError)
	var sf samplingFlags
	sf.register(fs)
	var dur durationFlag
	fs.Var(&dur, "d", "stop after `DURATION`")
	out := fs.String("o", "cctop.pb.gz", "output `FILE`")
	format := fs.String("format", "pprof", "output format: pprof or folded")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *format != "pprof" && *format != "folded" {
		return usageError("unknown --format %q (pprof or folded)", *format)
	}
	cfg, err := sf.config(fs)
	if err != nil {
		return err
	}
	if err := checkWritable(*out); err != nil {
		return err
	}

	// Ctrl-C and SIGTERM end the recording; the profile is still written.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if dur.d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, dur.d)
		defer cancel()
	}

	cfg.Stdin = os.Stdin
	rec, err := recordTarget(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer rec.sess.Close()
	meta := profileMeta(cfg, rec.sess, rec.b, rec.start, rec.elapsed)
	if err := writeProfile(*out, *format, rec.b.tree, meta); err != nil {
		return err
	}
	summary(stderr, cfg, rec)
	fmt.Fprintf(stderr, "cctop: wrote %s\n", *out)
	return nil
}

// recording is one finished sampling run.
type recording struct {
	sess    *sampler.Session
	b       *builder
	start   time.Time
	elapsed time.Duration
}

// recordTarget samples cfg's target until it exits or ctx ends, and builds
// its tree. A target cctop launched is stopped when ctx ends first, and its
// last samples are kept. The caller closes rec.sess.
func recordTarget(ctx context.Context, cfg sampler.Config, stderr io.Writer) (*recording, error) {
	start := time.Now()
	sess, err := sampler.Open(cfg)
	if err != nil {
		return nil, err
	}
	res := symbol.NewResolver()
	if err := res.LoadProc(sess.PID()); err != nil {
		fmt.Fprintf(stderr, "cctop: reading mappings of %d: %v\n", sess.PID(), err)
	}
	b := newBuilder(res)
	if err := sess.Run(ctx, b.handle); err != nil {
		sess.Close()
		return nil, err
	}
	if len(cfg.Argv) > 0 && !sess.Exited() {
		sess.Stop(2 * time.Second)
		if err := sess.Run(context.Background(), b.handle); err != nil {
			sess.Close()
			return nil, err
		}
	}
	return &recording{sess: sess, b: b, start: start, elapsed: time.Since(start)}, nil
}

func profileMeta(cfg sampler.Config, sess *sampler.Session, b *builder, start time.Time, elapsed time.Duration) cct.Meta {
	m := cct.Meta{
		SampleType: "cpu", Unit: "nanoseconds",
		TimeNanos: start.UnixNano(), DurationNanos: elapsed.Nanoseconds(),
		Threads: b.threads,
	}
	if !cfg.Leader.IsClock() {
		m.SampleType, m.Unit = cfg.Leader.Name, "count"
	}
	m.PeriodType = m.SampleType
	if cfg.Period > 0 {
		m.Period = int64(cfg.Period)
	} else if cfg.Leader.IsClock() && cfg.Freq > 0 {
		m.Period = int64(time.Second) / int64(cfg.Freq)
	}
	m.Comments = []string{
		"cctop record",
		"trigger=time",
		"event=" + cfg.Leader.Name,
	}
	if cfg.Period > 0 {
		m.Comments = append(m.Comments, fmt.Sprintf("period=%d", cfg.Period))
	} else {
		m.Comments = append(m.Comments, fmt.Sprintf("frequency=%dHz", cfg.Freq))
	}
	m.Comments = append(m.Comments, "counters=none", fmt.Sprintf("kernel_frames=%v", sess.KernelFrames()))
	return m
}

// writeProfile writes to a temporary file beside the target and renames it
// into place, so an interrupted write never leaves half a profile.
func writeProfile(path, format string, t *cct.Tree, m cct.Meta) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".cctop-*.tmp")
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", path, err)
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	if format == "folded" {
		err = t.WriteFolded(w)
	} else {
		err = t.WriteProfile(w, m)
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", path, err)
	}
	return nil
}

// checkWritable fails early, before sampling, if the output can't be created.
func checkWritable(path string) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, ".cctop-*.tmp")
	if err != nil {
		return fmt.Errorf("cannot write %s: %v", path, err)
	}
	tmp.Close()
	os.Remove(tmp.Name())
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("cannot write %s: is a directory", path)
	}
	return nil
}

func summary(w io.Writer, cfg sampler.Config, rec *recording) {
	sess, b, st, elapsed := rec.sess, rec.b, rec.sess.Stats(), rec.elapsed
	fmt.Fprintf(w, "cctop: %d samples in %.1fs (%s), %d threads, %d lost, %d throttled\n",
		b.samples, elapsed.Seconds(), describe(cfg), len(b.threads), st.Lost, st.Throttled)
	for _, n := range sess.Notes() {
		fmt.Fprintf(w, "cctop: note: %s\n", n)
	}
	if len(cfg.Argv) > 0 {
		if code, sig := sess.ExitCode(); sig != "" {
			fmt.Fprintf(w, "cctop: %s was killed by %s\n", filepath.Base(cfg.Argv[0]), sig)
		} else if code >= 0 {
			fmt.Fprintf(w, "cctop: %s exited with status %d\n", filepath.Base(cfg.Argv[0]), code)
		}
	} else if sess.Exited() {
		fmt.Fprintf(w, "cctop: process %d exited\n", cfg.PID)
	}
	flat := b.tree.Flat()
	total := b.tree.Total()
	if len(flat) > 0 && total.Time > 0 {
		fmt.Fprintf(w, "%8s %8s  %s\n", "self%", "total%", "function (top 10 by self time)")
		for i, f := range flat {
			if i == 10 || f.Self.Time == 0 {
				break
			}
			fn := b.tree.Func(f.Func)
			fmt.Fprintf(w, "%7.2f%% %7.2f%%  %s\n",
				100*float64(f.Self.Time)/float64(total.Time), 100*float64(f.Total.Time)/float64(total.Time), fn.Name)
		}
	}
}

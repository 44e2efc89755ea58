// Command stackshare measures a profile's stacks for bench/jit.sh: of all
// samples, the share whose outermost frame matches -root, whose leaf
// matches -self, and that have a frame matching each -in pattern. It reads
// a pprof profile (cctop's), or with -perf the text of `perf script -F
// ip,sym` (frames leaf first, a blank line between samples), so that cctop
// and perf are measured by the same rules.
//
// usage: stackshare [-perf] [-root RE] [-self RE] [-in RE]... FILE|-
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"

	"github.com/google/pprof/profile"
)

type multi []string

func (m *multi) String() string     { return strings.Join(*m, ",") }
func (m *multi) Set(s string) error { *m = append(*m, s); return nil }

func main() {
	perf := flag.Bool("perf", false, "read `perf script -F ip,sym` text")
	root := flag.String("root", "", "outermost frame `RE`")
	self := flag.String("self", "", "leaf frame `RE`")
	var in multi
	flag.Var(&in, "in", "a frame `RE` anywhere in the stack (repeatable)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: stackshare [-perf] [-root RE] [-self RE] [-in RE]... FILE|-")
		os.Exit(2)
	}
	var r io.Reader = os.Stdin
	if a := flag.Arg(0); a != "-" {
		f, err := os.Open(a)
		if err != nil {
			fail(err)
		}
		defer f.Close()
		r = f
	}
	stacks, err := read(r, *perf)
	if err != nil {
		fail(err)
	}
	re := func(s string) *regexp.Regexp {
		if s == "" {
			return nil
		}
		return regexp.MustCompile(s)
	}
	rootRE, selfRE := re(*root), re(*self)
	ins := make([]*regexp.Regexp, len(in))
	for i, s := range in {
		ins[i] = re(s)
	}
	var total, rooted, selfN int64
	inN := make([]int64, len(in))
	for _, s := range stacks {
		total += s.n
		if len(s.names) == 0 {
			continue
		}
		if rootRE != nil && rootRE.MatchString(s.names[len(s.names)-1]) {
			rooted += s.n
		}
		if selfRE != nil && selfRE.MatchString(s.names[0]) {
			selfN += s.n
		}
		for i, x := range ins {
			for _, name := range s.names {
				if x.MatchString(name) {
					inN[i] += s.n
					break
				}
			}
		}
	}
	pct := func(n int64) string { return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(max(total, 1))) }
	fmt.Printf("samples %d", total)
	if rootRE != nil {
		fmt.Printf(" root %s", pct(rooted))
	}
	if selfRE != nil {
		fmt.Printf(" self %s", pct(selfN))
	}
	for i := range ins {
		fmt.Printf(" in%d %s", i+1, pct(inN[i]))
	}
	fmt.Println()
}

type stack struct {
	names []string // leaf first
	n     int64
}

func read(r io.Reader, perf bool) ([]stack, error) {
	if !perf {
		p, err := profile.Parse(r)
		if err != nil {
			return nil, err
		}
		var out []stack
		for _, s := range p.Sample {
			var names []string
			for _, loc := range s.Location {
				for _, ln := range loc.Line {
					names = append(names, ln.Function.Name)
				}
			}
			out = append(out, stack{names, s.Value[0]})
		}
		return out, nil
	}
	var out []stack
	var cur []string
	in := false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	flush := func() {
		if in {
			out = append(out, stack{cur, 1})
		}
		cur, in = nil, false
	}
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case line[0] == ' ' || line[0] == '\t':
			in = true
			f := strings.Fields(line)
			if len(f) < 2 {
				cur = append(cur, "[unknown]")
				continue
			}
			name := strings.Join(f[1:], " ")
			if i := strings.LastIndex(name, "+0x"); i > 0 {
				name = name[:i]
			}
			cur = append(cur, name)
		default:
			flush()
			in = true
		}
	}
	flush()
	return out, sc.Err()
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "stackshare:", err)
	os.Exit(1)
}

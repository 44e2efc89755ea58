// Command ctxoverlap compares two profiles of the same program by calling
// context: each sample's stack (root first, physical frames, unnamed code
// as "[unknown]") is a key, and the overlap is 100 * the sum over keys of
// min(share in a, share in b), as in design §4 but over whole contexts
// rather than functions. It also reports the share of each profile's
// samples whose stack contains a given function (-reach).
//
// Inputs are `perf script -F tid,ip,sym,dso --no-inline` output and cctop
// pprof files (gzipped profile.proto).
//
// usage: go run ./bench/ctxoverlap [-reach FUNC] A B
package main

import (
	"bufio"
	"cmp"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

func main() {
	reach := flag.String("reach", "", "report the share of samples whose stack contains `FUNC`")
	diffs := flag.Int("diff", 0, "list the `N` contexts whose shares differ most")
	flag.Parse()
	if flag.NArg() != 2 {
		fmt.Fprintln(os.Stderr, "usage: ctxoverlap [-reach FUNC] A B (perf script text or cctop pprof)")
		os.Exit(2)
	}
	var dists [2]map[string]float64
	for i, path := range flag.Args() {
		d, reached, n, err := load(path, *reach)
		if err != nil {
			fmt.Fprintf(os.Stderr, "ctxoverlap: %s: %v\n", path, err)
			os.Exit(1)
		}
		dists[i] = d
		fmt.Printf("%s: %d samples, %d contexts", path, int(n), len(d))
		if *reach != "" {
			fmt.Printf(", %.1f%% reach %s", 100*reached/n, *reach)
		}
		fmt.Println()
	}
	o := 0.0
	for k, a := range dists[0] {
		o += min(a, dists[1][k])
	}
	fmt.Printf("context overlap: %.1f%%\n", 100*o)
	if *diffs > 0 {
		keys := map[string]bool{}
		for _, d := range dists {
			for k := range d {
				keys[k] = true
			}
		}
		list := slices.Collect(maps.Keys(keys))
		gap := func(k string) float64 { return math.Abs(dists[0][k] - dists[1][k]) }
		slices.SortFunc(list, func(a, b string) int { return cmp.Compare(gap(b), gap(a)) })
		for _, k := range list[:min(*diffs, len(list))] {
			fmt.Printf("%6.2f%% %6.2f%%  %s\n", 100*dists[0][k], 100*dists[1][k], k)
		}
	}
}

// load returns the share of samples per context, the samples reaching
// fn, and the sample count.
func load(path, fn string) (map[string]float64, float64, float64, error) {
	counts := map[string]float64{}
	var reached, n float64
	add := func(leafFirst []string, w float64) {
		if len(leafFirst) == 0 || w == 0 {
			return
		}
		slices.Reverse(leafFirst)
		counts[strings.Join(leafFirst, ";")] += w
		n += w
		if fn != "" && slices.Contains(leafFirst, fn) {
			reached += w
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, 0, err
	}
	defer f.Close()
	if p, err := profile.Parse(f); err == nil {
		for _, s := range p.Sample {
			var names []string
			for _, loc := range s.Location {
				if len(loc.Line) == 0 {
					names = append(names, "[unknown]")
					continue
				}
				// The physical frame: a Location's last line.
				names = append(names, norm(loc.Line[len(loc.Line)-1].Function.Name))
			}
			if len(names) > 0 && names[len(names)-1] == "[unknown]" && len(names) == 1 {
				continue
			}
			names = slices.DeleteFunc(names, func(s string) bool { return s == "[truncated]" })
			add(names, float64(s.Value[0]))
		}
	} else {
		if _, err := f.Seek(0, 0); err != nil {
			return nil, 0, 0, err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
		var stack []string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.TrimSpace(line) == "":
				add(stack, 1)
				stack = nil
			case line[0] == '\t' || line[0] == ' ' && strings.HasPrefix(strings.TrimSpace(line), "0") || strings.HasPrefix(line, "\t"):
				fields := strings.Fields(line)
				if len(fields) >= 2 {
					name := strings.Join(fields[1:len(fields)-1], " ")
					if i := strings.LastIndex(name, "+0x"); i > 0 {
						name = name[:i]
					}
					stack = append(stack, norm(name))
				}
			}
		}
		add(stack, 1)
		if err := sc.Err(); err != nil {
			return nil, 0, 0, err
		}
	}
	if n == 0 {
		return nil, 0, 0, fmt.Errorf("no samples")
	}
	for k := range counts {
		counts[k] /= n
	}
	return counts, reached, n, nil
}

// norm maps the tools' names for unnamed code ("[unknown]" in perf,
// "[module+0xOFFSET]" in cctop, "[vdso]" and the like in both) to one key.
func norm(name string) string {
	if name == "" || strings.HasPrefix(name, "[") {
		return "[unknown]"
	}
	return name
}

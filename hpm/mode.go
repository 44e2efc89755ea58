package hpm

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cctop/cctop/sampler"
)

// Mode is the --calls flag: where call counts should come from.
type Mode struct {
	Kind      string   // "auto", "hw", "none" or "uprobe"
	Functions []string // for "uprobe": the functions to probe, as given
}

func (m Mode) String() string {
	if m.Kind == "uprobe" {
		return "uprobe:" + strings.Join(m.Functions, ",")
	}
	return m.Kind
}

// ParseMode reads --calls: auto, hw, none, or uprobe:F1,F2,... where each F
// is a symbol as the binary spells it: a C name, a mangled C++ name, or a Go
// name such as github.com/x/y.(*T).M or pkg.Map[go.shape.int,go.shape.string].
func ParseMode(s string) (Mode, error) {
	switch s {
	case "auto", "hw", "none":
		return Mode{Kind: s}, nil
	}
	list, ok := strings.CutPrefix(s, "uprobe:")
	if !ok {
		if s == "uprobe" {
			return Mode{}, errors.New("--calls uprobe needs the functions to count: uprobe:FUNC[,FUNC...]")
		}
		return Mode{}, fmt.Errorf("--calls %q: want auto, hw, none or uprobe:FUNC[,FUNC...]", s)
	}
	if strings.TrimSpace(list) == "" {
		return Mode{}, errors.New("--calls uprobe: no functions given; want uprobe:FUNC[,FUNC...]")
	}
	funcs := splitFuncs(list)
	seen := map[string]bool{}
	var out []string
	for i, f := range funcs {
		f = strings.TrimSpace(f)
		if f == "" {
			return Mode{}, fmt.Errorf("--calls %q: function %d of %d is empty", s, i+1, len(funcs))
		}
		if !seen[f] {
			seen[f] = true
			out = append(out, f)
		}
	}
	return Mode{Kind: "uprobe", Functions: out}, nil
}

// splitFuncs splits at commas outside brackets and parentheses: Go generic
// instantiations have commas of their own. (C++ comes mangled, comma-free;
// angle brackets are not counted, since operator< would unbalance them.)
func splitFuncs(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '[', '(':
			depth++
		case ']', ')':
			if depth > 0 {
				depth--
			}
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// Source is the decision: where call counts come from, and why, in words the
// record summary and doctor print.
type Source struct {
	Kind      string      // "hw", "uprobe" or "none"
	Events    []CallEvent // for "hw": one per core PMU
	Functions []string    // for "uprobe": empty until chosen automatically
	Reason    string
	// HWMissing says in a few words why no hardware counter is used when
	// the machine has none to offer ("no hardware PMU here"); empty when
	// one is used, or would have been there for the asking.
	HWMissing string
}

// uprobeAvailable reports whether the uprobe PMU exists; a variable so
// tests can take it away.
var uprobeAvailable = func() error {
	if _, err := sampler.UprobeType(); err != nil {
		return err
	}
	return sampler.UprobesPermitted()
}

// Choose turns --calls into a Source. hwAvailable is ProbeHW's answer for
// cpu. Auto prefers hardware and falls back to uprobes on functions chosen
// later from the live profile; asking for hw where there is none is an
// error, because the user asked for something specific.
func Choose(m Mode, cpu CPU, hwAvailable error) (Source, error) {
	switch m.Kind {
	case "none":
		return Source{Kind: "none", Reason: "density correction off: --calls none"}, nil
	case "hw":
		if hwAvailable != nil {
			return Source{}, fmt.Errorf("--calls hw: %s; use --calls auto or uprobe:FUNC", hwWords(hwAvailable))
		}
		return hwSource(cpu, "--calls hw")
	case "uprobe":
		if len(m.Functions) == 0 {
			return Source{}, errors.New("--calls uprobe: no functions given; want uprobe:FUNC[,FUNC...]")
		}
		if err := uprobeAvailable(); err != nil {
			return Source{}, fmt.Errorf("--calls %s: %v", m, err)
		}
		s := Source{
			Kind:      "uprobe",
			Functions: m.Functions,
			Reason:    fmt.Sprintf("counting calls with uprobes on %s, as --calls asked", countFuncs(len(m.Functions))),
		}
		if hwAvailable != nil {
			s.HWMissing = shortHW(hwAvailable)
			s.Reason = s.HWMissing + "; " + s.Reason
		}
		return s, nil
	case "auto", "":
		if hwAvailable == nil {
			if s, err := hwSource(cpu, "auto"); err == nil {
				return s, nil
			}
		}
		missing := "no hardware call counter here"
		if hwAvailable != nil {
			missing = shortHW(hwAvailable)
		}
		if err := uprobeAvailable(); err != nil {
			reason := fmt.Sprintf("density correction off: %s, and no uprobes either (%v)", hwWords(hwAvailable), err)
			var perm *sampler.PermissionError
			if errors.As(err, &perm) {
				reason = fmt.Sprintf("density correction off: %s, and %s: %s", missing, perm.What, perm.Fix)
			}
			return Source{Kind: "none", Reason: reason, HWMissing: missing}, nil
		}
		return Source{
			Kind: "uprobe",
			Reason: fmt.Sprintf("%s; counting calls with uprobes instead (automatic: the %d hottest functions)",
				hwWords(hwAvailable), DefaultAutoK),
			HWMissing: missing,
		}, nil
	}
	return Source{}, fmt.Errorf("unknown --calls mode %q", m.Kind)
}

func hwSource(cpu CPU, why string) (Source, error) {
	evs, reason := CallEvents(cpu, PMUType)
	if evs == nil {
		return Source{}, fmt.Errorf("%s: %s", why, reason)
	}
	return Source{Kind: "hw", Events: evs, Reason: "hardware call counter: " + describeEvents(evs)}, nil
}

// hwWords is the full reason hardware is out, for sentences: the short
// form, then what the kernel said.
func hwWords(err error) string {
	if err == nil {
		return "no hardware call counter here"
	}
	return shortHW(err) + ": " + strings.TrimPrefix(err.Error(), ErrNoPMU.Error()+": ")
}

// shortHW is the few words the summary line has room for.
func shortHW(err error) string {
	if errors.Is(err, ErrNoPMU) {
		return "no hardware PMU here"
	}
	return "no hardware call counter here"
}

func countFuncs(n int) string {
	if n == 1 {
		return "1 function"
	}
	return fmt.Sprintf("%d functions", n)
}

// Describe is the one line the record summary and doctor print about the
// call counter, e.g. "call counter: uprobes on 2 functions (densityLeaf,
// densityPhaseC), ~1.2 µs per hit; no hardware PMU here". cost is the
// measured price of one uprobe hit; 0 leaves it out.
func Describe(s Source, cost time.Duration) string {
	var b strings.Builder
	b.WriteString("call counter: ")
	switch s.Kind {
	case "hw":
		b.WriteString(describeEvents(s.Events))
	case "uprobe":
		if len(s.Functions) == 0 {
			fmt.Fprintf(&b, "uprobes on the %d hottest functions (chosen from the live profile)", DefaultAutoK)
		} else {
			fmt.Fprintf(&b, "uprobes on %s (%s)", countFuncs(len(s.Functions)), shortNames(s.Functions))
		}
		if cost > 0 {
			fmt.Fprintf(&b, ", ~%s per hit", formatCost(cost))
		}
	default:
		b.WriteString("none")
		if s.Reason != "" {
			fmt.Fprintf(&b, " (%s)", s.Reason)
		}
	}
	if s.HWMissing != "" && s.Kind != "none" {
		b.WriteString("; " + s.HWMissing)
	}
	return b.String()
}

// shortNames drops Go import paths (github.com/x/y.F reads as y.F) and
// shortens long lists: the line has to fit a terminal.
func shortNames(funcs []string) string {
	const show = 4
	var names []string
	for i, f := range funcs {
		if i == show-1 && len(funcs) > show {
			names = append(names, fmt.Sprintf("+%d more", len(funcs)-i))
			break
		}
		if j := strings.LastIndex(f, "/"); j >= 0 && !strings.Contains(f[:j], "(") && !strings.Contains(f[:j], "[") {
			f = f[j+1:]
		}
		names = append(names, f)
	}
	return strings.Join(names, ", ")
}

// formatCost prints a per-hit cost with two significant figures or so:
// "0.85 µs", "1.2 µs", "14 µs".
func formatCost(d time.Duration) string {
	us := float64(d) / float64(time.Microsecond)
	switch {
	case us < 1:
		return fmt.Sprintf("%.2f µs", us)
	case us < 10:
		return fmt.Sprintf("%.1f µs", us)
	}
	return fmt.Sprintf("%.0f µs", us)
}

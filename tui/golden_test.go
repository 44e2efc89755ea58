package tui

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/cctop/cctop/cct"
)

// -update rewrites testdata/*.golden. x/exp/golden (imported by teatest) defines the
// same flag; it is defined here only if no import did.
func init() {
	if flag.Lookup("update") == nil {
		flag.Bool("update", false, "rewrite testdata/*.golden")
	}
}

func updating() bool { return flag.Lookup("update").Value.String() == "true" }

// press is a key press as the terminal would deliver it: text keys carry their text,
// special keys only a code.
func press(k string) tea.KeyPressMsg {
	switch k {
	case "up":
		return tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		return tea.KeyPressMsg{Code: tea.KeyDown}
	case "left":
		return tea.KeyPressMsg{Code: tea.KeyLeft}
	case "right":
		return tea.KeyPressMsg{Code: tea.KeyRight}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "space":
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	case "backspace":
		return tea.KeyPressMsg{Code: tea.KeyBackspace}
	case "pgdown":
		return tea.KeyPressMsg{Code: tea.KeyPgDown}
	case "pgup":
		return tea.KeyPressMsg{Code: tea.KeyPgUp}
	case "end":
		return tea.KeyPressMsg{Code: tea.KeyEnd}
	case "home":
		return tea.KeyPressMsg{Code: tea.KeyHome}
	case "ctrl+c":
		return tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	}
	r := []rune(k)
	if len(r) != 1 {
		panic("press: unknown key " + k)
	}
	return tea.KeyPressMsg{Code: r[0], Text: k}
}

// send feeds msgs to m through Update, as the program would (commands are not run:
// the tests stay free of timers).
func send(m *Model, msgs ...tea.Msg) {
	for _, msg := range msgs {
		m.Update(msg)
	}
}

func keys(ks ...string) []tea.Msg {
	var out []tea.Msg
	for _, k := range ks {
		out = append(out, press(k))
	}
	return out
}

// typed is the key presses of typing s.
func typed(s string) []tea.Msg {
	var out []tea.Msg
	for _, r := range s {
		out = append(out, tea.KeyPressMsg{Code: r, Text: string(r)})
	}
	return out
}

func screen(m *Model) string { return ansi.Strip(m.View().Content) }

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if updating() {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./tui -update to create it)", err)
	}
	if got != string(want) {
		gl, wl := strings.Split(got, "\n"), strings.Split(string(want), "\n")
		for i := range max(len(gl), len(wl)) {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\n got: %q\nwant: %q\n\nwhole screen:\n%s", path, i+1, g, w, got)
			}
		}
	}
}

func TestGolden(t *testing.T) {
	steps := []goldenStep{
		{"first", nil},
		{"collapsed", keys("c")},
		{"expanded", keys("c", "e")},
		{"unchained", keys("c", "e", "z")},
		{"bottomup", keys("i", "e")},
		{"flat", keys("t")},
		{"split", keys("c", "s", "e", "down", "down", "right", "down", "e")},
		{"focus", keys("c", "e", "down", "down", "f")},
		{"help", keys("?")},
		{"search", append(keys("/"), typed("mem")...)},
		{"searchjump", append(append(keys("/"), typed("memmove")...), keys("enter", "n")...)},
		{"thread", keys("T", "T", "e")},
		{"error", []tea.Msg{ErrorMsg{errors.New("perf_event_open: permission denied (perf_event_paranoid is 3)")}}},
		{"counters", keys("C")},
	}
	runGoldens(t, "", func(*testing.T) Snapshot { return testSnapshot() }, steps, [][2]int{{80, 24}, {160, 50}})
}

// goldenStep is a screen of a golden test: the messages that lead to it.
type goldenStep struct {
	name string
	msgs []tea.Msg
}

// runGoldens checks each step's screen at each size against testdata/PREFIXstep_WxH.golden.
func runGoldens(t *testing.T, prefix string, snap func(*testing.T) Snapshot, steps []goldenStep, sizes [][2]int) {
	for _, st := range steps {
		for _, sz := range sizes {
			name := fmt.Sprintf("%s%s_%dx%d", prefix, st.name, sz[0], sz[1])
			t.Run(name, func(t *testing.T) {
				m := New(newFake(snap(t)), Options{Width: sz[0], Height: sz[1]})
				send(m, st.msgs...)
				got := screen(m)
				checkScreen(t, got, sz[0], sz[1])
				checkGolden(t, name, got)
			})
		}
	}
}

// TestGoldenSmall is the counters panel on a small terminal: it takes header lines
// rather than go, and the tree keeps three rows.
func TestGoldenSmall(t *testing.T) {
	m := New(newFake(testSnapshot()), Options{Width: 40, Height: 10})
	send(m, keys("C")...)
	got := screen(m)
	checkScreen(t, got, 40, 10)
	checkGolden(t, "counters_40x10", got)
}

// checkScreen asserts the frame is exactly the terminal's size at most: h lines, none
// wider than w.
func checkScreen(t *testing.T, s string, w, h int) {
	t.Helper()
	if s == "" {
		return
	}
	lines := strings.Split(s, "\n")
	if len(lines) > h {
		t.Errorf("%d lines on a %d-line terminal", len(lines), h)
	}
	for i, l := range lines {
		if n := ansi.StringWidth(l); n > w {
			t.Errorf("line %d is %d cells wide on a %d-cell terminal: %q", i+1, n, w, l)
		}
	}
}

// demoFile is a profile of `cctop demo` exported from the live TUI (x) while it
// counted calls with probes: real Go, runtime and kernel frames, [cctop probes], and
// call estimates.
const demoFile = "testdata/demo.pb.gz"

// demoFileSnapshot is the snapshot the live demo shows for demoFile: calls under the
// correction, compared with the uncorrected samples, and a live session's header.
func demoFileSnapshot(t *testing.T) Snapshot {
	t.Helper()
	f, err := os.Open(demoFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tree, meta, err := cct.ReadProfile(f)
	if err != nil {
		t.Fatal(err)
	}
	if !meta.Calls {
		t.Fatalf("%s has no call estimates", demoFile)
	}
	self, cmp := make([]float64, tree.Len()), make([]float64, tree.Len())
	for id := range tree.Len() {
		n := tree.Node(cct.NodeID(id))
		self[id], cmp[id] = float64(n.Self.Calls), float64(n.Self.Samples)
	}
	probes, all := tree.SamplesOf(cct.ProbesName), tree.Total().Samples
	threads := make([]cct.Thread, 0, len(meta.Threads))
	for _, th := range meta.Threads {
		threads = append(threads, th)
	}
	slices.SortFunc(threads, func(a, b cct.Thread) int { return int(a.TID) - int(b.TID) })
	c := testCounters()
	c.Source = "call counter: uprobes on the 4 hottest functions (chosen from the live profile), ~0.6µs per hit; armed on workload.densityLeaf, workload.densityPhaseD, workload.densityPhaseC, workload.densityRounds"
	c.Params = "trigger time · cpu-clock at 999 Hz · alpha 0 · density on · latency on · unwind auto"
	return Snapshot{
		Tree: tree, Self: self, Compare: cmp, Metric: "calls", Threads: threads, Seq: 1, Counters: c,
		Header: Header{
			Target: "cctop workload density -loop -size 20000 (pid 4242)", Threads: len(threads), Rate: 1003,
			Samples: uint64(all), Lost: 0, Unwound: 100, Counter: c.Source, CounterBrief: "uprobes on 4 functions",
			Trigger: "time", Alpha: 0, Density: true, Latency: true, Comparison: "uncorrected samples",
			Overlap: 84.2, ProbeCost: 100 * float64(probes) / float64(max(all, 1)), State: "live",
		},
	}
}

// TestGoldenDemo is the demo's first screen, and after e, t and C, at the size of a
// fresh SSH session and two bigger terminals.
func TestGoldenDemo(t *testing.T) {
	steps := []goldenStep{{"first", nil}, {"e", keys("e")}, {"t", keys("t")}, {"C", keys("C")}}
	runGoldens(t, "demo_", demoFileSnapshot, steps, [][2]int{{80, 24}, {120, 40}, {200, 60}})
}

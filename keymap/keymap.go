// Package keymap owns cctop's key bindings: which keys do what in the TUI, and how they
// are grouped in the short and full help. The TUI matches keys only through a KeyMap, so
// rebinding a key is one change here.
package keymap

import "charm.land/bubbles/v2/key"

// KeyMap is every binding of the tree view. It satisfies help.KeyMap (bubbles/v2/help).
// A KeyMap is a value: callers that want other keys copy DefaultKeyMap and change it.
type KeyMap struct {
	// Moving the cursor.
	Up, Down, PageUp, PageDown, Home, End key.Binding

	// Folding.
	Collapse    key.Binding // collapse, or go to the parent when already collapsed
	Expand      key.Binding
	Toggle      key.Binding
	ExpandHot   key.Binding // expand the hot path below the cursor
	CollapseAll key.Binding

	// Focus and search.
	Focus, Unfocus               key.Binding
	Search, NextMatch, PrevMatch key.Binding

	// What the tree shows.
	Invert, Flat, Threads, Split, Metric key.Binding
	// SampleType steps through a saved profile's sample types (pprof's
	// sample_index): alloc_space, inuse_space, ... of a heap profile.
	SampleType key.Binding
	// Inline shows inlined functions as frames of their own (logical frames, the
	// default) or merged into the function they were inlined into (physical frames).
	Inline key.Binding
	// Names shows full or short function names.
	Names key.Binding
	// Chains shows runs of only children as one row ("a › … › z (9)") or
	// as a row per frame.
	Chains key.Binding
	// Probes shows the [cctop probes] frame as rows in every view, or
	// leaves it out (the default: it is the profiler's cost).
	Probes key.Binding
	// Processes merges the processes at the top of a profile of several
	// by name (perf's --sort comm), or shows each with its pid.
	Processes key.Binding

	// Annotate opens the annotate view of the cursor row's function: its
	// source lines and instructions, each with its share.
	Annotate key.Binding

	// Counters shows or hides the counters panel: call density per thread over time,
	// the sampling latency and the parameters in force.
	Counters key.Binding

	// Sampling and correction parameters: these become Source actions.
	Density, Latency, Flow, AlphaUp, AlphaDown, RateUp, RateDown key.Binding
	Trigger, Comparison, Baseline, Pause, Reset, Export          key.Binding
	// Mode steps the time shown through on-CPU, wall-clock and off-CPU;
	// Idle hides or shows the threads that were almost always off the CPU.
	Mode, Idle key.Binding

	Help, Quit key.Binding

	// Prompt is in effect while a text prompt (search, export path) has the keys.
	Prompt PromptKeyMap
	// AnnotateView is in effect while the annotate view is open, with the
	// moving keys above.
	AnnotateView AnnotateKeyMap
}

// AnnotateKeyMap is the annotate view's own keys.
type AnnotateKeyMap struct {
	Back   key.Binding // back to the tree
	Disasm key.Binding // source lines or instructions
	Hot    key.Binding // the cursor to the hottest row
}

// PromptKeyMap is the bindings of a text prompt; every other key is text.
type PromptKeyMap struct {
	Accept, Cancel key.Binding
}

// DefaultKeyMap returns cctop's default bindings.
func DefaultKeyMap() KeyMap {
	b := func(keys []string, helpKey, desc string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(helpKey, desc))
	}
	k := func(keys ...string) []string { return keys }
	return KeyMap{
		Up:       b(k("up", "k"), "↑/k", "up"),
		Down:     b(k("down", "j"), "↓/j", "down"),
		PageUp:   b(k("pgup"), "pgup", "page up"),
		PageDown: b(k("pgdown"), "pgdn", "page down"),
		Home:     b(k("home"), "home", "first row"),
		End:      b(k("end"), "end", "last row"),

		Collapse:    b(k("left", "h"), "←/h", "collapse/parent"),
		Expand:      b(k("right", "l"), "→/l", "expand"),
		Toggle:      b(k("enter", "space"), "enter/space", "toggle fold"),
		ExpandHot:   b(k("e"), "e", "expand hot path"),
		CollapseAll: b(k("c"), "c", "collapse all"),

		Focus:     b(k("f"), "f", "focus subtree"),
		Unfocus:   b(k("F", "backspace"), "F/bksp", "unfocus"),
		Search:    b(k("/"), "/", "search"),
		NextMatch: b(k("n"), "n", "next match"),
		PrevMatch: b(k("N"), "N", "previous match"),

		Invert:     b(k("i"), "i", "invert (bottom-up)"),
		Flat:       b(k("t"), "t", "flat top functions"),
		Threads:    b(k("T"), "T", "thread filter"),
		Split:      b(k("s"), "s", "split call sites"),
		Metric:     b(k("m"), "m", "metric time/calls"),
		SampleType: b(k("y"), "y", "cycle sample type"),
		Inline:     b(k("I"), "I", "inlined frames on/off"),
		Names:      b(k("v"), "v", "full/short names"),
		Chains:     b(k("z"), "z", "chains on/off"),
		Probes:     b(k("P"), "P", "probe cost rows"),
		Processes:  b(k("M"), "M", "processes by name/pid"),

		Counters: b(k("C"), "C", "counters panel"),
		Annotate: b(k("a"), "a", "annotate: lines and instructions"),

		Density:    b(k("d"), "d", "density correction"),
		Latency:    b(k("L"), "L", "latency correction"),
		Flow:       b(k("w"), "w", "flow correction (FDOM)"),
		AlphaUp:    b(k("+", "="), "+", "alpha up"),
		AlphaDown:  b(k("-"), "-", "alpha down"),
		RateUp:     b(k("]"), "]", "rate up"),
		RateDown:   b(k("["), "[", "rate down"),
		Trigger:    b(k("g"), "g", "cycle trigger"),
		Comparison: b(k("o"), "o", "cycle comparison"),
		Mode:       b(k("W"), "W", "mode cpu/wall/off-CPU"),
		Idle:       b(k("H"), "H", "hide idle threads"),
		Baseline:   b(k("b"), "b", "take baseline"),
		Pause:      b(k("p"), "p", "pause"),
		Reset:      b(k("r"), "r", "reset"),
		Export:     b(k("x"), "x", "export"),

		Help: b(k("?"), "?", "help"),
		Quit: b(k("q", "ctrl+c"), "q", "quit"),

		Prompt: PromptKeyMap{
			Accept: b(k("enter"), "enter", "accept"),
			Cancel: b(k("esc", "ctrl+c"), "esc", "cancel"),
		},
		AnnotateView: AnnotateKeyMap{
			Back:   b(k("esc", "a", "backspace"), "esc", "back to the tree"),
			Disasm: b(k("d", "tab"), "d/tab", "source/disassembly"),
			Hot:    b(k("e"), "e", "hottest row"),
		},
	}
}

// ShortHelp is the footer, most useful first, in a word each: the footer shows as many
// as its width has room for, whole, so the first five are the ones 80 columns show.
// Folding, the flat view, search, callers and help are what a first-time user needs to
// find a hot spot and the rest of the keys; the others follow in the order they are
// reached for.
func (k KeyMap) ShortHelp() []key.Binding {
	return []key.Binding{
		brief(k.Toggle, "fold"), brief(k.Flat, "flat"), k.Search, brief(k.Invert, "callers"),
		k.Help, k.Quit, brief(k.ExpandHot, "hot path"), brief(k.Chains, "chains"),
		brief(k.Counters, "counters"), brief(k.Metric, "metric"), brief(k.Threads, "threads"),
		brief(k.Annotate, "annotate"), brief(k.Names, "names"), brief(k.Focus, "focus"), brief(k.Inline, "inlined"),
		k.Pause, brief(k.Comparison, "compare"), k.Export,
	}
}

// brief is b described in a word, for the footer; the help screen has the full description.
func brief(b key.Binding, desc string) key.Binding {
	b.SetHelp(b.Help().Key, desc)
	return b
}

// FullHelp is the `?` screen, one column per concern: moving, folding, searching and
// focusing, what the tree shows, the counters and corrections, the session.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End, k.Help, k.Quit},
		{k.Collapse, k.Expand, k.Toggle, k.ExpandHot, k.CollapseAll},
		{k.Search, k.NextMatch, k.PrevMatch, k.Focus, k.Unfocus, k.Annotate},
		{k.Invert, k.Flat, k.Split, k.Inline, k.Names, k.Chains, k.Probes, k.Threads, k.Metric, k.SampleType, k.Processes},
		{k.Counters, k.Density, k.Latency, k.Flow, k.AlphaUp, k.AlphaDown, k.RateUp, k.RateDown},
		{k.Trigger, k.Mode, k.Idle, k.Comparison, k.Baseline, k.Pause, k.Reset, k.Export},
	}
}

// ShortHelp is the annotate view's own keys in the footer, each in a word
// so that help and quit still fit on 80 columns; up, down and the pages
// move as in the tree.
func (k AnnotateKeyMap) ShortHelp() []key.Binding {
	return []key.Binding{brief(k.Back, "back"), brief(k.Disasm, "source/disasm"), brief(k.Hot, "hottest")}
}

// FullHelp is the annotate view's own keys on the `?` screen.
func (k AnnotateKeyMap) FullHelp() []key.Binding { return []key.Binding{k.Back, k.Disasm, k.Hot} }

// ShortHelp is the footer while a prompt has the keys.
func (k PromptKeyMap) ShortHelp() []key.Binding { return []key.Binding{k.Accept, k.Cancel} }

// FullHelp is ShortHelp as one column.
func (k PromptKeyMap) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

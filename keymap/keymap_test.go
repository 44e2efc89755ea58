package keymap

import (
	"reflect"
	"testing"

	"charm.land/bubbles/v2/key"
)

// bindings is every binding of the tree view, by field name.
func bindings(k KeyMap) map[string]key.Binding {
	out := map[string]key.Binding{}
	v := reflect.ValueOf(k)
	for i := range v.NumField() {
		if b, ok := v.Field(i).Interface().(key.Binding); ok {
			out[v.Type().Field(i).Name] = b
		}
	}
	return out
}

func TestDefaultKeyMap(t *testing.T) {
	k := DefaultKeyMap()
	owner := map[string]string{}
	for name, b := range bindings(k) {
		if len(b.Keys()) == 0 || b.Help().Key == "" || b.Help().Desc == "" {
			t.Errorf("%s has no keys or no help", name)
		}
		for _, s := range b.Keys() {
			if o, ok := owner[s]; ok {
				t.Errorf("%q is bound to both %s and %s", s, o, name)
			}
			owner[s] = name
		}
	}
	// The keys the TUI documents, as Bubble Tea v2 names them.
	for s, want := range map[string]string{
		"up": "Up", "k": "Up", "down": "Down", "j": "Down", "pgup": "PageUp", "pgdown": "PageDown",
		"home": "Home", "end": "End", "left": "Collapse", "h": "Collapse", "right": "Expand", "l": "Expand",
		"enter": "Toggle", "space": "Toggle", "e": "ExpandHot", "c": "CollapseAll", "f": "Focus",
		"F": "Unfocus", "backspace": "Unfocus", "/": "Search", "n": "NextMatch", "N": "PrevMatch",
		"i": "Invert", "t": "Flat", "T": "Threads", "s": "Split", "m": "Metric", "d": "Density",
		"L": "Latency", "+": "AlphaUp", "-": "AlphaDown", "]": "RateUp", "[": "RateDown", "g": "Trigger",
		"o": "Comparison", "b": "Baseline", "p": "Pause", "r": "Reset", "x": "Export", "C": "Counters", "?": "Help",
		"I": "Inline", "v": "Names", "z": "Chains", "P": "Probes", "M": "Processes",
		"q": "Quit", "ctrl+c": "Quit",
	} {
		if owner[s] != want {
			t.Errorf("%q is bound to %q, want %s", s, owner[s], want)
		}
	}
}

// Every binding is in the full help exactly once, and the short help is part of it.
func TestHelpGroups(t *testing.T) {
	k := DefaultKeyMap()
	seen := map[string]int{}
	for _, g := range k.FullHelp() {
		for _, b := range g {
			seen[b.Help().Desc]++
		}
	}
	for name, b := range bindings(k) {
		if seen[b.Help().Desc] != 1 {
			t.Errorf("%s appears %d times in the full help", name, seen[b.Help().Desc])
		}
	}
	// The footer describes its bindings in a word: they are the full help's by their keys.
	inFull := map[string]bool{}
	for _, g := range k.FullHelp() {
		for _, b := range g {
			inFull[b.Help().Key] = true
		}
	}
	for _, b := range k.ShortHelp() {
		if !inFull[b.Help().Key] {
			t.Errorf("short help %q (%s) is not in the full help", b.Help().Key, b.Help().Desc)
		}
	}
	if len(k.Prompt.ShortHelp()) != 2 || len(k.Prompt.FullHelp()) != 1 {
		t.Error("prompt help")
	}
}

// The annotate view's keys: documented, none bound twice, none taken from
// the moving keys it shares with the tree, each in its footer and help.
func TestAnnotateKeyMap(t *testing.T) {
	k := DefaultKeyMap()
	a := k.AnnotateView
	owner := map[string]string{}
	for name, b := range map[string]key.Binding{"Back": a.Back, "Disasm": a.Disasm, "Hot": a.Hot} {
		if b.Help().Key == "" || b.Help().Desc == "" {
			t.Errorf("%s has no help", name)
		}
		for _, s := range b.Keys() {
			if o, ok := owner[s]; ok {
				t.Errorf("%q is bound to both %s and %s", s, o, name)
			}
			owner[s] = name
		}
	}
	for s, want := range map[string]string{"esc": "Back", "a": "Back", "d": "Disasm", "tab": "Disasm", "e": "Hot"} {
		if owner[s] != want {
			t.Errorf("%q is bound to %q in the annotate view, want %s", s, owner[s], want)
		}
	}
	for _, b := range []key.Binding{k.Up, k.Down, k.PageUp, k.PageDown, k.Home, k.End, k.Help, k.Quit} {
		for _, s := range b.Keys() {
			if o, ok := owner[s]; ok {
				t.Errorf("%q moves in the annotate view and is its %s too", s, o)
			}
		}
	}
	short, full := a.ShortHelp(), a.FullHelp()
	if len(short) != len(full) {
		t.Fatalf("footer %d keys, help %d", len(short), len(full))
	}
	for i := range short {
		if short[i].Help().Key != full[i].Help().Key || len(short[i].Help().Desc) > len(full[i].Help().Desc) {
			t.Errorf("footer %v is not help %v in brief", short[i].Help(), full[i].Help())
		}
	}
}

package tui

import (
	"bytes"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// waitFor polls cond for up to 5 s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("timed out waiting for %s", what)
}

// TestProgram runs the model in a real Bubble Tea program: the timer takes new
// snapshots, the Source's messages reach the status line, keys become actions, q quits.
func TestProgram(t *testing.T) {
	src := newFake(testSnapshot())
	src.msgs = make(chan tea.Msg, 4)
	m := newPlain(src, Options{Refresh: 5 * time.Millisecond, NoColor: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	contains := func(s string) func([]byte) bool {
		return func(b []byte) bool { return bytes.Contains(b, []byte(s)) }
	}
	teatest.WaitFor(t, tm.Output(), contains("main.main"), teatest.WithDuration(5*time.Second))

	tm.Send(press("e"))
	tm.Send(press("d"))
	src.msgs <- StatusMsg{"baseline taken"}
	teatest.WaitFor(t, tm.Output(), contains("baseline taken"), teatest.WithDuration(5*time.Second))

	next := testSnapshot()
	next.Seq = 2
	src.set(next)
	waitFor(t, "the action", func() bool { return len(src.done()) == 1 })
	// The next tick takes Seq 2; give it a few periods before quitting.
	time.Sleep(50 * time.Millisecond)
	tm.Send(press("q"))

	fm, ok := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if !ok {
		t.Fatal("final model is not a *Model")
	}
	if fm.snap.Seq != 2 {
		t.Errorf("the timer did not take the new snapshot: Seq %d", fm.snap.Seq)
	}
	if len(fm.tree.rows) <= 3 {
		t.Errorf("e did not expand, or the refresh lost it: %d rows", len(fm.tree.rows))
	}
	if got := src.done(); got[0] != (Action{Kind: ToggleDensity}) {
		t.Errorf("actions %v", got)
	}
	if fm.status.text != "baseline taken" {
		t.Errorf("status %q", fm.status.text)
	}
}

// TestProgramAnnotate: in a real program, a runs annotate's Build off the
// Update goroutine (the race detector watches the snapshot's tree read
// from two goroutines) and its listing reaches the screen: here, of a
// profile whose binaries are not on this machine, what is missing; a newer
// snapshot is annotated again a second on; d, esc and q as a user would.
func TestProgramAnnotate(t *testing.T) {
	src := newFake(testSnapshot())
	m := newPlain(src, Options{Refresh: 5 * time.Millisecond, NoColor: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(80, 24))
	contains := func(s ...string) func([]byte) bool {
		return func(b []byte) bool {
			for _, x := range s {
				if !bytes.Contains(b, []byte(x)) {
					return false
				}
			}
			return true
		}
	}
	teatest.WaitFor(t, tm.Output(), contains("main.main"), teatest.WithDuration(5*time.Second))
	tm.Send(press("a"))
	teatest.WaitFor(t, tm.Output(), contains("annotate main.main", "not found"), teatest.WithDuration(5*time.Second))
	next := testSnapshot()
	next.Seq = 2
	src.set(next)
	time.Sleep(annotateRebuild + time.Second) // the rebuild is due a second after the first build
	tm.Send(press("d"))
	teatest.WaitFor(t, tm.Output(), contains("instruction"), teatest.WithDuration(5*time.Second))
	tm.Send(press("esc"))
	tm.Send(press("q"))
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if fm.ann.on || fm.tree.cursor != 0 || !fm.annPane.disasm {
		t.Errorf("after d and esc: annotate view on %v (disassembly %v), tree cursor %d", fm.ann.on, fm.annPane.disasm, fm.tree.cursor)
	}
	if fm.ann.seq != 2 {
		t.Errorf("the listing shown was built from snapshot %d, want the newer 2", fm.ann.seq)
	}
}

package tui

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// frameModel shows a word of three letters that all change from one N to the next (the
// renderer writes only the cells that change), N set by its messages.
type frameModel struct{ n int }

type frameMsg int

func (m frameModel) Init() tea.Cmd { return nil }
func (m frameModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	if f, ok := msg.(frameMsg); ok {
		m.n = int(f)
	}
	return m, nil
}
func (m frameModel) View() tea.View { return tea.NewView(frameWord(m.n)) }

func frameWord(n int) string { return string([]byte{'a' + byte(n), 'k' + byte(n), 'u' + byte(n)}) }

// syncBuffer is the program's output, read while it writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) has(text string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Contains(s.b.Bytes(), []byte(text))
}

// TestRendererDrawsAtOnceAfterIdle (third_party/bubbletea): the renderer's ticker stops
// when no view comes, so that an idle live view is not woken fps times a second, and a
// view that comes after is drawn at once, not at the next tick. At one frame a second,
// with each message sent 1.2 s after the last drawing, Bubble Tea's own ticker draws
// every view 800 ms after its message.
func TestRendererDrawsAtOnceAfterIdle(t *testing.T) {
	out := &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := tea.NewProgram(frameModel{}, tea.WithContext(ctx), tea.WithInput(nil), tea.WithOutput(out),
		tea.WithFPS(1), tea.WithWindowSize(40, 5), tea.WithoutSignals())
	done := make(chan error, 1)
	go func() { _, err := p.Run(); done <- err }()
	waitFor(t, "the first frame", func() bool { return out.has(frameWord(0)) })
	for i := 1; i <= 4; i++ {
		time.Sleep(1200 * time.Millisecond) // past a frame: the renderer waits for a view
		sent := time.Now()
		p.Send(frameMsg(i))
		want := frameWord(i)
		for !out.has(want) && time.Since(sent) < 3*time.Second {
			time.Sleep(2 * time.Millisecond)
		}
		if d := time.Since(sent); d > 400*time.Millisecond {
			t.Errorf("%q drawn %v after its message, want at once", want, d.Round(time.Millisecond))
		}
	}
	p.Quit()
	select {
	case err := <-done:
		if err != nil && err != io.EOF {
			t.Errorf("program: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the program did not quit")
	}
}

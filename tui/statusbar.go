package tui

import (
	"github.com/charmbracelet/x/ansi"
)

// statusBar is the line above the footer: the last StatusMsg, or an error, which stays
// until the next key so that it cannot flash by unread.
type statusBar struct {
	st    *Styles
	width int
	text  string
	err   error
}

func (s *statusBar) SetSize(w, _ int) { s.width = max(w, 0) }

func (s *statusBar) setText(t string) { s.text = t }

func (s *statusBar) setErr(err error) { s.err = err }

// keyPressed ends the error state.
func (s *statusBar) keyPressed() { s.err = nil }

func (s *statusBar) View() string {
	if s.width <= 0 {
		return ""
	}
	if s.err != nil {
		return s.st.Error.Render(ansi.Truncate("error: "+printable(oneLine(s.err.Error())), s.width, "…"))
	}
	return s.st.Status.Render(ansi.Truncate(printable(oneLine(s.text)), s.width, "…"))
}

// oneLine keeps a message to its first line: the status bar is one line, and text is
// cut, never wrapped.
func oneLine(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' || s[i] == '\r' {
			return s[:i] + " …"
		}
	}
	return s
}

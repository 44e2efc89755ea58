package tui

import (
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// promptKind is what a prompt's answer is for.
type promptKind int

const (
	noPrompt promptKind = iota
	searchPrompt
	exportPrompt
)

// prompt is a one-line text input in place of the status line. While it is open it has
// the keys (and the footer shows its help).
type prompt struct {
	st    *Styles
	width int
	kind  promptKind
	input textinput.Model
}

func newPrompt(st *Styles) prompt {
	return prompt{st: st, input: textinput.New()}
}

func (p *prompt) SetSize(w, _ int) {
	p.width = max(w, 0)
	p.input.SetWidth(max(1, p.width-ansi.StringWidth(p.input.Prompt)-1))
}

func (p *prompt) active() bool { return p.kind != noPrompt }

// open starts a prompt with label and initial text.
func (p *prompt) open(kind promptKind, label, value string) tea.Cmd {
	p.kind = kind
	p.input.Prompt = label
	in := p.st.Input // styles may have changed with the background since the last prompt
	in.Focused.Prompt = p.st.Prompt
	p.input.SetStyles(in)
	p.input.SetValue(value)
	p.input.CursorEnd()
	p.SetSize(p.width, 1)
	return p.input.Focus()
}

// close ends the prompt and returns what was typed.
func (p *prompt) close() (promptKind, string) {
	k, v := p.kind, p.input.Value()
	p.kind = noPrompt
	p.input.Blur()
	return k, v
}

func (p *prompt) update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(msg)
	return cmd
}

func (p *prompt) View() string {
	if p.width <= 0 {
		return ""
	}
	return ansi.Truncate(p.input.View(), p.width, "")
}

package tui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
)

// Styles is every style the TUI uses, in one place so that a theme or NO_COLOR is one
// value. Sub-models hold a pointer to the root's copy, so a change of background
// re-styles everything at the next frame.
type Styles struct {
	Title       lipgloss.Style // the target, first in the header
	Label       lipgloss.Style // header labels ("rate", "samples")
	Value       lipgloss.Style // header values
	Warn        lipgloss.Style // header values that bias the profile (lost, throttled, low unwound)
	ColumnTitle lipgloss.Style // the tree's column header line

	Cursor   lipgloss.Style // the whole cursor row
	Hot      lipgloss.Style // total % of at least 50
	Warm     lipgloss.Style // total % of at least 10
	Percent  lipgloss.Style // other percentages
	Metric   lipgloss.Style // the metric value column
	DeltaUp  lipgloss.Style // Δ > 0: more than the comparison
	DeltaDn  lipgloss.Style // Δ < 0
	Glyph    lipgloss.Style // fold markers
	Name     lipgloss.Style
	Match    lipgloss.Style // names that match the search
	Inlined  lipgloss.Style // the inline marker
	CallSite lipgloss.Style
	Empty    lipgloss.Style // placeholder text in an empty pane

	Spark lipgloss.Style // the counters panel's sparklines and histogram
	Rule  lipgloss.Style // the line between the tree and the counters panel beside it

	Status lipgloss.Style
	Error  lipgloss.Style
	Prompt lipgloss.Style

	Help  help.Styles
	Input textinput.Styles

	sgrs *reducedStyles // the styles every frame draws again, reduced at the first frame
}

// DefaultStyles returns colored styles for a dark or light background. The colors are
// from the ANSI 16, which terminals theme to suit their background, plus a few 256-color
// greys picked per background.
func DefaultStyles(isDark bool) Styles {
	ld := lipgloss.LightDark(isDark)
	fg := lipgloss.NewStyle().Foreground
	dim := ld(lipgloss.Color("244"), lipgloss.Color("245"))
	s := Styles{
		Title:       lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("5")),
		Label:       fg(dim),
		Value:       lipgloss.NewStyle(),
		Warn:        fg(lipgloss.Color("3")).Bold(true),
		ColumnTitle: fg(dim).Bold(true),

		Cursor:   lipgloss.NewStyle().Reverse(true),
		Hot:      fg(lipgloss.Color("1")).Bold(true),
		Warm:     fg(lipgloss.Color("3")),
		Percent:  lipgloss.NewStyle(),
		Metric:   fg(dim),
		DeltaUp:  fg(lipgloss.Color("1")),
		DeltaDn:  fg(lipgloss.Color("2")),
		Glyph:    fg(dim),
		Name:     lipgloss.NewStyle(),
		Match:    fg(lipgloss.Color("6")).Bold(true).Underline(true),
		Inlined:  fg(lipgloss.Color("4")),
		CallSite: fg(dim),
		Empty:    fg(dim).Italic(true),

		Spark: fg(lipgloss.Color("6")),
		Rule:  fg(dim),

		Status: fg(dim),
		Error:  fg(lipgloss.Color("1")).Bold(true),
		Prompt: fg(lipgloss.Color("6")).Bold(true),

		Help:  help.DefaultStyles(isDark),
		Input: textinput.DefaultStyles(isDark),
	}
	s.Input.Cursor.Blink = false // a blinking cursor is a message every half second
	return s
}

// PlainStyles is for NO_COLOR: no colors at all. Reverse video and bold are kept where
// they carry meaning (the cursor row, errors) because NO_COLOR is about color, and a
// cursor nobody can see is no cursor.
func PlainStyles() Styles {
	p := lipgloss.NewStyle()
	in := textinput.Styles{
		Focused: textinput.StyleState{Text: p, Placeholder: p, Suggestion: p, Prompt: p},
		Blurred: textinput.StyleState{Text: p, Placeholder: p, Suggestion: p, Prompt: p},
	}
	return Styles{
		Title: p.Bold(true), Label: p, Value: p, Warn: p.Bold(true), ColumnTitle: p.Bold(true),
		Cursor: p.Reverse(true), Hot: p, Warm: p, Percent: p, Metric: p, DeltaUp: p, DeltaDn: p,
		Glyph: p, Name: p, Match: p.Underline(true), Inlined: p, CallSite: p, Empty: p,
		Spark: p, Rule: p,
		Status: p, Error: p.Bold(true), Prompt: p,
		Help: help.Styles{
			Ellipsis: p, ShortKey: p, ShortDesc: p, ShortSeparator: p,
			FullKey: p, FullDesc: p, FullSeparator: p,
		},
		Input: in,
	}
}

package symbol

import (
	"strconv"
	"strings"
)

// parseMapsLine parses one line of /proc/PID/maps:
//
//	55d4c7a5e000-55d4c7a60000 r-xp 00002000 08:01 1234      /usr/bin/cat
//
// exec reports the 'x' permission. ok is false for anything that does not
// look like a maps line; callers skip those rather than fail, because a
// kernel may add fields we do not know.
func parseMapsLine(line string) (m Mapping, exec, ok bool) {
	rng, rest := nextField(line)
	perms, rest := nextField(rest)
	off, rest := nextField(rest)
	dev, rest := nextField(rest)
	ino, rest := nextField(rest)

	lo, hi, found := strings.Cut(rng, "-")
	if !found {
		return Mapping{}, false, false
	}
	var err error
	if m.Start, err = strconv.ParseUint(lo, 16, 64); err != nil {
		return Mapping{}, false, false
	}
	if m.Limit, err = strconv.ParseUint(hi, 16, 64); err != nil || m.Limit <= m.Start {
		return Mapping{}, false, false
	}
	if len(perms) != 4 {
		return Mapping{}, false, false
	}
	if m.Offset, err = strconv.ParseUint(off, 16, 64); err != nil {
		return Mapping{}, false, false
	}
	maj, min, found := strings.Cut(dev, ":")
	if !found {
		return Mapping{}, false, false
	}
	major, err := strconv.ParseUint(maj, 16, 32)
	if err != nil {
		return Mapping{}, false, false
	}
	minor, err := strconv.ParseUint(min, 16, 32)
	if err != nil {
		return Mapping{}, false, false
	}
	m.Major, m.Minor = uint32(major), uint32(minor)
	if m.Inode, err = strconv.ParseUint(ino, 10, 64); err != nil {
		return Mapping{}, false, false
	}
	// The path is the rest of the line after the padding, and may itself
	// contain spaces (including the " (deleted)" suffix).
	m.Path = strings.TrimLeft(rest, " \t")
	return m, perms[2] == 'x', true
}

// nextField skips leading blanks and returns the run of non-blank bytes and
// what follows it, in a string or in bytes (parseKallsyms scans its lines
// in the reader's buffer).
func nextField[S ~string | ~[]byte](s S) (field, rest S) {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' || s[i] == '\t' {
			return s[:i], s[i:]
		}
	}
	return s, s[len(s):]
}

package engine

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/otlp"
	"github.com/google/pprof/profile"
)

// ViewOptions is what cctop view reads, and how.
type ViewOptions struct {
	// Sources are the profiles to show, merged as pprof merges them:
	// files, "-" for standard input, http(s) URLs (a net/http/pprof
	// endpoint, say).
	Sources []string
	// Base is a profile to compare with (pprof's -diff_base); "" none.
	Base string
	// SampleIndex picks the sample type shown first: its name or its
	// index ("": the profile's default, pprof's rule).
	SampleIndex string
	// Seconds asks a URL for a profile of that many seconds (its
	// seconds= parameter; 0: the endpoint's default).
	Seconds int
	// Timeout bounds fetching a URL (0: 30 s more than Seconds).
	Timeout time.Duration
	// TagFocus and TagIgnore keep only, or leave out, the samples whose
	// labels match (pprof's -tagfocus and -tagignore; see tagfilter.go).
	TagFocus, TagIgnore string
	// Stdin is what "-" reads (nil: os.Stdin).
	Stdin io.Reader
}

// loaded is the profiles a view shows, parsed, merged and filtered.
type loaded struct {
	name  string
	prof  *profile.Profile
	base  *profile.Profile // nil: no base
	index int              // the sample type shown first
}

// loadProfiles reads, merges and filters what o names.
func loadProfiles(o ViewOptions) (*loaded, error) {
	if len(o.Sources) == 0 {
		return nil, errors.New("no profile to show")
	}
	l := &loaded{}
	var ps []*profile.Profile
	var names []string
	for _, src := range o.Sources {
		p, err := readSource(src, o)
		if err != nil {
			return nil, err
		}
		ps = append(ps, p)
		names = append(names, sourceName(src))
	}
	l.prof = ps[0]
	if len(ps) > 1 {
		for i, p := range ps[1:] {
			if err := sameTypes(p, ps[0], names[i+1], "merged with "+names[0]); err != nil {
				return nil, err
			}
		}
		m, err := profile.Merge(ps)
		if err != nil {
			return nil, fmt.Errorf("merging %s: %v", strings.Join(names, ", "), oneLine(err))
		}
		l.prof = m
	}
	l.name = strings.Join(names, " + ")
	if o.Base != "" {
		b, err := readSource(o.Base, o)
		if err != nil {
			return nil, err
		}
		if err := sameTypes(b, l.prof, sourceName(o.Base), "compared with "+l.name); err != nil {
			return nil, err
		}
		l.base = b
		l.name += " vs " + sourceName(o.Base)
	}
	if o.TagFocus != "" || o.TagIgnore != "" {
		f, err := parseTagFilter(o.TagFocus, o.TagIgnore)
		if err != nil {
			return nil, err
		}
		f.apply(l.prof)
		if l.base != nil {
			f.apply(l.base)
		}
	}
	l.index = cct.DefaultSampleIndex(l.prof)
	if o.SampleIndex != "" {
		i, err := cct.SampleIndex(l.prof, o.SampleIndex)
		if err != nil {
			return nil, err
		}
		l.index = i
	}
	return l, nil
}

// sameTypes says, in an error, that p (named name) cannot be what with ref when their
// sample types differ: pprof merges and subtracts only profiles of the same columns.
func sameTypes(p, ref *profile.Profile, name, what string) error {
	if got, want := cct.SampleTypes(p), cct.SampleTypes(ref); got != want {
		return fmt.Errorf("%s cannot be %s: its sample types are %s, not %s", name, what, got, want)
	}
	return nil
}

// sourceName is how the header and errors name a source.
func sourceName(src string) string {
	switch {
	case src == "-":
		return "stdin"
	case isURL(src):
		return src
	}
	return filepath.Base(src)
}

func isURL(src string) bool {
	return strings.HasPrefix(src, "http://") || strings.HasPrefix(src, "https://")
}

// readSource reads one profile: a file, stdin or a URL.
func readSource(src string, o ViewOptions) (*profile.Profile, error) {
	switch {
	case src == "-":
		in := o.Stdin
		if in == nil {
			in = os.Stdin
		}
		return readProfileData("stdin", bufio.NewReader(in))
	case isURL(src):
		return fetchProfile(src, o)
	}
	f, err := os.Open(src)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", src, unwrapPath(err))
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("cannot read %s: is a directory", src)
	}
	return readProfileData(src, bufio.NewReader(f))
}

// readProfileData reads a profile of any format the pprof package reads, or OTLP
// profiles as a collector's file exporter writes them (every window and process in
// them, merged).
func readProfileData(name string, br *bufio.Reader) (*profile.Profile, error) {
	if head, _ := br.Peek(8); !maybeOTLP(head) {
		// Read as it streams: a device that never ends (/dev/zero) is
		// no profile, and is not read to its end to find out.
		p, err := cct.ParseProfile(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		return p, nil
	}
	data, err := io.ReadAll(io.LimitReader(br, maxProfileFile+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %v", name, unwrapPath(err))
	}
	if len(data) > maxProfileFile {
		return nil, fmt.Errorf("%s: over %d GiB, too large for a profile", name, maxProfileFile>>30)
	}
	if !otlp.Sniff(data) {
		p, err := cct.ParseProfile(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		return p, nil
	}
	ps, err := otlp.Read(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	procs, err := otlp.Trees(ps)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(procs) == 0 {
		return nil, fmt.Errorf("%s: no profiles in this OTLP file", name)
	}
	t, m := otlp.Merge(procs)
	return t.Profile(m), nil
}

// fetchProfile gets a profile over HTTP, as go tool pprof does from a net/http/pprof
// endpoint: with seconds=N for a profile of N seconds.
func fetchProfile(src string, o ViewOptions) (*profile.Profile, error) {
	u, err := url.Parse(src)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%s: not a URL", src)
	}
	if o.Seconds > 0 {
		q := u.Query()
		q.Set("seconds", strconv.Itoa(o.Seconds))
		u.RawQuery = q.Encode()
	}
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = time.Duration(o.Seconds)*time.Second + 30*time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", src, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %s", u, fetchError(err, timeout))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		// net/http/pprof says why in the body's first line.
		line, _ := bufio.NewReader(io.LimitReader(resp.Body, 512)).ReadString('\n')
		msg := resp.Status
		if line = strings.TrimSpace(printableLine(line)); line != "" {
			msg += ": " + line
		}
		return nil, fmt.Errorf("fetching %s: %s", u, msg)
	}
	p, err := readProfileData(u.String(), bufio.NewReader(resp.Body))
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("fetching %s: %s", u, fetchError(ctx.Err(), timeout))
		}
		return nil, err
	}
	return p, nil
}

// fetchError says why a fetch failed, in a few words.
func fetchError(err error, timeout time.Duration) string {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
		return fmt.Sprintf("no profile within %v (--timeout)", timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return oneLine(err)
}

// oneLine is err's message on one line.
func oneLine(err error) string {
	return printableLine(strings.Join(strings.Fields(err.Error()), " "))
}

func printableLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return -1
		}
		return r
	}, s)
}

// maxProfileFile bounds what view reads of a file that may hold OTLP
// profiles, which are read whole.
const maxProfileFile = 4 << 30

// maybeOTLP says whether a file's first bytes may start OTLP profiles as
// otlp.Read takes them: gzip, a JSON line, a protobuf message (field 1,
// length-delimited) or one behind a 4-byte length. A pprof profile may
// start so too; otlp.Sniff tells them apart.
func maybeOTLP(head []byte) bool {
	switch {
	case len(head) >= 2 && head[0] == 0x1f && head[1] == 0x8b:
		return true
	case len(head) >= 1 && (head[0] == '{' || head[0] == 0x0a):
		return true
	case len(head) >= 5 && head[4] == 0x0a:
		return true
	}
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	return len(trimmed) > 0 && trimmed[0] == '{'
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

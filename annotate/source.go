package annotate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Source files, found as go tool pprof finds them (its
// internal/report/source.go: openSourceFile and trimPath), so that
// --source-path and --trim-path mean what -source_path and -trim_path do.

// maxSourceBytes bounds a source file read: a "source" larger than this is
// not one a person annotates, and a profile may name any path.
const maxSourceBytes = 16 << 20

// maxSources bounds the files kept between builds.
const maxSources = 32

// sourceFile is one file's lines, or why it could not be read.
type sourceFile struct {
	lines []string // lines[0] is line 1
	err   error
}

// sources reads and keeps source files.
type sources struct {
	searchPath string // pprof's: list-separated directories
	trim       string
	files      map[string]*sourceFile
	order      []string // oldest first, for eviction
}

func newSources(o Options) *sources {
	search := strings.Join(o.SourcePath, string(filepath.ListSeparator))
	if search == "" {
		// pprof searches the working directory when told nothing.
		if wd, err := os.Getwd(); err == nil {
			search = wd
		}
	}
	return &sources{
		searchPath: search,
		trim:       strings.Join(o.TrimPath, string(filepath.ListSeparator)),
		files:      map[string]*sourceFile{},
	}
}

// file returns path's lines, read on first use.
func (s *sources) file(path string) *sourceFile {
	if f, ok := s.files[path]; ok {
		return f
	}
	f := &sourceFile{}
	f.lines, f.err = s.read(path)
	if len(s.order) >= maxSources {
		delete(s.files, s.order[0])
		s.order = s.order[1:]
	}
	s.files[path] = f
	s.order = append(s.order, path)
	return f
}

// errNotText is a file that holds binary data or is too large.
var errNotText = errors.New("not a source file")

func (s *sources) read(path string) ([]string, error) {
	f, err := openSourceFile(path, s.searchPath, s.trim)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", path, errNotText)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSourceBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxSourceBytes || bytes.IndexByte(b[:min(len(b), 8192)], 0) >= 0 {
		return nil, fmt.Errorf("%s: %w", path, errNotText)
	}
	// Lines as bufio.Scanner splits them (pprof's reader): a final line
	// without a newline is a line, a trailing newline adds none, and \r
	// before \n goes.
	text := strings.TrimSuffix(string(b), "\n")
	if text == "" && len(b) == 0 {
		return nil, nil
	}
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines, nil
}

// openSourceFile is pprof's: the path trimmed, then as is if absolute,
// else under each directory of the search path and its parents.
func openSourceFile(path, searchPath, trim string) (*os.File, error) {
	path = trimPath(path, trim, searchPath)
	if filepath.IsAbs(path) {
		return os.Open(path)
	}
	for _, dir := range filepath.SplitList(searchPath) {
		for {
			if f, err := os.Open(filepath.Join(dir, path)); err == nil {
				return f, nil
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return nil, fmt.Errorf("could not find file %s on path %s", path, searchPath)
}

// trimPath is pprof's: without trim prefixes, the part of path after the
// base name of a search directory, if it holds one; then the first trim
// prefix (and /proc/self/cwd) path starts with removed.
func trimPath(path, trim, searchPath string) string {
	sPath, searchPath := filepath.ToSlash(path), filepath.ToSlash(searchPath)
	if trim == "" {
		for _, dir := range filepath.SplitList(searchPath) {
			want := "/" + filepath.Base(dir) + "/"
			if found := strings.Index(sPath, want); found != -1 {
				return path[found+len(want):]
			}
		}
	}
	prefixes := append(filepath.SplitList(filepath.ToSlash(trim)), "/proc/self/cwd/./", "/proc/self/cwd/")
	for _, p := range prefixes {
		if !strings.HasSuffix(p, "/") {
			p += "/"
		}
		if strings.HasPrefix(sPath, p) {
			return path[len(p):]
		}
	}
	return path
}

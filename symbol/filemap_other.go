//go:build !linux

package symbol

import "io"

// mapRange: cctop maps files only on Linux; elsewhere tables are read.
func mapRange(r io.ReaderAt, off, n, size uint64) ([]byte, *fileMap) { return nil, nil }

type fileMap struct{}

func (m *fileMap) release() {}
func (m *fileMap) unmap()   {}

package python

import (
	"sort"
	"testing"
	"unicode/utf8"
)

// fuzzNameImages are the images of testdata/threadnames, in the order of
// their names, and each one's pages in the order of their addresses.
func fuzzNameImages(f *testing.F) ([]*image, [][]uint64) {
	byName := readThreadNameImages(f)
	if len(byName) == 0 {
		f.Skip("no images recorded")
	}
	var images []*image
	var keys [][]uint64
	for _, name := range sortedKeys(byName) {
		im := byName[name]
		k := make([]uint64, 0, len(im.mem))
		for a := range im.mem {
			k = append(k, a)
		}
		sort.Slice(k, func(i, j int) bool { return k[i] < k[j] })
		images = append(images, im)
		keys = append(keys, k)
	}
	return images, keys
}

// FuzzThreadNames reads the thread names of a recorded image whose pages
// the fuzzer corrupts (a target's memory is untrusted: torn, freed,
// hostile): ThreadNames must neither panic nor read without end, and what
// it returns stays within its bounds, whatever the dicts link to.
func FuzzThreadNames(f *testing.F) {
	images, keys := fuzzNameImages(f)
	f.Add(uint8(0), []byte{})
	f.Add(uint8(1), []byte{0, 0x10, 0, 0xff, 1, 0x20, 0x08, 0x41})
	f.Add(uint8(2), []byte{3, 1, 0, 0, 3, 2, 0, 0, 3, 3, 0, 0})
	f.Fuzz(func(t *testing.T, which uint8, edits []byte) {
		i := int(which) % len(images)
		im, pages := images[i], keys[i]
		// Each edit of 4 bytes: which page, where in it (a 16-bit byte
		// offset, little endian), the new byte.
		mem := imageMemory{}
		for a, pg := range im.mem {
			mem[a] = pg
		}
		copied := map[uint64]bool{}
		for j := 0; j+4 <= len(edits) && j < 400; j += 4 {
			a := pages[int(edits[j])%len(pages)]
			if !copied[a] {
				mem[a] = append([]byte(nil), mem[a]...)
				copied[a] = true
			}
			off := (int(edits[j+1]) | int(edits[j+2])<<8) % pageSize
			mem[a][off] = edits[j+3]
		}
		in := *im.interp
		counted := &countingMemory{mem: mem}
		names, err := in.ThreadNames(counted)
		// The debug offsets of 3.13, then the reads of one call.
		if counted.reads > maxNameReads+1 {
			t.Fatalf("%d reads, more than %d", counted.reads, maxNameReads+1)
		}
		if err != nil {
			if names != nil {
				t.Errorf("names %v with the error %v", names, err)
			}
			return
		}
		if len(names) > maxThreads {
			t.Errorf("%d names, more than %d", len(names), maxThreads)
		}
		for ident, name := range names {
			if utf8.RuneCountInString(name) > maxName {
				t.Errorf("ident %#x: a name of %d characters", ident, utf8.RuneCountInString(name))
			}
		}
	})
}

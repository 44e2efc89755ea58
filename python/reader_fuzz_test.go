package python

import (
	"path/filepath"
	"sort"
	"testing"
)

// FuzzReadCorrupt reads the stacks of a recorded image whose pages the
// fuzzer corrupts (a target's memory is untrusted: torn, freed, hostile):
// the reader must neither panic nor loop, whatever the chains link to.
func FuzzReadCorrupt(f *testing.F) {
	files, _ := filepath.Glob("testdata/images/*.json.gz")
	if len(files) == 0 {
		f.Skip("no images recorded")
	}
	var images []*image
	for _, p := range files {
		im, err := readImage(p)
		if err != nil {
			f.Fatal(err)
		}
		images = append(images, im)
	}
	f.Add(uint8(0), []byte{})
	f.Add(uint8(1), []byte{0, 0, 0x10, 0xff, 1, 0x20, 0x08, 0x41})
	f.Add(uint8(2), []byte{3, 1, 0x00, 0x00, 3, 2, 0x00, 0x00, 3, 3, 0x00, 0x00})
	f.Fuzz(func(t *testing.T, which uint8, edits []byte) {
		im := images[int(which)%len(images)]
		// Each edit of 4 bytes: which page, where in it (in 8-byte words,
		// where pointers are), the new low byte, the new second byte.
		keys := make([]uint64, 0, len(im.mem))
		for a := range im.mem {
			keys = append(keys, a)
		}
		sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
		mem := imageMemory{}
		for a, pg := range im.mem {
			mem[a] = pg
		}
		for i := 0; i+4 <= len(edits) && i < 400; i += 4 {
			a := keys[int(edits[i])%len(keys)]
			pg := append([]byte(nil), mem[a]...)
			off := (int(edits[i+1]) * 8) % pageSize
			pg[off], pg[off+1] = edits[i+2], edits[i+3]
			mem[a] = pg
		}
		in := *im.interp
		states, _ := in.threadStates(mem, nil)
		rd := newReader(&in, mem)
		for _, s := range states {
			frames, _ := rd.stack(s.addr, 1, nil, nil)
			if len(frames) > 2*maxFrames {
				t.Fatalf("%d frames", len(frames))
			}
		}
	})
}

package engine

import (
	"os"
	"testing"

	"github.com/cctop/cctop/cct"
	"github.com/cctop/cctop/internal/testutil"
)

// cctopBin is a cctop binary built once for the tests: its workloads are
// the targets, and some tests run it as a user would.
var cctopBin string

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == ReleaseCmd {
		// A session closed in this test binary hands its probe events to
		// its own executable, this test binary, to close.
		Release(os.Args[2:])
		os.Exit(0)
	}
	os.Exit(testutil.Main(m, &cctopBin))
}

// readTree reads the profile at path into a tree, as cctop view shows it first.
func readTree(path string) (*cct.Tree, cct.Meta, error) {
	l, err := loadProfiles(ViewOptions{Sources: []string{path}})
	if err != nil {
		return nil, cct.Meta{}, err
	}
	return cct.FromProfileType(l.prof, l.index)
}

package engine

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

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
	var err error
	if cctopBin, err = testutil.BuildCctop(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(filepath.Dir(cctopBin))
	os.Exit(code)
}

// runCctop runs the built binary and returns stdout, stderr and exit code.
func runCctop(t *testing.T, dir string, args ...string) (string, string, int) {
	t.Helper()
	return testutil.Run(t, cctopBin, dir, args...)
}

func skipIfNoPerf(t *testing.T) { t.Helper(); testutil.SkipIfNoPerf(t) }

func skipIfNoUprobes(t *testing.T) { t.Helper(); testutil.SkipIfNoUprobes(t, cctopBin) }

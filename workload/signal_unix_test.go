//go:build unix

package workload

import (
	"bytes"
	"io"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// TestSignalEndsLoop sends real signals to the test process. The test keeps
// its own registration for them so that none can kill the process, and
// repeats the signal because the first may come before Run has registered.
func TestSignalEndsLoop(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			guard := make(chan os.Signal, 1)
			signal.Notify(guard, sig)
			defer signal.Stop(guard)

			var stdout bytes.Buffer
			done := make(chan error, 1)
			go func() {
				done <- Run("spin", []string{"-loop", "-threads", "1", "-size", "1000"}, &stdout, io.Discard)
			}()
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			deadline := time.After(5 * time.Second)
			for {
				select {
				case err := <-done:
					if err != nil {
						t.Fatal(err)
					}
					o := parseOutput(t, stdout.String())
					if n := o.count(t, spinCaller, spinLeaf); n == 0 {
						t.Fatal("no calls counted before the signal")
					}
					return
				case <-tick.C:
					if err := syscall.Kill(os.Getpid(), sig); err != nil {
						t.Fatal(err)
					}
				case <-deadline:
					t.Fatalf("Run -loop did not end on %v", sig)
				}
			}
		})
	}
}

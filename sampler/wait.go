//go:build linux

package sampler

import (
	"errors"
	"os"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// waiter waits on the session's epoll set through the Go runtime's own
// poller instead of blocking a thread in epoll_wait. A blocking syscall
// hands its P off, and the runtime's sysmon thread, which watches for that,
// then stays at its shortest sleep: at a few hundred waits a second it took
// half of cctop's CPU time. Parked in the netpoller, the reader costs
// nothing until a ring passes its watermark or the timeout passes.
type waiter struct {
	f      *os.File
	rc     syscall.RawConn
	kicked atomic.Bool // kick asked for a return; wait clears it
}

// newWaiter takes ownership of epfd: closing the waiter closes it.
func newWaiter(epfd int) (*waiter, error) {
	if err := unix.SetNonblock(epfd, true); err != nil {
		unix.Close(epfd)
		return nil, err
	}
	f := os.NewFile(uintptr(epfd), "epoll")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &waiter{f: f, rc: rc}, nil
}

// wait returns the ready events, or none once timeout has passed or when
// the set became ready but its events were consumed on the way (see below):
// either way the caller then reads every ring.
func (w *waiter) wait(events []unix.EpollEvent, timeout time.Duration) (int, error) {
	if err := w.f.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		return w.block(events, timeout)
	}
	// After the deadline is set: a kick whose past deadline this one
	// replaced left its flag, seen here.
	if w.kicked.Swap(false) {
		return 0, nil
	}
	var n int
	var werr error
	woken := false
	err := w.rc.Read(func(fd uintptr) bool {
		n, werr = epollNow(int(fd), events)
		if werr == unix.EINTR {
			n, werr = 0, nil
		}
		// A second call means the poller saw the set ready. Its events
		// may be gone already: a perf event's poll clears the ring's
		// wakeup flag, and the runtime's epoll polled it through ours to
		// see that. The caller drains every ring on any return, so a
		// wake-up with n == 0 still reads the data.
		done := n > 0 || werr != nil || woken
		woken = true
		return done
	})
	if errors.Is(err, os.ErrDeadlineExceeded) {
		w.kicked.Store(false)
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return n, werr
}

// epollNow is epoll_wait with no timeout, made as a raw system call: it
// cannot block, and the plain one (unix.EpollWait) tells the runtime it
// might, which wakes the runtime's monitor thread (sysmon) from its sleep
// at each of the reader's passes, after which it checks the Ps every 20 µs
// for as long as the pass keeps one busy.
func epollNow(epfd int, events []unix.EpollEvent) (int, error) {
	if len(events) == 0 {
		return 0, nil
	}
	n, _, e := unix.RawSyscall6(unix.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

// block is the plain epoll_wait, for a runtime that could not register the
// epoll descriptor with its poller.
func (w *waiter) block(events []unix.EpollEvent, timeout time.Duration) (int, error) {
	var n int
	var werr error
	err := w.rc.Control(func(fd uintptr) {
		n, werr = unix.EpollWait(int(fd), events, int(timeout/time.Millisecond))
	})
	if err != nil {
		return 0, err
	}
	if werr == unix.EINTR {
		return 0, nil
	}
	return n, werr
}

// kick makes a pending or the next wait return at once, from any
// goroutine: a deadline in the past ends the runtime's wait on the set.
func (w *waiter) kick() {
	w.kicked.Store(true)
	w.f.SetReadDeadline(time.Unix(1, 0))
}

func (w *waiter) close() error { return w.f.Close() }

//go:build linux

package sampler

import (
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWaiterEpollNow: the raw epoll_wait the waiter polls with returns the
// ready descriptors at once and nothing when none is, and a wait returns
// when a descriptor of the set becomes ready, well before its timeout.
func TestWaiterEpollNow(t *testing.T) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(efd)
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, efd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(efd)}); err != nil {
		t.Fatal(err)
	}
	events := make([]unix.EpollEvent, 4)
	if n, err := epollNow(epfd, events); n != 0 || err != nil {
		t.Fatalf("nothing ready: %d events, %v", n, err)
	}
	if _, err := unix.Write(efd, []byte{1, 0, 0, 0, 0, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	if n, err := epollNow(epfd, events); n != 1 || err != nil || events[0].Fd != int32(efd) {
		t.Fatalf("one ready: %d events (%+v), %v", n, events[0], err)
	}
	var buf [8]byte
	if _, err := unix.Read(efd, buf[:]); err != nil {
		t.Fatal(err)
	}

	w, err := newWaiter(epfd)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	go func() {
		time.Sleep(50 * time.Millisecond)
		unix.Write(efd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	}()
	start := time.Now()
	n, err := w.wait(events, 10*time.Second)
	if err != nil || time.Since(start) > 5*time.Second {
		t.Fatalf("wait: %d events after %v, %v", n, time.Since(start), err)
	}
	if n != 1 || events[0].Fd != int32(efd) {
		t.Errorf("wait: %d events (%+v), want the eventfd", n, events[0])
	}
}

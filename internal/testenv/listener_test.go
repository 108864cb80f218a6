package testenv

import (
	"net"
	"os"
	"runtime"
	"testing"
)

func TestListensOn(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("listensOn tells only on Linux")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	if !listensOn(os.Getpid(), port) {
		t.Errorf("this process listens on %d, and listensOn says no", port)
	}
	other := freeAddr(t)
	_, p, _ := net.SplitHostPort(other)
	if listensOn(os.Getpid(), mustAtoi(t, p)) {
		t.Errorf("listensOn says this process listens on the free port %s", p)
	}
	if listensOn(1, port) {
		t.Errorf("listensOn says pid 1 holds this process's port %d", port)
	}
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := net.LookupPort("tcp", s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

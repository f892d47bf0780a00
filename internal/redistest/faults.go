package redistest

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// Pid returns the server's process id. It fails t for a server the fixture
// does not run itself.
func (s *Server) Pid(t testing.TB) int {
	t.Helper()
	return s.process(t, "Pid").Pid()
}

// Stop shuts the server down with SIGTERM and waits for it to exit. The port
// then refuses connections until Restart.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	if err := s.process(t, "Stop").Stop(syscall.SIGTERM, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

// Kill ends the server with SIGKILL, as a crash would: nothing is flushed
// and clients see their connections reset.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	if err := s.process(t, "Kill").Kill(); err != nil {
		t.Fatal(err)
	}
}

// Restart starts the server again on the same port with the same arguments,
// after stopping it if it still runs. With the default --save "" it comes
// back empty, like a server that persists nothing.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	p := s.process(t, "Restart")
	if err := p.Stop(syscall.SIGTERM, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.relaunch(p.cmd.Path); err != nil {
		t.Fatalf("redistest: restart redis-server on port %d: %v", s.port, err)
	}
}

// relaunch starts the server again on its port with bin, trying for about
// a second while the port lingers; a port still taken then is reported
// with what holds it (portHolders).
func (s *Server) relaunch(bin string) error {
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		if err = s.launch(bin); err == nil {
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	if held := portHolders(s.port); held != "" {
		err = fmt.Errorf("%w\nport %d: %s", err, s.port, held)
	}
	return err
}

// Freeze stops the server process with SIGSTOP. Connections stay open and
// every command waits, as with a server stuck in a long pause.
func (s *Server) Freeze(t testing.TB) {
	t.Helper()
	if err := s.process(t, "Freeze").Freeze(); err != nil {
		t.Fatal(err)
	}
}

// Thaw resumes a frozen server with SIGCONT.
func (s *Server) Thaw(t testing.TB) {
	t.Helper()
	if err := s.process(t, "Thaw").Thaw(); err != nil {
		t.Fatal(err)
	}
}

// process returns the running process, or fails t with why the fault control
// op is not available on this server.
func (s *Server) process(t testing.TB, op string) *Process {
	t.Helper()
	if s.kind != process {
		t.Fatalf("redistest: %s needs a redis-server process started by the fixture "+
			"(redis-server on PATH, and Own() when REDIS_ADDR is set)", op)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc
}

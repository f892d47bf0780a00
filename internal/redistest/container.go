package redistest

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The Docker fallback runs cmd/testcontainer as a child program, not as a
// library call: testcontainers-go and the Docker client then stay out of the
// import graph of every module whose tests use this package, so that users
// who go get one of those modules never download them.
const containerProgram = "github.com/redis-primitives/go/internal/redistest/cmd/testcontainer"

// StartContainer starts a container of the given image kind ("redis" or
// "postgres") through cmd/testcontainer and returns what the program printed
// for it: host:port for redis, a connection string for postgres. The
// container is removed when t ends. It fails t with missing when Docker is
// not usable either.
func StartContainer(t testing.TB, kind, missing string) string {
	t.Helper()
	if _, err := exec.LookPath("docker"); err != nil {
		t.Fatal(missing)
	}
	cmd := exec.Command("go", "run", containerProgram, kind)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s (starting %s: %v)", missing, containerProgram, err)
	}
	lines := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		lines <- strings.TrimSpace(line)
		_, _ = io.Copy(io.Discard, stdout)
	}()
	var got string
	select {
	case got = <-lines:
	case <-time.After(3 * time.Minute):
	}
	// The program removes the container when its standard input closes.
	t.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	if !strings.HasPrefix(got, "ready ") {
		t.Fatalf("%s (Docker fallback failed: %s)", missing, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimPrefix(got, "ready ")
}

func startContainer(t testing.TB, prefix string) *Server {
	t.Helper()
	addr := StartContainer(t, "redis", MissingRedis)
	if err := ping(addr, 30*time.Second, nil); err != nil {
		t.Fatalf("redistest: container at %s: %v", addr, err)
	}
	return &Server{kind: container, addr: addr, prefix: prefix}
}

// String describes the server for test logs.
func (s *Server) String() string {
	return fmt.Sprintf("redis %s (%s)", s.addr, [...]string{"REDIS_ADDR", "process", "container"}[s.kind])
}

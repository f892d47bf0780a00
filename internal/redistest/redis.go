package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// MissingRedis is the message a test fails with when no server can be had.
const MissingRedis = "redistest: no Redis server to test against. Install one " +
	"(Debian/Ubuntu: apt-get install redis-server; macOS: brew install redis), " +
	"or set REDIS_ADDR=host:port to use a running server, or start Docker"

type kind int

const (
	external  kind = iota // REDIS_ADDR
	process               // redis-server started here
	container             // Docker, through cmd/testcontainer
)

// Server is one Redis server for a test.
type Server struct {
	kind   kind
	addr   string
	prefix string
	port   int
	dir    string
	args   []string

	link    *Relay   // set on a replica: the relay to its primary
	ownsDir bool     // Launch made dir and Close removes it
	wrapper []string // LaunchUnder's command that runs redis-server

	mu   sync.Mutex
	proc *Process
}

// Option changes how Start picks or starts a server.
type Option func(*options)

type options struct {
	own  bool
	args []string
}

// Own makes Start run a server of its own even when REDIS_ADDR is set. Tests
// that stop, kill, freeze or replicate the server need it.
func Own() Option { return func(o *options) { o.own = true } }

// Args adds redis-server arguments, such as "--maxmemory-policy",
// "allkeys-lru". They come after the defaults and so override them.
func Args(args ...string) Option {
	return func(o *options) { o.args = append(o.args, args...) }
}

// Start returns a server for t, stopped or cleaned up when t ends. It fails
// t, never skips it, when no server can be had.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	prefix := "rt" + randomHex(4) + ":"
	if addr := os.Getenv("REDIS_ADDR"); addr != "" && !o.own {
		if len(o.args) > 0 {
			t.Fatalf("redistest: server arguments %q need a server of the fixture's own; unset REDIS_ADDR or use Own()", o.args)
		}
		return startExternal(t, addr, prefix)
	}
	if bin, err := exec.LookPath("redis-server"); err == nil {
		return startProcess(t, bin, prefix, o.args)
	}
	if len(o.args) > 0 || o.own {
		t.Fatalf("%s (this test controls the server process, which needs redis-server on PATH)", MissingRedis)
	}
	return startContainer(t, prefix)
}

// Addr returns host:port.
func (s *Server) Addr() string { return s.addr }

// Port returns the TCP port, which stays the same across Restart.
func (s *Server) Port() int { return s.port }

// Prefix returns a key prefix unique to this server value. Tests put it in
// front of their keys so that they stay isolated on a shared REDIS_ADDR.
func (s *Server) Prefix() string { return s.prefix }

// Options returns client options for the server. Tests adjust timeouts on
// the copy before creating a client. Context deadlines bound every call
// (ContextTimeoutEnabled), as tests of a frozen or killed server need.
func (s *Server) Options() *redis.Options {
	return &redis.Options{Addr: s.addr, DisableIdentity: true, ContextTimeoutEnabled: true}
}

// Client returns a client for the server, closed when t ends. tune, if given,
// adjusts the options first (timeouts, pool size).
func (s *Server) Client(t testing.TB, tune ...func(*redis.Options)) *redis.Client {
	t.Helper()
	opt := s.Options()
	for _, f := range tune {
		f(opt)
	}
	return newClient(t, opt)
}

func startExternal(t testing.TB, addr, prefix string) *Server {
	t.Helper()
	s := &Server{kind: external, addr: addr, prefix: prefix}
	if err := ping(addr, 5*time.Second, nil); err != nil {
		t.Fatalf("redistest: REDIS_ADDR=%s does not answer PING: %v", addr, err)
	}
	t.Cleanup(func() {
		if err := deletePrefix(addr, prefix); err != nil {
			t.Errorf("redistest: clean up keys %s* on %s: %v", prefix, addr, err)
		}
	})
	return s
}

func startProcess(t testing.TB, bin, prefix string, extra []string) *Server {
	t.Helper()
	s, err := newProcessServer(bin, prefix, t.TempDir(), extra)
	if err != nil {
		t.Fatalf("redistest: could not start redis-server: %v", err)
	}
	t.Cleanup(s.shutdown)
	return s
}

// Launch starts a redis-server on a free loopback port for a program that is
// not a test: the demo, the experiments, the benchmarks. The caller must
// Close it. The process dies with the caller in any case.
func Launch(extra ...string) (*Server, error) {
	return LaunchUnder(nil, extra...)
}

// LaunchUnder is Launch with redis-server run by wrapper, a command and its
// arguments to which redis-server's path and arguments are appended (for
// example valgrind and its options). It waits up to a minute for the first
// PING, since such a wrapper slows the server down.
func LaunchUnder(wrapper []string, extra ...string) (*Server, error) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return nil, errors.New(MissingRedis)
	}
	dir, err := os.MkdirTemp("", "redistest-")
	if err != nil {
		return nil, err
	}
	s, err := newProcessServerUnder(wrapper, bin, "", dir, extra)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	s.ownsDir = true
	return s, nil
}

// LaunchedPid returns the process id of a server that Launch or
// LaunchUnder started: the wrapper's, which must run redis-server in its
// own process (as valgrind does, or a shell's exec). It is 0 for a server
// the fixture does not run.
func (s *Server) LaunchedPid() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.Pid()
}

// Close stops a server started by Launch and removes its directory.
func (s *Server) Close() error {
	s.shutdown()
	if s.ownsDir {
		return os.RemoveAll(s.dir)
	}
	return nil
}

func newProcessServer(bin, prefix, dir string, extra []string) (*Server, error) {
	return newProcessServerUnder(nil, bin, prefix, dir, extra)
}

func newProcessServerUnder(wrapper []string, bin, prefix, dir string, extra []string) (*Server, error) {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		s := &Server{kind: process, addr: "127.0.0.1:" + strconv.Itoa(port), prefix: prefix, port: port, dir: dir, wrapper: wrapper}
		s.args = append([]string{
			"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--save", "", "--appendonly", "no",
			"--maxmemory-policy", "noeviction",
			"--dir", dir, "--logfile", "redis.log",
			"--daemonize", "no",
			// A replica started later syncs at once instead of after 5 s.
			"--repl-diskless-sync-delay", "0",
		}, extra...)
		if lastErr = s.launch(bin); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

// launch starts the process and waits until it answers PING.
func (s *Server) launch(bin string) error {
	name, args, wait := bin, s.args, 10*time.Second
	if len(s.wrapper) > 0 {
		name = s.wrapper[0]
		args = append(append(append([]string(nil), s.wrapper[1:]...), bin), s.args...)
		wait = time.Minute
	}
	p, err := StartProcess(name, args, nil, s.dir, nil)
	if err != nil {
		return err
	}
	if err := ping(s.addr, wait, p.Exited()); err != nil {
		_ = p.Kill()
		return fmt.Errorf("%w; log: %s", err, tail(filepath.Join(s.dir, "redis.log")))
	}
	if err := answeredBy(s.addr, p.Pid()); err != nil {
		_ = p.Kill()
		return err
	}
	s.mu.Lock()
	s.proc = p
	s.mu.Unlock()
	return nil
}

func (s *Server) shutdown() {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p != nil {
		_ = p.Kill()
	}
}

// ping waits until addr answers PING, the server exits, or wait passes.
func ping(addr string, wait time.Duration, exited <-chan struct{}) error {
	c := redis.NewClient(&redis.Options{
		Addr: addr, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond,
		PoolSize: 1,
	})
	defer c.Close()
	deadline := time.Now().Add(wait)
	var err error
	for time.Now().Before(deadline) {
		if err = c.Ping(context.Background()).Err(); err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("redis-server exited during start-up")
		case <-time.After(5 * time.Millisecond):
		}
	}
	return fmt.Errorf("no answer to PING within %v: %w", wait, err)
}

// answeredBy checks that the server answering on addr is the process pid:
// a port FreePort gave may be taken by another test's server before ours
// binds it, and ours then exits while the other answers our PING (seen as
// two Clusters started at once sharing a node: "ERR Slot 0 is already
// busy"). A wrapper (valgrind) runs the server in its own process, so the
// pid is the server's either way.
func answeredBy(addr string, pid int) error {
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, MaxRetries: -1, PoolSize: 1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return fmt.Errorf("INFO server on %s: %w", addr, err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "process_id:"); ok {
			if v != strconv.Itoa(pid) {
				return fmt.Errorf("%s is answered by process %s, not by the redis-server started for it (%d): the port was taken", addr, v, pid)
			}
			return nil
		}
	}
	return fmt.Errorf("INFO server on %s has no process_id", addr)
}

func deletePrefix(addr, prefix string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	iter := c.Scan(ctx, 0, prefix+"*", 500).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return err
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := c.Unlink(ctx, keys[:n]...).Err(); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "(no log)"
	}
	s := strings.TrimSpace(string(b))
	if len(s) > 2000 {
		s = s[len(s)-2000:]
	}
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

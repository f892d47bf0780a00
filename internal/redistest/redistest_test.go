package redistest_test

import (
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

func TestStartGivesAnIsolatedServerThatAnswers(t *testing.T) {
	a := redistest.Start(t, redistest.Own())
	b := redistest.Start(t, redistest.Own())
	if a.Addr() == b.Addr() {
		t.Fatalf("two servers share %s", a.Addr())
	}
	ctx := context.Background()
	ca, cb := a.Client(t), b.Client(t)
	if err := ca.Set(ctx, "k", "a", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n := cb.Exists(ctx, "k").Val(); n != 0 {
		t.Fatalf("a key set on one server is visible on the other")
	}
	policy := ca.ConfigGet(ctx, "maxmemory-policy").Val()["maxmemory-policy"]
	if policy != "noeviction" {
		t.Fatalf("maxmemory-policy = %q, want noeviction", policy)
	}
	if save := ca.ConfigGet(ctx, "save").Val()["save"]; save != "" {
		t.Fatalf("save = %q, want persistence off", save)
	}
}

func TestServerDiesWithItsTest(t *testing.T) {
	var pid int
	t.Run("inner", func(t *testing.T) {
		pid = redistest.Start(t, redistest.Own()).Pid(t)
	})
	if alive(pid) {
		t.Fatalf("redis-server pid %d still runs after its test ended", pid)
	}
}

func TestKilledServerRefusesThenRestartsEmptyOnTheSamePort(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c := s.Client(t, func(o *redis.Options) { o.MaxRetries = -1 })
	ctx := context.Background()
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	pid := s.Pid(t)
	s.Kill(t)
	if alive(pid) {
		t.Fatalf("pid %d survived Kill", pid)
	}
	if err := c.Ping(ctx).Err(); err == nil {
		t.Fatal("PING answered after Kill")
	}
	port := s.Port()
	s.Restart(t)
	if s.Port() != port {
		t.Fatalf("restarted on port %d, want %d", s.Port(), port)
	}
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after restart: %v", err)
	}
	if n := c.Exists(ctx, "k").Val(); n != 0 {
		t.Fatal("a server without persistence kept a key across a crash")
	}
}

func TestStoppedServerRestarts(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c := s.Client(t, func(o *redis.Options) { o.MaxRetries = -1 })
	s.Stop(t)
	if err := c.Ping(context.Background()).Err(); err == nil {
		t.Fatal("PING answered after Stop")
	}
	s.Restart(t)
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatalf("PING after restart: %v", err)
	}
}

func TestFrozenServerAnswersNothingUntilThawed(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	c := s.Client(t, func(o *redis.Options) {
		o.MaxRetries = -1
		o.ReadTimeout = 100 * time.Millisecond
	})
	ctx := context.Background()
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	s.Freeze(t)
	start := time.Now()
	err := c.Ping(ctx).Err()
	var netErr interface{ Timeout() bool }
	if !errors.As(err, &netErr) || !netErr.Timeout() {
		t.Fatalf("PING to a frozen server: %v, want a timeout", err)
	}
	t.Logf("PING to the frozen server timed out after %v", time.Since(start).Round(time.Millisecond))
	s.Thaw(t)
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatalf("PING after thaw: %v", err)
	}
}

func TestFrozenServerIsStillStoppedAtCleanup(t *testing.T) {
	var pid int
	t.Run("inner", func(t *testing.T) {
		s := redistest.Start(t, redistest.Own())
		pid = s.Pid(t)
		s.Freeze(t)
	})
	if alive(pid) {
		t.Fatalf("frozen redis-server pid %d outlived its test", pid)
	}
}

func TestReplicaFollowsAndCanBePromoted(t *testing.T) {
	primary := redistest.Start(t, redistest.Own())
	replica := primary.StartReplica(t)
	ctx := context.Background()
	pc, rc := primary.Client(t), replica.Client(t)
	if err := pc.Set(ctx, "k", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := pc.Wait(ctx, 1, time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1: %d replicas, %v", n, err)
	}
	if v := rc.Get(ctx, "k").Val(); v != "1" {
		t.Fatalf("replica has k=%q, want 1", v)
	}
	if err := rc.Set(ctx, "x", "1", 0).Err(); err == nil {
		t.Fatal("a replica accepted a write before promotion")
	}
	// A write the replica never receives: cut the link, write, then kill the
	// primary. The promoted replica lacks it, as after a real failover.
	replica.Partition(t)
	if err := pc.Set(ctx, "lost", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, _ := pc.Wait(ctx, 1, 100*time.Millisecond).Result(); n != 0 {
		t.Fatalf("WAIT counted %d replicas through a cut link", n)
	}
	primary.Kill(t)
	replica.Promote(t)
	if err := rc.Set(ctx, "x", "1", 0).Err(); err != nil {
		t.Fatalf("write after promotion: %v", err)
	}
	if n := rc.Exists(ctx, "lost").Val(); n != 0 {
		t.Fatal("the promoted replica has a write it was frozen through")
	}
}

func TestExternalServerIsIsolatedByPrefixAndCleaned(t *testing.T) {
	real := redistest.Start(t, redistest.Own())
	c := real.Client(t)
	ctx := context.Background()
	if err := c.Set(ctx, "other", "keep", 0).Err(); err != nil {
		t.Fatal(err)
	}
	t.Setenv("REDIS_ADDR", real.Addr())
	var prefix string
	t.Run("inner", func(t *testing.T) {
		s := redistest.Start(t)
		if s.Addr() != real.Addr() {
			t.Fatalf("Start ignored REDIS_ADDR: %s", s.Addr())
		}
		prefix = s.Prefix()
		for i := 0; i < 1200; i++ {
			if err := c.Set(ctx, prefix+strconv.Itoa(i), "v", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
	})
	if keys := c.Keys(ctx, prefix+"*").Val(); len(keys) != 0 {
		t.Fatalf("%d keys under %s survived the test", len(keys), prefix)
	}
	if v := c.Get(ctx, "other").Val(); v != "keep" {
		t.Fatal("cleanup deleted a key outside the test's prefix")
	}
}

func alive(pid int) bool {
	// Signal 0 only checks that the pid exists; a zombie is not alive.
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	out, _ := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
	return len(out) > 0 && out[0] != 'Z'
}

func TestLaunchedServerIsGoneAfterClose(t *testing.T) {
	s, err := redistest.Launch()
	if err != nil {
		t.Fatal(err)
	}
	pid := s.Pid(t)
	c := redis.NewClient(s.Options())
	defer c.Close()
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if alive(pid) {
		t.Fatalf("pid %d survived Close", pid)
	}
}

func TestClusterNodeRefusesACrossSlotScript(t *testing.T) {
	_, cc := redistest.StartClusterNode(t)
	ctx := context.Background()
	if err := cc.Eval(ctx, "return 1", []string{"{a}x", "{a}y"}).Err(); err != nil {
		t.Fatalf("same-slot script: %v", err)
	}
	if err := cc.Eval(ctx, "return 1", []string{"{a}x", "{b}y"}).Err(); err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Fatalf("cross-slot script: %v, want CROSSSLOT", err)
	}
}

// A stalled relay holds what it is sent, in both directions, and drops
// nothing: on Resume the held command reaches the server and its reply
// the client.
func TestStalledRelayHoldsEveryByteUntilResumed(t *testing.T) {
	s := redistest.Start(t)
	r := redistest.StartRelay(t, s.Addr())
	conn, err := net.Dial("tcp", r.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	read := func(wait time.Duration) (string, error) {
		_ = conn.SetReadDeadline(time.Now().Add(wait))
		buf := make([]byte, 64)
		n, err := conn.Read(buf)
		return string(buf[:n]), err
	}
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := read(5 * time.Second); err != nil || got != "+PONG\r\n" {
		t.Fatalf("through the relay: %q, %v", got, err)
	}
	r.Stall()
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	const held = 200 * time.Millisecond
	if got, err := read(held); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("stalled relay answered %q, %v; want nothing for %v", got, err, held)
	}
	r.Resume()
	if got, err := read(5 * time.Second); err != nil || got != "+PONG\r\n" {
		t.Fatalf("after Resume: %q, %v; want the held command's reply", got, err)
	}
}

// StallOpen holds what the connections open then carry, while a new
// connection gets through at once: a command sent on the old one reaches
// the server after the new one's, on Resume.
func TestStallOpenHoldsTheOldConnectionsWhileANewOneGetsThrough(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	r := redistest.StartRelay(t, s.Addr())
	dial := func() (net.Conn, func(time.Duration) (string, error)) {
		conn, err := net.Dial("tcp", r.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn, func(wait time.Duration) (string, error) {
			_ = conn.SetReadDeadline(time.Now().Add(wait))
			buf := make([]byte, 64)
			n, err := conn.Read(buf)
			return string(buf[:n]), err
		}
	}
	old, readOld := dial()
	if _, err := old.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := readOld(5 * time.Second); err != nil || got != "+PONG\r\n" {
		t.Fatalf("through the relay: %q, %v", got, err)
	}
	r.StallOpen()
	if _, err := old.Write([]byte("SET k old\r\n")); err != nil {
		t.Fatal(err)
	}
	fresh, readFresh := dial()
	if _, err := fresh.Write([]byte("SET k new\r\n")); err != nil {
		t.Fatal(err)
	}
	if got, err := readFresh(5 * time.Second); err != nil || got != "+OK\r\n" {
		t.Fatalf("a connection made after StallOpen: %q, %v", got, err)
	}
	if got, err := readOld(200 * time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the stalled connection answered %q, %v", got, err)
	}
	r.Resume()
	if got, err := readOld(5 * time.Second); err != nil || got != "+OK\r\n" {
		t.Fatalf("after Resume: %q, %v; want the held command's reply", got, err)
	}
	if got := s.Client(t).Get(context.Background(), "k").Val(); got != "old" {
		t.Fatalf("k is %q: the held SET should have run after the new connection's", got)
	}
}

// make bench-server-cost runs redis-server under valgrind through
// LaunchUnder: the wrapper must really run it (here a shell that leaves a
// mark and execs it, so the pid stays the server's), the server must
// answer, and LaunchedPid must name the process that Close stops.
func TestLaunchUnderRunsRedisServerThroughTheWrapper(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal(redistest.MissingRedis)
	}
	mark := t.TempDir() + "/wrapped"
	s, err := redistest.LaunchUnder([]string{"sh", "-c", "touch '" + mark + `' && exec "$0" "$@"`})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the wrapper did not run: %v", err)
	}
	c := redis.NewClient(s.Options())
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	_ = c.Close()
	pid := s.LaunchedPid()
	if err := syscall.Kill(pid, 0); pid <= 0 || err != nil {
		t.Fatalf("LaunchedPid %d is no running process: %v", pid, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("process %d still runs after Close", pid)
	}
}

// A connection the relay accepted just before Close and dialed onward just
// after it must still be closed: Close once hung for good waiting for its
// pipes (election's health test, under load). Close here races a stream of
// dials, many times over.
func TestRelayCloseReturnsWhileClientsAreStillConnecting(t *testing.T) {
	s := redistest.Start(t)
	for range 50 {
		r := redistest.StartRelay(t, s.Addr())
		stop := make(chan struct{})
		dialed := make(chan struct{})
		go func() {
			defer close(dialed)
			for {
				select {
				case <-stop:
					return
				default:
				}
				if c, err := net.Dial("tcp", r.Addr()); err == nil {
					defer c.Close()
				}
			}
		}()
		time.Sleep(time.Millisecond)
		closed := make(chan struct{})
		go func() { r.Close(); close(closed) }()
		select {
		case <-closed:
		case <-time.After(10 * time.Second):
			t.Fatal("Relay.Close did not return within 10 s while clients were connecting")
		}
		close(stop)
		<-dialed
	}
}

// What the primitives send that 6.2 refuses gets 6.2's reply through the
// relay, word for word; everything else reaches the real server.
func TestRedis62RelayAnswersWhat62RefusesAs62Does(t *testing.T) {
	s := redistest.Start(t)
	r := redistest.StartRedis62(t, s.Addr())
	c := s.Client(t, func(o *redis.Options) { o.Addr = r.Addr() })
	ctx := context.Background()
	k := s.Prefix() + "k"
	setNXGet := "return redis.pcall('SET', KEYS[1], 'v', 'NX', 'PX', 1000, 'GET')"
	for _, tc := range []struct {
		what string
		err  error
		want string
	}{
		{"SET NX GET", c.Do(ctx, "SET", k, "v", "NX", "GET").Err(), "ERR syntax error"},
		{"a script running SET NX GET", c.Eval(ctx, setNXGet, []string{k}).Err(), "ERR syntax error"},
		{"EVALSHA of that script once sent", c.EvalSha(ctx, redistest.SHA1(setNXGet), []string{k}).Err(), "ERR syntax error"},
		{"EVALSHA of a script never sent", c.EvalSha(ctx, redistest.SHA1("return 1"), nil).Err(), "NOSCRIPT No matching script. Please use EVAL."},
		{"EVALSHA_RO", c.EvalShaRO(ctx, redistest.SHA1("return 1"), []string{k}).Err(),
			"ERR unknown command `evalsha_ro`, with args beginning with: `" + redistest.SHA1("return 1") + "`, `1`, `" + k + "`, "},
		{"a script with a flags line", c.Eval(ctx, "#!lua flags=no-writes\nreturn 1", nil).Err(),
			"ERR Error compiling script (new function): user_script:1: unexpected symbol near '#'"},
	} {
		if tc.err == nil || tc.err.Error() != tc.want {
			t.Errorf("%s: %v, want %q", tc.what, tc.err, tc.want)
		}
	}
	if n, err := c.Exists(ctx, k).Result(); err != nil || n != 0 {
		t.Errorf("after the refusals: EXISTS %d, %v; want no key set", n, err)
	}
	// What 6.2 has passes through, scripts included.
	if err := c.Set(ctx, k, "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Eval(ctx, "return redis.call('SET', KEYS[1], 'w', 'XX', 'GET')", []string{k}).Result(); err != nil || got != "v" {
		t.Errorf("SET XX GET in a script: %v, %v; want the old value", got, err)
	}
	if got, err := c.EvalSha(ctx, redistest.SHA1("return redis.call('SET', KEYS[1], 'w', 'XX', 'GET')"), []string{k}).Result(); err != nil || got != "w" {
		t.Errorf("EVALSHA of a script sent before: %v, %v", got, err)
	}
	sub := c.Subscribe(ctx, s.Prefix()+"ch")
	defer sub.Close()
	if _, err := sub.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Client(t).Publish(ctx, s.Prefix()+"ch", "hi").Err(); err != nil {
		t.Fatal(err)
	}
	if m, err := sub.ReceiveMessage(ctx); err != nil || m.Payload != "hi" {
		t.Errorf("message through a subscribed connection: %v, %v", m, err)
	}
}

// A process stopped for 100ms (SIGSTOP, then SIGCONT from a shell started
// before) shows a pause at least that long: what a machine too busy to
// schedule the tests does to them. A watch that saw as long a pause before
// the stop would prove nothing: it is started again (at most three times).
func TestPausesSeeTheProcessStopped(t *testing.T) {
	p := quietWatch(t, 90*time.Millisecond)
	cont := exec.Command("sh", "-c", "sleep 0.1; kill -CONT "+strconv.Itoa(os.Getpid()))
	if err := cont.Start(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := cont.Wait(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	got := p.Stop()
	t.Logf("longest pause %v across a 100ms stop", got)
	if got < 90*time.Millisecond {
		t.Fatalf("longest pause %v across a 100ms stop", got)
	}
}

// A server held back 200ms (SIGSTOP, then SIGCONT) while this process runs
// freely shows as a pause about that long when the watch PINGs it: a
// timing test whose bound a busy server missed tries again instead of
// failing its primitive. Stop returns at once even while a PING waits on
// a frozen server.
func TestPausesSeeAWatchedServerHeldBack(t *testing.T) {
	s := redistest.Start(t)
	p := quietWatch(t, 150*time.Millisecond, s)
	s.Freeze(t)
	time.Sleep(200 * time.Millisecond)
	s.Thaw(t)
	time.Sleep(5 * time.Millisecond)
	got := p.Stop()
	t.Logf("longest pause %v across a 200ms freeze of the server", got)
	// The PING in flight when the freeze began waits it out, less the
	// period between PINGs and what a busy machine delays its send by.
	if got < 150*time.Millisecond {
		t.Fatalf("longest pause %v across a 200ms freeze of the server", got)
	}

	p = redistest.WatchPauses(s)
	time.Sleep(5 * time.Millisecond)
	s.Freeze(t)
	defer s.Thaw(t)
	time.Sleep(20 * time.Millisecond)
	stopped := time.Now()
	p.Stop()
	if took := time.Since(stopped); took > time.Second {
		t.Fatalf("Stop took %v while the watched server was frozen", took)
	}
}

// quietWatch starts watching servers and returns the watch once it has seen
// no pause as long as bound for 20ms: one that had would prove nothing of
// the pause the test makes next. It starts again at most three times.
func quietWatch(t *testing.T, bound time.Duration, servers ...*redistest.Server) *redistest.Pauses {
	t.Helper()
	for attempt := 1; ; attempt++ {
		p := redistest.WatchPauses(servers...)
		time.Sleep(20 * time.Millisecond)
		before := p.Longest()
		if before < bound {
			return p
		}
		p.Stop()
		if attempt == 3 {
			t.Fatalf("the machine paused this process or a server %v before the test's own pause, three times", before)
		}
	}
}

package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sentinel timings. A failover that Sentinel detects itself (a killed or
// frozen primary) takes about SentinelDownAfter plus one election and one
// promotion; SENTINEL FAILOVER skips the detection.
const (
	// SentinelDownAfter is down-after-milliseconds: how long a primary may
	// stay silent before a sentinel calls it down.
	// Shorter, and a promoted replica that two busy cores stall for a
	// moment is called down and failed over again.
	SentinelDownAfter = time.Second
	// SentinelFailoverTimeout is failover-timeout. Sentinel waits twice
	// this before it retries a failover of the same primary.
	// Under load a promoted replica can answer late; a timeout shorter than
	// a few seconds made Sentinel abort failovers on two busy cores.
	SentinelFailoverTimeout = 3 * time.Second
	// sentinelPeriod replaces Sentinel's 10 s INFO period (SENTINEL
	// DEBUG), so that sentinels notice a promoted, demoted or restarted
	// server within a fraction of a second.
	sentinelPeriod = 100 * time.Millisecond
	// sentinelHelloPeriod replaces the 2 s hello period. A sentinel that
	// sees a replica claim the primary role for 4 hello periods, while it
	// knows of no failover, turns it back into a replica; at 100 ms that
	// undid failovers whose promotion two busy cores had slowed.
	sentinelHelloPeriod = 500 * time.Millisecond
	// sentinelMasterName is the name the sentinels monitor the primary by.
	sentinelMasterName = "redistest"
	// sentinelWait bounds each wait for the sentinels to agree: a few
	// failover timeouts on two cores that other tests share.
	sentinelWait = 10 * SentinelFailoverTimeout
)

// Sentinel is a primary, two replicas and three sentinels (quorum 2) on
// loopback, every process the fixture's own. Which data server is the
// primary changes with each failover; ask Primary.
type Sentinel struct {
	bin       string
	data      []*Server // the primary and its replicas, in start order
	sentinels []*Server

	mu sync.Mutex // serializes faults
}

// StartSentinel starts the servers and sentinels and returns once every
// sentinel sees the primary, both replicas linked to it and the two other
// sentinels. Everything stops when t ends.
//
// Under go test -short (make test-quick) it skips t instead: the tests that
// need a Sentinel are the long fault tests, which make test and CI run.
func StartSentinel(t testing.TB) *Sentinel {
	t.Helper()
	skipLong(t, "a Sentinel (three servers, three sentinels)")
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("%s (Sentinel needs redis-server on PATH)", MissingRedis)
	}
	s := &Sentinel{bin: bin}
	primary := startProcess(t, bin, "", nil)
	s.data = []*Server{primary}
	for range 2 {
		r := startProcess(t, bin, "", []string{"--replicaof", "127.0.0.1", strconv.Itoa(primary.port)})
		s.data = append(s.data, r)
	}
	for _, r := range s.data[1:] {
		if err := waitLinkUp(r.addr, sentinelWait); err != nil {
			t.Fatalf("redistest: replica %s: %v", r.addr, err)
		}
	}
	for range 3 {
		sen, err := startSentinelProcess(bin, t.TempDir(), primary.port)
		if err != nil {
			t.Fatalf("redistest: start sentinel: %v", err)
		}
		t.Cleanup(sen.shutdown)
		s.sentinels = append(s.sentinels, sen)
	}
	ctx := context.Background()
	for _, sen := range s.sentinels {
		c := redis.NewClient(&redis.Options{Addr: sen.addr, DisableIdentity: true})
		err := c.Do(ctx, "SENTINEL", "DEBUG",
			"info-period", sentinelPeriod.Milliseconds(),
			"publish-period", sentinelHelloPeriod.Milliseconds(),
			"ask-period", sentinelPeriod.Milliseconds(),
			// Two busy cores can delay a sentinel's timer by more than the
			// default 2 s; TILT would then stall failovers for 30 s.
			"tilt-period", SentinelFailoverTimeout.Milliseconds(),
		).Err()
		_ = c.Close()
		if err != nil {
			t.Fatalf("redistest: SENTINEL DEBUG on %s: %v", sen.addr, err)
		}
	}
	if err := s.waitSettled(ctx, primary.addr); err != nil {
		t.Fatalf("redistest: sentinels not ready: %v", err)
	}
	return s
}

func startSentinelProcess(bin, dir string, primaryPort int) (*Server, error) {
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := FreePort()
		if err != nil {
			return nil, err
		}
		conf := filepath.Join(dir, "sentinel.conf") // Sentinel rewrites it
		m := sentinelMasterName
		text := fmt.Sprintf("port %d\nbind 127.0.0.1\ndaemonize no\ndir %s\nlogfile sentinel.log\n", port, dir) +
			"sentinel resolve-hostnames no\n" +
			fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2\n", m, primaryPort) +
			fmt.Sprintf("sentinel down-after-milliseconds %s %d\n", m, SentinelDownAfter.Milliseconds()) +
			fmt.Sprintf("sentinel failover-timeout %s %d\n", m, SentinelFailoverTimeout.Milliseconds()) +
			fmt.Sprintf("sentinel parallel-syncs %s 2\n", m)
		if err := os.WriteFile(conf, []byte(text), 0o600); err != nil {
			return nil, err
		}
		s := &Server{kind: process, addr: "127.0.0.1:" + strconv.Itoa(port), port: port, dir: dir,
			args: []string{conf, "--sentinel"}}
		if lastErr = s.launch(bin); lastErr == nil {
			return s, nil
		}
	}
	return nil, lastErr
}

func sentinelClient(addr string) *redis.SentinelClient {
	return redis.NewSentinelClient(&redis.Options{
		Addr: addr, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
		PoolSize: 1,
	})
}

// MasterName returns the name the sentinels monitor the primary by.
func (s *Sentinel) MasterName() string { return sentinelMasterName }

// SentinelAddrs returns the sentinels' host:port addresses.
func (s *Sentinel) SentinelAddrs() []string {
	addrs := make([]string, len(s.sentinels))
	for i, sen := range s.sentinels {
		addrs[i] = sen.addr
	}
	return addrs
}

// FailoverOptions returns options for a go-redis failover client of the
// monitored primary. Context deadlines bound every call; the short dial and
// read timeouts let a client give up on a dead or frozen primary in about
// SentinelDownAfter, as a client tuned for a fast failover would.
func (s *Sentinel) FailoverOptions() *redis.FailoverOptions {
	return &redis.FailoverOptions{
		MasterName:            sentinelMasterName,
		SentinelAddrs:         s.SentinelAddrs(),
		DisableIdentity:       true,
		ContextTimeoutEnabled: true,
		DialTimeout:           SentinelDownAfter,
		ReadTimeout:           SentinelDownAfter,
		WriteTimeout:          SentinelDownAfter,
	}
}

// Client returns a failover client (redis.NewFailoverClient), closed when t
// ends. tune, if given, adjusts the options first.
func (s *Sentinel) Client(t testing.TB, tune ...func(*redis.FailoverOptions)) *redis.Client {
	t.Helper()
	opt := s.FailoverOptions()
	for _, f := range tune {
		f(opt)
	}
	return newFailoverClient(t, opt)
}

// Primary returns the data server the sentinels agree is the primary.
func (s *Sentinel) Primary(t testing.TB) *Server {
	t.Helper()
	addr, err := s.agreedPrimary(context.Background())
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	return s.server(t, addr)
}

// Servers returns the data servers: the primary and its replicas, in the
// order they were started (not by role).
func (s *Sentinel) Servers() []*Server { return slices.Clone(s.data) }

// Sentinels returns the sentinel processes, for faults on Sentinel itself.
func (s *Sentinel) Sentinels() []*Server { return slices.Clone(s.sentinels) }

func (s *Sentinel) server(t testing.TB, addr string) *Server {
	t.Helper()
	for _, d := range s.data {
		if d.addr == addr {
			return d
		}
	}
	t.Fatalf("redistest: the sentinels name %s, which is none of the fixture's servers", addr)
	return nil
}

// Failover is one completed failover: the old and new primaries and how
// long the sentinels took from the fault to agreeing on the new one.
type Failover struct {
	Old, New *Server
	Took     time.Duration
	// Behind is, after KillPrimaryLagging, how far the promoted replica
	// was behind the old primary when it was killed: bytes of the
	// replication stream (master_repl_offset) it never received.
	Behind int64
}

// Failover asks a sentinel for a failover (SENTINEL FAILOVER, which needs no
// agreement that the primary is down) and returns once the sentinels agree
// on the new primary and the topology has settled: the old primary
// replicates the new one and every sentinel sees both replicas linked.
func (s *Sentinel) Failover(t testing.TB) Failover {
	t.Helper()
	return s.fault(t, "SENTINEL FAILOVER", func(ctx context.Context, old *Server) error {
		// A sentinel refuses while an earlier failover has not finished or
		// before it has seen a replica it may promote (NOGOODSLAVE), and
		// aborts a failover whose replica is slow to take the role; both
		// are retried.
		c := sentinelClient(s.sentinels[0].addr)
		defer c.Close()
		for {
			err := c.Failover(ctx, sentinelMasterName).Err()
			if err == nil {
				wait, cancel := context.WithTimeout(ctx, 2*SentinelFailoverTimeout)
				_, err = s.waitPrimaryMoves(wait, old.addr)
				cancel()
				if err == nil {
					return nil
				}
			}
			if ctx.Err() != nil {
				return fmt.Errorf("SENTINEL FAILOVER: %w\n%s", err, s.logs())
			}
			time.Sleep(sentinelPeriod)
		}
	}, nil)
}

// KillPrimary ends the primary with SIGKILL and returns once the sentinels
// have promoted a replica. The killed server is then restarted empty, as a
// replica of the new primary (what an operator or an orchestrator does), so
// that the next fault again finds two replicas.
func (s *Sentinel) KillPrimary(t testing.TB) Failover {
	t.Helper()
	return s.fault(t, "SIGKILL", func(ctx context.Context, old *Server) error {
		return old.process(t, "KillPrimary").Kill()
	}, func(old, primary *Server) error {
		return s.restartAsReplica(old, primary)
	})
}

// KillPrimaryThawing is KillPrimary for a test that froze replicas (Freeze)
// so that they miss what the primary accepts: once the primary is dead it
// thaws them, and they find no primary to catch up from. Sentinel can then
// promote a replica that lacks writes another replica acknowledged (WAIT).
func (s *Sentinel) KillPrimaryThawing(t testing.TB, frozen ...*Server) Failover {
	t.Helper()
	return s.fault(t, "SIGKILL", func(ctx context.Context, old *Server) error {
		return killThawing(t, "KillPrimaryThawing", old, frozen)
	}, func(old, primary *Server) error {
		return s.restartAsReplica(old, primary)
	})
}

// killThawing kills the primary old, then thaws the frozen replicas.
func killThawing(t testing.TB, op string, old *Server, frozen []*Server) error {
	if err := old.process(t, op).Kill(); err != nil {
		return err
	}
	for _, r := range frozen {
		if err := r.process(t, op).Thaw(); err != nil {
			return err
		}
	}
	return nil
}

// KillPrimaryLagging makes Sentinel promote a replica that certainly lags:
// it stops both replicas (SIGSTOP) and closes their links on the primary
// (CLIENT KILL TYPE replica), so that nothing the primary accepts from then
// on reaches them; it runs during, while the primary alone takes writes;
// then it kills the primary and resumes the replicas, which find no
// primary to catch up from, and waits until Sentinel promotes one. The
// killed server is restarted empty as a replica of the new primary, as
// KillPrimary does. Failover.Behind is the promoted replica's lag.
func (s *Sentinel) KillPrimaryLagging(t testing.TB, during func()) Failover {
	t.Helper()
	var cut, behind int64 // the old primary's offset when it is killed; the lag
	fo := s.fault(t, "lagging SIGKILL", func(ctx context.Context, old *Server) error {
		var replicas []*Server
		for _, d := range s.data {
			if d != old {
				replicas = append(replicas, d)
				if err := d.process(t, "KillPrimaryLagging").Freeze(); err != nil {
					return err
				}
			}
		}
		c := redis.NewClient(&redis.Options{Addr: old.addr, DisableIdentity: true})
		defer c.Close()
		if err := c.Do(ctx, "CLIENT", "KILL", "TYPE", "replica").Err(); err != nil {
			return err
		}
		for {
			info, err := c.Info(ctx, "replication").Result()
			if err == nil && strings.Contains(info, "connected_slaves:0") {
				break
			}
			if ctx.Err() != nil {
				return fmt.Errorf("replicas still linked: %v", err)
			}
			time.Sleep(time.Millisecond)
		}
		during()
		var err error
		if cut, err = replOffset(ctx, c, "master_repl_offset"); err != nil {
			return err
		}
		return killThawing(t, "KillPrimaryLagging", old, replicas)
	}, func(old, primary *Server) error {
		// A promoted replica starts a new replication history at the
		// offset it had reached, plus one (second_repl_offset).
		c := redis.NewClient(&redis.Options{Addr: primary.addr, DisableIdentity: true})
		defer c.Close()
		at, err := replOffset(context.Background(), c, "second_repl_offset")
		if err != nil {
			return err
		}
		behind = cut - (at - 1)
		return s.restartAsReplica(old, primary)
	})
	fo.Behind = behind
	return fo
}

// replOffset reads one offset of INFO replication.
func replOffset(ctx context.Context, c *redis.Client, field string) (int64, error) {
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strconv.ParseInt(v, 10, 64)
		}
	}
	return 0, fmt.Errorf("no %s in INFO replication", field)
}

// FreezePrimary stops the primary with SIGSTOP, holds it frozen until the
// sentinels have promoted a replica, then thaws it. Sentinel demotes it;
// whatever it accepted from clients that still reached it (commands sent
// before or during the freeze run when it thaws) is lost in its resync.
// It returns once the thawed server replicates the new primary.
func (s *Sentinel) FreezePrimary(t testing.TB) Failover {
	t.Helper()
	return s.fault(t, "SIGSTOP", func(ctx context.Context, old *Server) error {
		return old.process(t, "FreezePrimary").Freeze()
	}, func(old, primary *Server) error {
		return old.process(t, "FreezePrimary").Thaw()
	})
}

// fault applies do to the primary, waits until the sentinels agree on
// another, runs after (which may be nil), then waits for the topology to
// settle.
func (s *Sentinel) fault(t testing.TB, what string, do func(context.Context, *Server) error, after func(old, primary *Server) error) Failover {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), sentinelWait)
	defer cancel()
	oldAddr, err := s.agreedPrimary(ctx)
	if err != nil {
		t.Fatalf("redistest: before %s: %v", what, err)
	}
	old := s.server(t, oldAddr)
	start := time.Now()
	if err := do(ctx, old); err != nil {
		t.Fatalf("redistest: %s: %v", what, err)
	}
	newAddr, err := s.waitPrimaryMoves(ctx, oldAddr)
	if err != nil {
		t.Fatalf("redistest: after %s of %s: %v\n%s", what, oldAddr, err, s.logs())
	}
	took := time.Since(start)
	if after != nil {
		if err := after(old, s.server(t, newAddr)); err != nil {
			t.Fatalf("redistest: after %s: %v", what, err)
		}
	}
	// On busy cores Sentinel may call the new primary down too and fail
	// over again; the fault ends when the topology settles around whichever
	// primary the sentinels then agree on.
	for {
		newAddr, err = s.agreedPrimary(ctx)
		if err == nil {
			wait, cancel := context.WithTimeout(ctx, 2*SentinelFailoverTimeout)
			err = s.waitSettled(wait, newAddr)
			cancel()
			if err == nil {
				break
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("redistest: after %s: %v\n%s", what, err, s.logs())
		}
	}
	primary := s.server(t, newAddr)
	return Failover{Old: old, New: primary, Took: took}
}

// restartAsReplica starts a killed data server again on its port, empty,
// replicating primary.
func (s *Sentinel) restartAsReplica(old, primary *Server) error {
	base := old.args
	if i := slices.Index(base, "--replicaof"); i >= 0 {
		base = slices.Delete(slices.Clone(base), i, i+3)
	}
	old.args = append(slices.Clone(base), "--replicaof", "127.0.0.1", strconv.Itoa(primary.port))
	if err := old.relaunch(s.bin); err != nil {
		return fmt.Errorf("restart %s: %w", old.addr, err)
	}
	return nil
}

// agreedPrimary returns the primary's address once every sentinel names
// the same one.
func (s *Sentinel) agreedPrimary(ctx context.Context) (string, error) {
	return s.waitPrimary(ctx, func(string) bool { return true })
}

func (s *Sentinel) waitPrimaryMoves(ctx context.Context, from string) (string, error) {
	return s.waitPrimary(ctx, func(addr string) bool { return addr != from })
}

// waitPrimary waits until every sentinel names the same primary and ok
// accepts it.
func (s *Sentinel) waitPrimary(ctx context.Context, ok func(string) bool) (string, error) {
	var last []string
	for {
		names, err := s.primaries(ctx)
		if err == nil && len(names) == 1 && ok(names[0]) {
			return names[0], nil
		}
		if err == nil {
			last = names
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("sentinels name %v (last error: %v): %w", last, err, ctx.Err())
		case <-time.After(sentinelPeriod / 4):
		}
	}
}

// primaries returns the distinct primaries the sentinels name.
func (s *Sentinel) primaries(ctx context.Context) ([]string, error) {
	var names []string
	for _, sen := range s.sentinels {
		c := sentinelClient(sen.addr)
		hp, err := c.GetMasterAddrByName(ctx, sentinelMasterName).Result()
		_ = c.Close()
		if err != nil {
			return nil, err
		}
		if len(hp) != 2 {
			return nil, fmt.Errorf("GET-MASTER-ADDR-BY-NAME: %v", hp)
		}
		addr := hp[0] + ":" + hp[1]
		if !slices.Contains(names, addr) {
			names = append(names, addr)
		}
	}
	return names, nil
}

// waitSettled waits until primary is a primary with both other data
// servers linked to it, and every sentinel sees them as healthy replicas
// and sees the two other sentinels: the state in which the next failover
// can start at once.
func (s *Sentinel) waitSettled(ctx context.Context, primary string) error {
	var why error
	for {
		if why = s.settled(ctx, primary); why == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", why, ctx.Err())
		case <-time.After(sentinelPeriod / 4):
		}
	}
}

func (s *Sentinel) settled(ctx context.Context, primary string) error {
	c := redis.NewClient(&redis.Options{Addr: primary, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second})
	info, err := c.Info(ctx, "replication").Result()
	_ = c.Close()
	if err != nil {
		return fmt.Errorf("INFO of the primary %s: %w", primary, err)
	}
	if !strings.Contains(info, "role:master") {
		return fmt.Errorf("%s is not a primary yet", primary)
	}
	for _, d := range s.data {
		if d.addr != primary && !strings.Contains(info, "port="+strconv.Itoa(d.port)+",state=online") {
			return fmt.Errorf("replica %s not online on %s", d.addr, primary)
		}
	}
	for _, sen := range s.sentinels {
		if err := s.sentinelSees(ctx, sen, primary); err != nil {
			return fmt.Errorf("sentinel %s: %w", sen.addr, err)
		}
	}
	return nil
}

func (s *Sentinel) sentinelSees(ctx context.Context, sen *Server, primary string) error {
	c := sentinelClient(sen.addr)
	defer c.Close()
	hp, err := c.GetMasterAddrByName(ctx, sentinelMasterName).Result()
	if err != nil {
		return err
	}
	if len(hp) != 2 || hp[0]+":"+hp[1] != primary {
		return fmt.Errorf("names primary %v, want %s", hp, primary)
	}
	m, err := c.Master(ctx, sentinelMasterName).Result()
	if err != nil {
		return err
	}
	if m["flags"] != "master" {
		return fmt.Errorf("primary flags %q", m["flags"])
	}
	replicas, err := c.Replicas(ctx, sentinelMasterName).Result()
	if err != nil {
		return err
	}
	healthy := 0
	for _, r := range replicas {
		if r["flags"] == "slave" && r["master-link-status"] == "ok" &&
			r["master-host"]+":"+r["master-port"] == primary {
			healthy++
		}
	}
	if healthy != len(s.data)-1 {
		return fmt.Errorf("sees %d healthy replicas of %d: %v", healthy, len(s.data)-1, replicas)
	}
	peers, err := c.Sentinels(ctx, sentinelMasterName).Result()
	if err != nil {
		return err
	}
	if len(peers) != len(s.sentinels)-1 {
		return fmt.Errorf("sees %d other sentinels, want %d", len(peers), len(s.sentinels)-1)
	}
	for _, p := range peers {
		if p["flags"] != "sentinel" {
			return errors.New("a peer sentinel is flagged " + p["flags"])
		}
	}
	return nil
}

// logs returns the events in each sentinel's log (its lines at warning
// level, marked '#'), for a failure message.
func (s *Sentinel) logs() string {
	var b strings.Builder
	for _, sen := range s.sentinels {
		fmt.Fprintf(&b, "sentinel %s:\n", sen.addr)
		text, _ := os.ReadFile(filepath.Join(sen.dir, "sentinel.log"))
		for _, line := range strings.Split(string(text), "\n") {
			if strings.Contains(line, " # ") {
				fmt.Fprintf(&b, "  %s\n", line)
			}
		}
	}
	for _, d := range s.data {
		lines := strings.Split(tail(filepath.Join(d.dir, "redis.log")), "\n")
		fmt.Fprintf(&b, "server %s:\n  %s\n", d.addr, strings.Join(lines[max(0, len(lines)-12):], "\n  "))
	}
	return b.String()
}

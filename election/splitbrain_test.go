package election_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/internal/redistest"
)

// The helper process's settings travel in the environment; without
// helperAddr, TestHelperLeaderProcess returns at once.
const (
	helperAddr   = "ELECTION_HELPER_ADDR"
	helperPrefix = "ELECTION_HELPER_PREFIX"
	helperKey    = "ELECTION_HELPER_KEY"
	helperTTL    = "ELECTION_HELPER_TTL"
	helperRenew  = "ELECTION_HELPER_RENEW"
	helperTag    = "election-helper"
)

// TestHelperLeaderProcess is not a test: it is the old leader of the
// split-brain test, run in a process of its own (the test binary re-executed)
// so that it can be frozen for real with SIGSTOP. It reports to the parent on
// stdout, one line per event, with wall-clock times the parent can compare
// with its own.
//
// Its fn is a writer that checked once that it leads and then keeps writing
// with its term's Fencer every 10ms, as code would that was paused between
// its check and its write. On waking from a pause it first reports what it
// can see (its context, IsLeader) and then writes.
func TestHelperLeaderProcess(t *testing.T) {
	addr := os.Getenv(helperAddr)
	if addr == "" {
		return
	}
	var mu sync.Mutex
	say := func(kind string, kv ...any) {
		mu.Lock()
		defer mu.Unlock()
		line := fmt.Sprintf("%s %s at=%d", helperTag, kind, time.Now().UnixNano())
		for i := 0; i+1 < len(kv); i += 2 {
			line += fmt.Sprintf(" %v=%v", kv[i], kv[i+1])
		}
		fmt.Println(line)
	}
	ttl, _ := time.ParseDuration(os.Getenv(helperTTL))
	renew, _ := time.ParseDuration(os.Getenv(helperRenew))
	key := os.Getenv(helperKey)
	c := redis.NewClient(&redis.Options{Addr: addr, DisableIdentity: true, ContextTimeoutEnabled: true, ReadTimeout: time.Second})
	defer c.Close()
	store, err := fence.New(c)
	if err != nil {
		t.Fatal(err)
	}
	var e *election.Elector
	e, err = election.New(c, election.Config{
		Name: "splitbrain", NodeID: "child", Prefix: os.Getenv(helperPrefix),
		TTL: ttl, RenewInterval: renew, RetryInterval: renew, Fence: store,
		Observer: election.Observer{
			OnElected: func(epoch int64) { say("elected", "epoch", epoch) },
			OnDemoted: func(epoch int64, r election.Reason) {
				say("demoted", "epoch", epoch, "reason", strings.ReplaceAll(r.String(), " ", "_"))
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	fn := func(ctx context.Context, term election.Term) error {
		last := time.Now()
		for {
			if gap := time.Since(last); gap > 200*time.Millisecond {
				say("woke", "gap_ms", gap.Milliseconds(), "ctx_alive", ctx.Err() == nil, "is_leader", e.IsLeader())
			}
			last = time.Now()
			wctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err := term.Fencer.Set(wctx, key, fmt.Sprintf("child epoch %d", term.Epoch))
			cancel()
			result := "ok"
			var stale *fence.StaleError
			switch {
			case errors.As(err, &stale):
				result = fmt.Sprintf("stale_highest_%d", stale.Highest)
			case err != nil:
				result = "error"
			}
			say("write", "epoch", term.Epoch, "result", result, "ctx_alive", ctx.Err() == nil)
			time.Sleep(10 * time.Millisecond)
		}
	}
	_ = e.Run(context.Background(), fn) // runs until the parent kills this process
}

// childEvent is one line of the helper's report.
type childEvent struct {
	kind string
	at   time.Time
	kv   map[string]string
}

type child struct {
	cmd *exec.Cmd

	mu     sync.Mutex
	events []childEvent
	stderr strings.Builder
}

// startChild runs TestHelperLeaderProcess in a new process. The process is
// killed at cleanup, whatever state the test left it in (SIGKILL ends a
// stopped process too), and with this one if this one dies.
func startChild(t *testing.T, env ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^TestHelperLeaderProcess$", "-test.count=1")}
	c.cmd.Env = append(os.Environ(), env...)
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var readers sync.WaitGroup
	readers.Add(2)
	go func() { defer readers.Done(); c.read(stdout) }()
	go func() {
		defer readers.Done()
		b, _ := io.ReadAll(stderr)
		c.mu.Lock()
		c.stderr.Write(b)
		c.mu.Unlock()
	}()
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		readers.Wait()
		_ = c.cmd.Wait()
		if t.Failed() {
			c.mu.Lock()
			t.Logf("helper stderr: %s", c.stderr.String())
			c.mu.Unlock()
		}
	})
	return c
}

func (c *child) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != helperTag {
			continue
		}
		ev := childEvent{kind: f[1], kv: map[string]string{}}
		for _, p := range f[2:] {
			k, v, _ := strings.Cut(p, "=")
			ev.kv[k] = v
		}
		ns, _ := strconv.ParseInt(ev.kv["at"], 10, 64)
		ev.at = time.Unix(0, ns)
		c.mu.Lock()
		c.events = append(c.events, ev)
		c.mu.Unlock()
	}
}

// next waits for the first event of kind at index from or later that
// satisfies ok (nil for any), and returns it with its index.
func (c *child) next(t *testing.T, within time.Duration, from int, kind string, ok func(childEvent) bool) (childEvent, int) {
	t.Helper()
	var got childEvent
	idx := -1
	waitFor(t, within, "helper event "+kind, func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		for i := from; i < len(c.events); i++ {
			if e := c.events[i]; e.kind == kind && (ok == nil || ok(e)) {
				got, idx = e, i
				return true
			}
		}
		return false
	})
	return got, idx
}

func (c *child) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := c.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v to helper: %v", sig, err)
	}
}

// The old leader runs in a process of its own, which is frozen with SIGSTOP
// for 1.5s under a 400ms lease. While it is frozen its lease expires and
// this process is elected; its fenced write with the new epoch is accepted.
// When the old leader thaws it writes with its old epoch before anything
// else and is refused, and it steps down. Both believed they led from the
// new election until that step-down: a window set by how long the old
// leader could not check, far longer than the TTL.
func TestSplitBrainWindowOnAFrozenProcessOutlastsTheTTLAndOnlyTheEpochRefusesTheOldLeader(t *testing.T) {
	s := redistest.Start(t)
	const ttl, renew, freeze = 400 * time.Millisecond, 100 * time.Millisecond, 1500 * time.Millisecond
	const slack = 250 * time.Millisecond
	prefix := s.Prefix() + "election:"
	key := s.Prefix() + "splitbrain:data"

	old := startChild(t,
		helperAddr+"="+s.Addr(), helperPrefix+"="+prefix, helperKey+"="+key,
		helperTTL+"="+ttl.String(), helperRenew+"="+renew.String())
	elected, _ := old.next(t, 20*time.Second, 0, "elected", nil)
	oldEpoch := elected.kv["epoch"]
	old.next(t, 5*time.Second, 0, "write", func(e childEvent) bool { return e.kv["result"] == "ok" })

	c := client(t, s)
	store, err := fence.New(c)
	if err != nil {
		t.Fatal(err)
	}
	type write struct {
		epoch int64
		err   error
	}
	wrote := make(chan write, 1)
	cfg := baseConfig(s, "splitbrain", "parent", ttl, renew)
	cfg.Fence = store
	p := startNode(t, c, cfg, func(ctx context.Context, term election.Term) error {
		wrote <- write{term.Epoch, term.Fencer.Set(ctx, key, fmt.Sprintf("parent epoch %d", term.Epoch))}
		<-ctx.Done()
		return nil
	})
	if f := p.rec.nth(t, 5*time.Second, "follower", 1); strconv.FormatInt(f.leader.Epoch, 10) != oldEpoch {
		t.Fatalf("parent follows epoch %d, helper was elected with %s", f.leader.Epoch, oldEpoch)
	}

	frozen := time.Now()
	old.signal(t, syscall.SIGSTOP)
	won := p.rec.nth(t, ttl+time.Second, "elected", 1)
	w := <-wrote
	if w.err != nil {
		t.Fatalf("new leader's fenced write with epoch %d: %v", w.epoch, w.err)
	}
	if !p.e.IsLeader() {
		t.Fatal("new leader does not report itself leader while the old one is frozen")
	}
	time.Sleep(time.Until(frozen.Add(freeze))) // the freeze is the point; nothing to wait for
	thawed := time.Now()
	old.signal(t, syscall.SIGCONT)

	woke, i := old.next(t, 5*time.Second, 0, "woke", nil)
	staleWrite, _ := old.next(t, 5*time.Second, i+1, "write", nil)
	demoted, _ := old.next(t, 5*time.Second, 0, "demoted", nil)

	if want := fmt.Sprintf("stale_highest_%d", w.epoch); staleWrite.kv["result"] != want {
		t.Errorf("old leader's first write on waking, with epoch %s: %s, want %s", staleWrite.kv["epoch"], staleWrite.kv["result"], want)
	}
	if got, err := store.Get(context.Background(), key); err != nil || got != fmt.Sprintf("parent epoch %d", w.epoch) {
		t.Errorf("data after the old leader's write: %q, %v; want the new leader's", got, err)
	}
	// IsLeader compares the clock with the term's local deadline, which
	// passed while the process was frozen: it is false from the first
	// instruction after the thaw. Only fn's context, cancelled by the
	// renewal goroutine once it runs, may still look alive at that moment.
	if woke.kv["is_leader"] != "false" {
		t.Errorf("old leader's IsLeader on waking: %s, want false (its deadline had passed)", woke.kv["is_leader"])
	}
	if r := demoted.kv["reason"]; r != "deadline_passed" {
		t.Errorf("old leader demoted for %s, want deadline_passed", r)
	}
	if demoted.kv["epoch"] != oldEpoch {
		t.Errorf("demoted epoch %s, want %s", demoted.kv["epoch"], oldEpoch)
	}

	failover := won.at.Sub(frozen)
	window := demoted.at.Sub(won.at)
	t.Logf("failover on a frozen process took %.1fms (lease %v, renew %v)", ms(failover), ttl, renew)
	t.Logf("split-brain window: %.1fms (lease TTL %v, freeze %v): new leader elected (epoch %d) -> old leader (epoch %s) stepped down %.1fms after SIGCONT",
		ms(window), ttl, freeze, won.epoch, oldEpoch, ms(demoted.at.Sub(thawed)))
	t.Logf("old leader on waking: fn's context alive %s, IsLeader %s; its first write: %s", woke.kv["ctx_alive"], woke.kv["is_leader"], staleWrite.kv["result"])
	if failover < ttl-renew-5*time.Millisecond || failover > ttl+slack {
		t.Errorf("failover took %v, want between %v and %v", failover, ttl-renew, ttl+slack)
	}
	if window <= ttl || window >= freeze+renew+slack {
		t.Errorf("split-brain window %v, want longer than the TTL %v and shorter than freeze + renew + slack (%v)", window, ttl, freeze+renew+slack)
	}
	if !p.e.IsLeader() {
		t.Error("new leader lost its lease while the old one woke")
	}
}

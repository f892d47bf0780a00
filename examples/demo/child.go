package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/fence"
)

// childEnv carries the child leader's configuration. When it is set, the
// binary is the child leader and nothing else. It is not a flag, so that a
// test binary (whose flags belong to package testing) can be the child too.
const childEnv = "REDIS_PRIMITIVES_DEMO_CHILD"

// childTag starts every line the child reports on stdout.
const childTag = "demo-child"

type childConfig struct {
	Addr    string `json:"addr"`
	Prefix  string `json:"prefix"`
	Name    string `json:"name"`
	Key     string `json:"key"`
	TTLMs   int64  `json:"ttl_ms"`
	RenewMs int64  `json:"renew_ms"`
}

func isChild() bool { return os.Getenv(childEnv) != "" }

// childMain is a leader that, once elected, writes to Key with its term's
// Fencer every 10 ms, as code would that checked once that it leads and
// then acts. It reports every event on stdout with wall-clock times the
// parent compares with its own. It runs until its stdin closes or it is
// killed.
func childMain() int {
	var cfg childConfig
	if err := json.Unmarshal([]byte(os.Getenv(childEnv)), &cfg); err != nil {
		fmt.Fprintf(os.Stderr, "demo child: bad %s: %v\n", childEnv, err)
		return 2
	}
	var mu sync.Mutex
	say := func(kind string, kv ...any) {
		mu.Lock()
		defer mu.Unlock()
		line := fmt.Sprintf("%s %s at=%d", childTag, kind, time.Now().UnixNano())
		for i := 0; i+1 < len(kv); i += 2 {
			line += fmt.Sprintf(" %v=%v", kv[i], kv[i+1])
		}
		fmt.Println(line)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { // the parent closes stdin, or died
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	c := redis.NewClient(&redis.Options{
		Addr: cfg.Addr, ContextTimeoutEnabled: true,
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond,
	})
	defer c.Close()
	renew := time.Duration(cfg.RenewMs) * time.Millisecond
	var e *election.Elector
	e, err := election.New(c, election.Config{
		Name: cfg.Name, NodeID: fmt.Sprintf("pid-%d", os.Getpid()), Prefix: cfg.Prefix,
		TTL: time.Duration(cfg.TTLMs) * time.Millisecond, RenewInterval: renew, RetryInterval: renew,
		Observer: election.Observer{
			OnElected: func(epoch int64) { say("elected", "epoch", epoch) },
			OnDemoted: func(epoch int64, r election.Reason) {
				say("demoted", "epoch", epoch, "reason", strings.ReplaceAll(r.String(), " ", "_"))
			},
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "demo child: %v\n", err)
		return 2
	}
	say("started", "pid", os.Getpid())
	fn := func(ctx context.Context, term election.Term) error {
		last := time.Now()
		for {
			// A gap far longer than the 10 ms sleep: the process was not
			// running. Say what it can see before it writes.
			if gap := time.Since(last); gap > 100*time.Millisecond {
				say("woke", "gap_ms", gap.Milliseconds(), "is_leader", e.IsLeader())
			}
			last = time.Now()
			sent := time.Now()
			wctx, wcancel := context.WithTimeout(context.Background(), time.Second)
			err := term.Fencer.Set(wctx, cfg.Key, fmt.Sprintf("old leader, epoch %d", term.Epoch))
			wcancel()
			result := "ok"
			var stale *fence.StaleError
			switch {
			case errors.As(err, &stale):
				result = "stale:" + strconv.FormatInt(stale.Highest, 10)
			case err != nil:
				result = "error"
			}
			say("write", "sent", sent.UnixNano(), "epoch", term.Epoch, "result", result)
			// Demoted: stop acting as leader. Unless the process was frozen
			// since this write was sent: then it goes round once more, and
			// writes on waking like code paused between its check and its
			// write, which is what the parent watches for.
			if ctx.Err() != nil && time.Since(sent) < 100*time.Millisecond {
				return nil
			}
			time.Sleep(10 * time.Millisecond) // deliberately deaf to ctx: the write above runs first on waking
		}
	}
	_ = e.Run(ctx, fn)
	return 0
}

// childEvent is one line of the child's report.
type childEvent struct {
	kind string
	at   time.Time
	kv   map[string]string
}

func (e childEvent) time(k string) time.Time {
	ns, _ := strconv.ParseInt(e.kv[k], 10, 64)
	return time.Unix(0, ns)
}

func (e childEvent) int(k string) int64 {
	n, _ := strconv.ParseInt(e.kv[k], 10, 64)
	return n
}

// child is a child leader process started by the parent.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser

	readers sync.WaitGroup
	stopped sync.Once

	mu      sync.Mutex
	events  []childEvent
	changed chan struct{} // closed and replaced at every event
	stderr  strings.Builder
}

// startChild starts this binary again as a child leader. It dies with this
// process (parent-death signal), and when its stdin closes.
func startChild(cfg childConfig) (*child, error) {
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	c := &child{cmd: exec.Command(exe), changed: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	c.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stderr, err := c.cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := c.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the child leader: %w", err)
	}
	c.readers.Add(2)
	go func() { defer c.readers.Done(); c.read(stdout) }()
	go func() {
		defer c.readers.Done()
		b, _ := io.ReadAll(stderr)
		c.mu.Lock()
		c.stderr.Write(b)
		c.mu.Unlock()
	}()
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != childTag {
			continue
		}
		ev := childEvent{kind: f[1], kv: map[string]string{}}
		for _, p := range f[2:] {
			k, v, _ := strings.Cut(p, "=")
			ev.kv[k] = v
		}
		ev.at = ev.time("at")
		c.mu.Lock()
		c.events = append(c.events, ev)
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
	}
}

// wait returns the first event of kind, at index from or later, that
// satisfies ok (nil for any), with its index.
func (c *child) wait(ctx context.Context, within time.Duration, from int, kind string, ok func(childEvent) bool) (childEvent, int, error) {
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		c.mu.Lock()
		for i := from; i < len(c.events); i++ {
			if e := c.events[i]; e.kind == kind && (ok == nil || ok(e)) {
				c.mu.Unlock()
				return e, i, nil
			}
		}
		changed := c.changed
		stderr := c.stderr.String()
		c.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return childEvent{}, 0, ctx.Err()
		case <-timer.C:
			return childEvent{}, 0, fmt.Errorf("child leader (pid %d): no %q event within %v %s", c.pid(), kind, within, strings.TrimSpace(stderr))
		}
	}
}

// all returns a copy of the events so far.
func (c *child) all() []childEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]childEvent(nil), c.events...)
}

func (c *child) signal(sig syscall.Signal) error {
	if err := c.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %v to the child leader (pid %d): %w", sig, c.pid(), err)
	}
	return nil
}

// stop kills the child, whatever state it is in (SIGKILL ends a stopped
// process too), and reaps it.
func (c *child) stop() {
	c.stopped.Do(func() {
		_ = c.cmd.Process.Kill()
		_ = c.stdin.Close()
		c.readers.Wait()
		_ = c.cmd.Wait()
	})
}

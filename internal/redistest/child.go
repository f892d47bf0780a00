package redistest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// A child is this program's own binary started again as a helper process,
// so that a fault can be done to a whole process for real: frozen with
// SIGSTOP while it believes it leads, thawed, killed. It is the fault tool
// for what no signal to a Redis server can show, a client paused between
// its check and its write.
//
// The parent starts it with StartChild and a configuration; the child
// finds that configuration with ChildConfig, reports events with Report,
// one line each on stdout, and the parent waits for them with Child.Wait.
// Times in the events are wall-clock, so the parent can compare them with
// its own.

// childEnv carries the child's configuration as JSON. It is not a flag, so
// that a test binary, whose flags belong to package testing, can be a child.
const childEnv = "REDISTEST_CHILD"

// childTag starts every line a child reports; other output is ignored.
const childTag = "redistest-child"

// LeaderConfig is the configuration of a child leader: an election Name
// under Prefix on the server at Addr, and the Key it writes to with its
// term's fencer (WriteAsLeader).
type LeaderConfig struct {
	Addr, Prefix, Name, NodeID, Key string
	TTL, Renew                      time.Duration
}

// Event is one line a child reported.
type Event struct {
	Kind   string
	At     time.Time         // when the child reported it
	Fields map[string]string // the key=value pairs given to Report
}

// Int returns the field k as an integer, 0 if absent or not one.
func (e Event) Int(k string) int64 {
	n, _ := strconv.ParseInt(e.Fields[k], 10, 64)
	return n
}

// Time returns the field k, a time reported as a time.Time, as one.
func (e Event) Time(k string) time.Time { return time.Unix(0, e.Int(k)) }

// ChildConfig reports whether this process is a child started by
// StartChild and, if so, decodes its configuration into cfg.
func ChildConfig(cfg any) (bool, error) {
	v, ok := os.LookupEnv(childEnv)
	if !ok {
		return false, nil
	}
	if err := json.Unmarshal([]byte(v), cfg); err != nil {
		return true, fmt.Errorf("redistest: child configuration %s: %w", childEnv, err)
	}
	return true, nil
}

// ChildContext returns a context that ends when the parent stops the child
// (Child.Stop closes the child's stdin) or dies.
func ChildContext() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	return ctx, cancel
}

var reportMu sync.Mutex

// Report writes one event to stdout, for the parent: kind, the time now,
// and kv as key=value pairs (keys and values without spaces). A time.Time
// value is written as Unix nanoseconds (read it with Event.Time); integers,
// epochs included, are written in full.
func Report(kind string, kv ...any) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s at=%d", childTag, kind, time.Now().UnixNano())
	for i := 0; i+1 < len(kv); i += 2 {
		v := kv[i+1]
		if t, ok := v.(time.Time); ok {
			v = t.UnixNano()
		}
		fmt.Fprintf(&b, " %v=%v", kv[i], v)
	}
	reportMu.Lock()
	defer reportMu.Unlock()
	fmt.Println(b.String())
}

// Child is a helper process started by StartChild. Its methods are safe
// for concurrent use; Freeze, Thaw, Kill and Pid are Process's.
type Child struct {
	*Process
	stdin *os.File

	readers sync.WaitGroup
	stopped sync.Once

	mu      sync.Mutex
	events  []Event
	changed chan struct{} // closed and replaced at every event
	stderr  strings.Builder
}

// StartChild starts this program's binary again with args, as a child
// whose configuration is cfg (made JSON). The child dies with this process
// (parent-death signal) and when Stop closes its stdin. A test binary
// passes "-test.run=^TestName$" in args to run only the child's test.
func StartChild(cfg any, args ...string) (*Child, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("redistest: child configuration: %w", err)
	}
	exe, err := os.Executable()
	if err != nil {
		exe = os.Args[0]
	}
	// Pipes of our own, not exec's: cmd.Wait, which the Process calls as
	// soon as the child exits, would close exec's before we read them out.
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, closeAll(err, inR, inW)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		return nil, closeAll(err, inR, inW, outR, outW)
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	p, err := start(cmd)
	_ = closeAll(nil, inR, outW, errW) // the child's ends, now its own
	if err != nil {
		return nil, closeAll(err, inW, outR, errR)
	}
	c := &Child{Process: p, stdin: inW, changed: make(chan struct{})}
	c.readers.Add(2)
	go func() { defer c.readers.Done(); defer outR.Close(); c.read(outR) }()
	go func() {
		defer c.readers.Done()
		defer errR.Close()
		b, _ := io.ReadAll(errR)
		c.mu.Lock()
		c.stderr.Write(b)
		c.mu.Unlock()
	}()
	return c, nil
}

func closeAll(err error, files ...*os.File) error {
	for _, f := range files {
		f.Close()
	}
	return err
}

func (c *Child) read(r io.Reader) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || f[0] != childTag {
			continue
		}
		ev := Event{Kind: f[1], Fields: map[string]string{}}
		for _, p := range f[2:] {
			k, v, _ := strings.Cut(p, "=")
			ev.Fields[k] = v
		}
		ev.At = ev.Time("at")
		c.mu.Lock()
		c.events = append(c.events, ev)
		close(c.changed)
		c.changed = make(chan struct{})
		c.mu.Unlock()
	}
}

// Wait returns the first event of kind, at index from or later, that
// satisfies ok (nil for any), with its index. It fails after within, with
// what the child wrote on stderr, or when ctx ends.
func (c *Child) Wait(ctx context.Context, within time.Duration, from int, kind string, ok func(Event) bool) (Event, int, error) {
	timer := time.NewTimer(within)
	defer timer.Stop()
	for {
		c.mu.Lock()
		for i := from; i < len(c.events); i++ {
			if e := c.events[i]; e.Kind == kind && (ok == nil || ok(e)) {
				c.mu.Unlock()
				return e, i, nil
			}
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return Event{}, 0, ctx.Err()
		case <-timer.C:
			return Event{}, 0, fmt.Errorf("redistest: child (pid %d): no %q event within %v %s",
				c.Pid(), kind, within, strings.TrimSpace(c.Stderr()))
		}
	}
}

// Events returns a copy of the events so far.
func (c *Child) Events() []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Event(nil), c.events...)
}

// Stderr returns what the child has written on stderr so far.
func (c *Child) Stderr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stderr.String()
}

// Stop kills the child, whatever state it is in (SIGKILL ends a stopped
// process too), and waits until it is reaped and its output read. It may
// be called more than once.
func (c *Child) Stop() {
	c.stopped.Do(func() {
		_ = c.stdin.Close()
		_ = c.Kill()
		c.readers.Wait()
	})
}

// WriteAsLeader is the body of a child leader: code that checked once that
// it leads and then writes, with write, every 10ms, as code would that was
// paused between its check and its write. It reports every write ("write":
// sent, epoch, result, ctx_alive) and, after a gap far longer than 10ms (the
// process was not running), what it can see on waking before it writes
// ("woke": gap_ms, ctx_alive, is_leader).
//
// It returns once ctx has ended, unless the process was frozen since its
// last write was sent: then it goes round once more and writes on waking,
// which is what a parent freezing it watches for.
func WriteAsLeader(ctx context.Context, epoch int64, write func(context.Context) (result string), isLeader func() bool) error {
	const every, gap = 10 * time.Millisecond, 100 * time.Millisecond
	last := time.Now()
	for {
		if d := time.Since(last); d > gap {
			Report("woke", "gap_ms", d.Milliseconds(), "ctx_alive", ctx.Err() == nil, "is_leader", isLeader())
		}
		last = time.Now()
		sent := time.Now()
		wctx, cancel := context.WithTimeout(context.Background(), time.Second)
		result := write(wctx)
		cancel()
		Report("write", "sent", sent, "epoch", epoch, "result", result, "ctx_alive", ctx.Err() == nil)
		if ctx.Err() != nil && time.Since(sent) < gap {
			return nil
		}
		time.Sleep(every) // deliberately deaf to ctx: the write above runs first on waking
	}
}

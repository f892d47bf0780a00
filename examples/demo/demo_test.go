package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/redistest"
)

func TestMain(m *testing.M) {
	// The split-brain scenario starts this binary again as its old leader.
	if code, child := childMain(); child {
		os.Exit(code)
	}
	redistest.VerifyMain(m)
}

// Each row of the table, as the demo prints it. The figures vary from run
// to run; the shape, and the direction each one must point, do not.
var rowShapes = map[string]*regexp.Regexp{
	"fixed-window-boundary":      regexp.MustCompile(`naive fixed window admitted (\d+) in (\d+) ms against 5 per 1000 ms \| sliding log admitted (\d+)`),
	"sliding-window-concurrency": regexp.MustCompile(`client-side sliding window admitted (\d+)/100 against 5 \| Lua admitted (\d+)/100`),
	"stale-write":                regexp.MustCompile(`stale write without fencing: clobbered \(token (\d+) wrote over token (\d+)\) \| with fencing: refused \(token (\d+) < (\d+)\)`),
	"release-after-expiry":       regexp.MustCompile(`bare DEL deleted the next holder's lock \| compare-and-delete deleted nothing`),
	"crashed-semaphore-holders":  regexp.MustCompile(`INCR/DECR still full (\d+) ms after both holders crashed \| leased: a place back ([\d.]+) ms after the permits' expiry \(ttl 300 ms\), token (\d+) > (\d+)`),
	"leader-election": regexp.MustCompile(`clean handover ([\d.]+) ms \| failover (\d+) ms \(lease 400 ms\) \| ` +
		`split-brain window (\d+) ms \(lease 400 ms, freeze 1500 ms\) \| old leader's write refused \(epoch (\d+) < (\d+)\)`),
}

func TestDemoShowsEveryFailureNextToItsFixAndExitsZero(t *testing.T) {
	s := redistest.Start(t)
	t.Setenv("REDIS_ADDR", s.Addr()) // the shared-server path: keys under a prefix of the demo's own
	dir := t.TempDir()
	jsonPath, svgPath := filepath.Join(dir, "demo.json"), filepath.Join(dir, "demo.svg")
	var stdout, stderr syncBuffer
	code := run(context.Background(), []string{"-json", jsonPath, "-svg", svgPath}, &stdout, &stderr)
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	if code != exitOK {
		t.Fatalf("exit code %d, want %d", code, exitOK)
	}

	// The table: every row, ok, with figures pointing the right way.
	out := stdout.String()
	n := func(s string) float64 {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for id, re := range rowShapes {
		m := re.FindStringSubmatch(out)
		if m == nil {
			t.Errorf("row %s missing or misshapen: want %s", id, re)
			continue
		}
		switch id {
		case "fixed-window-boundary":
			if n(m[1]) <= 5 || n(m[3]) != 5 {
				t.Errorf("%s: naive admitted %s, sliding log %s; want more than 5, and exactly 5", id, m[1], m[3])
			}
		case "sliding-window-concurrency":
			if n(m[1]) <= 5 || n(m[2]) != 5 {
				t.Errorf("%s: client-side admitted %s, Lua %s; want more than 5, and exactly 5", id, m[1], m[2])
			}
		case "stale-write":
			if n(m[1]) >= n(m[2]) || n(m[3]) >= n(m[4]) {
				t.Errorf("%s: the stale token must be the lower one: %s", id, m[0])
			}
		case "crashed-semaphore-holders":
			if n(m[1]) <= 300 || n(m[2]) >= 100 || n(m[3]) <= n(m[4]) {
				t.Errorf("%s: want still full past the TTL, a place back within 100 ms of the expiry, a larger token: %s", id, m[0])
			}
		case "leader-election":
			handover, failover, window := n(m[1]), n(m[2]), n(m[3])
			if handover >= failover || window <= 400 || n(m[4]) >= n(m[5]) {
				t.Errorf("%s: handover %vms, failover %vms, window %vms, epochs %s < %s: want handover < failover, window > lease, old < new",
					id, handover, failover, window, m[4], m[5])
			}
		}
	}
	if strings.Contains(out, "FAIL") || !strings.Contains(out, "every failure showed and every fix held") {
		t.Error("the table does not say every row held")
	}
	if got := strings.Count(stderr.String(), "demo: ["); got != len(scenarios) {
		t.Errorf("%d progress lines, want one per scenario (%d)", got, len(scenarios))
	}

	// The JSON: the same rows, every cell with figures.
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatalf("-json output does not parse: %v", err)
	}
	if !rep.OK || len(rep.Rows) != len(rowShapes) {
		t.Fatalf("json: ok=%v with %d rows, want ok with %d", rep.OK, len(rep.Rows), len(rowShapes))
	}
	for _, r := range rep.Rows {
		if _, known := rowShapes[r.ID]; !known || !r.OK || len(r.Cells) < 2 {
			t.Errorf("json row %+v", r)
		}
		if !strings.Contains(out, r.Text()) {
			t.Errorf("json row %s says %q, which the table does not", r.ID, r.Text())
		}
		for _, c := range r.Cells {
			if len(c.Figures) == 0 {
				t.Errorf("json row %s: cell %q has no figures", r.ID, c.Text)
			}
		}
	}
	if len(rep.Timelines) != 3 {
		t.Errorf("%d timelines, want 3 (without fencing, with fencing, split brain)", len(rep.Timelines))
	}

	// The SVG: well-formed XML, with the refused writes and the windows.
	svg, err := os.ReadFile(svgPath)
	if err != nil {
		t.Fatal(err)
	}
	checkWellFormedSVG(t, svg)
	for _, want := range []string{"write refused", "overwrote B", "A acts on an expired lease", "split brain: both believe they lead", "frozen (SIGSTOP)"} {
		if !bytes.Contains(svg, []byte(want)) {
			t.Errorf("svg lacks %q", want)
		}
	}

	// Against a shared server the demo leaves nothing behind.
	c := redis.NewClient(s.Options())
	defer c.Close()
	if keys, err := c.Keys(context.Background(), "demo:*").Result(); err != nil || len(keys) > 0 {
		t.Errorf("keys left on the shared server: %v, %v", keys, err)
	}
}

func checkWellFormedSVG(t *testing.T, b []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	root := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("svg is not well-formed XML: %v", err)
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
			if se.Name.Space != "http://www.w3.org/2000/svg" {
				t.Errorf("root namespace %q", se.Name.Space)
			}
		}
	}
	if root != "svg" {
		t.Fatalf("root element %q, want svg", root)
	}
}

// Ctrl-C in the middle of the election scenario, possibly while the old
// leader is frozen: the demo stops its redis-server and kills its child,
// and reaps both.
func TestInterruptStopsTheServerItStartedAndTheChildLeader(t *testing.T) {
	t.Setenv("REDIS_ADDR", "") // the demo starts a server of its own
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuffer
	done := make(chan int, 1)
	go func() { done <- run(ctx, nil, &stdout, &stderr) }()

	// Interrupt once the election scenario has been running for a while.
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(stderr.String(), "demo: [4/") {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("the demo did not reach the election scenario within 20s:\n%s", stderr.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(1200 * time.Millisecond) // about when the split-brain leader is frozen; any moment will do
	interrupted := time.Now()
	cancel()
	var code int
	select {
	case code = <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the demo did not return within 15s of the interrupt")
	}
	t.Logf("returned %v after the interrupt with code %d\nstderr:\n%s", time.Since(interrupted).Round(time.Millisecond), code, stderr.String())
	if code != exitInterrupted {
		t.Errorf("exit code %d, want %d", code, exitInterrupted)
	}
	if stdout.Len() != 0 {
		t.Errorf("an interrupted demo printed a table:\n%s", stdout.String())
	}
	m := regexp.MustCompile(`started by the demo \(pid (\d+)\)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatal("the demo did not say which server it started")
	}
	pid, _ := strconv.Atoi(m[1])
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("redis-server pid %d still exists after the demo returned (kill 0: %v)", pid, err)
	}
	if kids := children(t); len(kids) > 0 {
		t.Errorf("processes of this test still around (running or unreaped): %v", kids)
	}
}

// children lists the processes whose parent is this process.
func children(t *testing.T) []string {
	t.Helper()
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	var out []string
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut at the last ')'.
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[1] == me {
			out = append(out, s[:i+1]+" "+f[0])
		}
	}
	return out
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

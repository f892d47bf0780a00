package redistest_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
)

// TestHelperChild is not a test: it is the child of the test below, this
// test binary started again. Without a child configuration it returns.
func TestHelperChild(t *testing.T) {
	var every time.Duration
	if child, err := redistest.ChildConfig(&every); !child || err != nil {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	ctx, cancel := redistest.ChildContext()
	defer cancel()
	for i := 0; ctx.Err() == nil; i++ {
		redistest.Report("tick", "n", i, "sent", time.Now())
		time.Sleep(every)
	}
}

// A child frozen with SIGSTOP reports nothing until thawed, and then
// reports again with wall-clock times after the thaw.
func TestChildFrozenReportsNothingUntilThawed(t *testing.T) {
	const every = 10 * time.Millisecond
	c, err := redistest.StartChild(every, "-test.run=^TestHelperChild$", "-test.count=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Stop)
	ctx := context.Background()
	if _, _, err := c.Wait(ctx, 10*time.Second, 0, "tick", nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Freeze(); err != nil {
		t.Fatal(err)
	}
	frozen := time.Now()
	time.Sleep(50 * time.Millisecond) // lets a report in flight arrive
	before := len(c.Events())
	const held = 300 * time.Millisecond
	if ev, _, err := c.Wait(ctx, held, before, "tick", nil); err == nil {
		t.Fatalf("frozen child reported %+v", ev)
	}
	thawed := time.Now()
	if err := c.Thaw(); err != nil {
		t.Fatal(err)
	}
	// A report begun just before the freeze may carry an earlier time;
	// the child's own reports after it carry later ones.
	ev, _, err := c.Wait(ctx, 5*time.Second, before, "tick", func(e redistest.Event) bool { return !e.At.Before(thawed) })
	if err != nil {
		t.Fatal(err)
	}
	if ev.Time("sent").Before(thawed) {
		t.Errorf("report stamped %v after the thaw says it was sent at %v, before the thaw at %v", ev.At, ev.Time("sent"), thawed)
	}
	t.Logf("frozen %v; first report %v after the thaw", thawed.Sub(frozen), ev.At.Sub(thawed))
}

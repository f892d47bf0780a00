package election_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// leastPrivilege is the ACL the package doc lists: package lock's commands
// but Preflight's, and for the Fencer's Set, GET and SET (already there).
const leastPrivilege = "+evalsha +eval +evalsha_ro +eval_ro +get +set +pttl +del +pexpire +mget +time +publish +subscribe"

// A user limited to the election's keys and channels (~app:* &app:*) and
// the listed commands can lead, write through the term's Fencer, be read by
// Leader, resign and hand over to a follower woken by the release's
// notification; without any one of the listed commands some of that
// fails: the list is what election needs, and no more.
func TestUserLimitedToTheDocumentedACLLeadsHandsOverAndNeedsEveryCommand(t *testing.T) {
	s := redistest.Start(t, redistest.Own())
	admin := s.Client(t)
	ctx := context.Background()
	user := 0
	run := func(cmds string) error {
		user++
		name := fmt.Sprintf("app%d", user)
		rule := append([]any{"ACL", "SETUSER", name, "reset", "on", ">pw", "~app:*", "&app:*"}, anySlice(strings.Fields(cmds))...)
		for _, cmd := range [][]any{rule, {"SCRIPT", "FLUSH"}, {"CONFIG", "RESETSTAT"}} {
			if err := admin.Do(ctx, cmd...).Err(); err != nil {
				t.Fatal(err)
			}
		}
		c := client(t, s, func(o *redis.Options) { o.Username, o.Password = name, "pw" })
		defer c.Close()
		return electionPaths(ctx, admin, goredisadapter.New(c), fmt.Sprintf("app:election:%d:", user), fmt.Sprintf("app:data:%d", user))
	}
	if err := run(leastPrivilege); err != nil {
		t.Fatalf("with %s: %v", leastPrivilege, err)
	}
	for _, cmd := range strings.Fields(leastPrivilege) {
		less := strings.Join(slices.DeleteFunc(strings.Fields(leastPrivilege), func(c string) bool { return c == cmd }), " ")
		err := run(less)
		if err == nil {
			t.Errorf("without %s every path still works: it does not belong in the list", cmd)
			continue
		}
		t.Logf("without %-12s %v", cmd, err)
	}
}

// electionPaths runs two nodes on c: a leads, writes dataKey through its
// Fencer and renews, b follows, a third Elector that never runs reads Leader, a
// resigns, b is elected (woken by the release's notification, which
// admin's command statistics show) and writes with a higher epoch, b
// resigns. It returns the first failure; every wait is bounded.
func electionPaths(ctx context.Context, admin *redis.Client, c election.Client, prefix, dataKey string) error {
	const ttl, renew = 4 * time.Second, time.Second
	type node struct {
		e       *election.Elector
		elected chan int64
		follows chan struct{}
		wrote   chan error
		done    chan error
	}
	ctx, cancel := context.WithCancel(ctx)
	var nodes []*node
	defer func() {
		cancel()
		for _, n := range nodes {
			<-n.done
		}
	}()
	start := func(id string) (*node, error) {
		n := &node{elected: make(chan int64, 4), follows: make(chan struct{}, 4), wrote: make(chan error, 4), done: make(chan error, 1)}
		cfg := election.Config{Name: "job", NodeID: id, TTL: ttl, RenewInterval: renew, RetryInterval: renew, Prefix: prefix,
			Hook: func(_ context.Context, e election.Event) {
				switch e.Op {
				case "elected":
					n.elected <- e.Epoch
				case "follower":
					n.follows <- struct{}{}
				}
			}}
		e, err := election.New(c, cfg)
		if err != nil {
			return nil, err
		}
		n.e = e
		nodes = append(nodes, n)
		go func() {
			n.done <- e.Run(ctx, func(ctx context.Context, term election.Term) error {
				n.wrote <- term.Fencer.Set(ctx, dataKey, id)
				<-ctx.Done()
				return nil
			})
		}()
		return n, nil
	}
	// await waits for ch, failing when n's Run returns first or after 10s.
	await := func(what string, n *node, ch <-chan struct{}) error {
		select {
		case <-ch:
			return nil
		case err := <-n.done:
			n.done <- err
			return fmt.Errorf("%s: run returned %w", what, err)
		case <-time.After(10 * time.Second):
			return fmt.Errorf("%s: not within 10s", what)
		}
	}
	elected := func(n *node) (int64, error) {
		var epoch int64
		ch := make(chan struct{})
		go func() {
			select {
			case epoch = <-n.elected:
				close(ch)
			case <-ctx.Done():
			}
		}()
		if err := await("elected", n, ch); err != nil {
			return 0, err
		}
		ch2 := make(chan struct{})
		var werr error
		go func() {
			select {
			case werr = <-n.wrote:
				close(ch2)
			case <-ctx.Done():
			}
		}()
		if err := await("fenced write", n, ch2); err != nil {
			return 0, err
		}
		if werr != nil {
			return 0, fmt.Errorf("fenced write: %w", werr)
		}
		return epoch, nil
	}

	a, err := start("a")
	if err != nil {
		return err
	}
	epochA, err := elected(a)
	if err != nil {
		return fmt.Errorf("a: %w", err)
	}
	viewer, err := election.New(c, election.Config{Name: "job", Prefix: prefix, TTL: ttl})
	if err != nil {
		return err
	}
	// a renews: the lease's remaining TTL, as Leader reads it, goes up.
	renewed := make(chan struct{})
	var leaderErr error
	go func() {
		defer close(renewed)
		lowest := ttl
		for ctx.Err() == nil {
			l, err := viewer.Leader(ctx)
			switch {
			case err != nil || l.NodeID != "a" || l.Epoch != epochA:
				leaderErr = fmt.Errorf("leader: %+v, %v (a is no longer the leader it was)", l, err)
				return
			case l.TTL > lowest+renew/2: // it had run down, and is back up
				return
			}
			lowest = min(lowest, l.TTL)
			time.Sleep(10 * time.Millisecond)
		}
	}()
	if err := await("a renewed", a, renewed); err != nil {
		return err
	}
	if leaderErr != nil {
		return leaderErr
	}
	b, err := start("b")
	if err != nil {
		return err
	}
	follows := make(chan struct{})
	go func() {
		select {
		case <-b.follows:
			close(follows)
		case <-ctx.Done():
		}
	}()
	if err := await("b follows", b, follows); err != nil {
		return err
	}
	// b waits on the release channel, and has marked the lease so that its
	// release is published.
	lockKey, channel := prefix+"{job}", prefix+"{job}:released"
	marked := make(chan struct{})
	go func() {
		defer close(marked)
		for ctx.Err() == nil {
			subs, _ := admin.PubSubNumSub(ctx, channel).Result()
			v, _ := admin.Get(ctx, lockKey).Result()
			if subs[channel] == 1 && strings.HasPrefix(v, "*") {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	if err := await("b subscribed and marked the lease", b, marked); err != nil {
		return err
	}

	if l, err := viewer.Leader(ctx); err != nil || l.NodeID != "a" || l.Epoch != epochA {
		return fmt.Errorf("leader: %+v, %w", l, err)
	}

	resigned := time.Now()
	if err := a.e.Resign(ctx); err != nil {
		return fmt.Errorf("a resigns: %w", err)
	}
	epochB, err := elected(b)
	if err != nil {
		return fmt.Errorf("b: %w", err)
	}
	if took := time.Since(resigned); took > ttl/2 || epochB <= epochA {
		return fmt.Errorf("b elected %v after a resigned (want ≤ TTL/2 = %v), epoch %d after %d", took, ttl/2, epochB, epochA)
	}
	if err := b.e.Resign(ctx); err != nil {
		return fmt.Errorf("b resigns: %w", err)
	}
	if _, err := viewer.Leader(ctx); err != nil && !errors.Is(err, election.ErrNoLeader) {
		return fmt.Errorf("leader after both resigned: %w", err)
	}

	// The handover was the notification's: the release published, and b's
	// subscription was accepted.
	stats, err := admin.Info(ctx, "commandstats").Result()
	if err != nil {
		return err
	}
	for _, cmd := range []string{"publish", "subscribe"} {
		if n := commandCalls(stats, cmd); n < 1 {
			return fmt.Errorf("%s ran %d times: the handover was not woken by a notification", strings.ToUpper(cmd), n)
		}
	}
	return nil
}

// commandCalls returns the calls= figure of cmd in INFO commandstats.
func commandCalls(stats, cmd string) int {
	for _, line := range strings.Split(stats, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_"+cmd+":calls=")
		if ok {
			n, _ := strconv.Atoi(strings.SplitN(rest, ",", 2)[0])
			return n
		}
	}
	return 0
}

func anySlice(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

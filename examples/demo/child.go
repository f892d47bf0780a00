package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
)

// The split-brain and crash scenarios run their old leader in a process of
// its own, this very binary started again by redistest.StartChild, so that
// it can be frozen and killed for real. The child finds its configuration
// with redistest.ChildConfig and reports each event to the parent.

// childMain runs the child leader when this process is one, and reports
// whether it was. The leader, once elected, writes to the configured key
// with its term's Fencer every 10 ms (redistest.WriteAsLeader). It runs
// until the parent stops it or dies.
func childMain() (code int, child bool) {
	var cfg redistest.LeaderConfig
	child, err := redistest.ChildConfig(&cfg)
	if !child {
		return 0, false
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "demo child: %v\n", err)
		return 2, true
	}
	ctx, cancel := redistest.ChildContext()
	defer cancel()
	c := redis.NewClient(&redis.Options{
		Addr: cfg.Addr, ContextTimeoutEnabled: true,
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond,
	})
	defer c.Close()
	e, err := election.New(goredisadapter.New(c), election.Config{
		Name: cfg.Name, NodeID: fmt.Sprintf("pid-%d", os.Getpid()), Prefix: cfg.Prefix,
		TTL: cfg.TTL, RenewInterval: cfg.Renew, RetryInterval: cfg.Renew,
		Hook: func(_ context.Context, e election.Event) {
			switch e.Op {
			case "elected":
				redistest.Report("elected", "epoch", e.Epoch)
			case "demoted":
				redistest.Report("demoted", "epoch", e.Epoch, "reason", strings.ReplaceAll(e.Reason.String(), " ", "_"))
			}
		},
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "demo child: %v\n", err)
		return 2, true
	}
	_ = e.Run(ctx, func(ctx context.Context, term election.Term) error {
		return redistest.WriteAsLeader(ctx, term.Epoch, func(ctx context.Context) string {
			var stale *fence.StaleError
			switch err := term.Fencer.Set(ctx, cfg.Key, fmt.Sprintf("old leader, epoch %d", term.Epoch)); {
			case errors.As(err, &stale):
				return "stale:" + strconv.FormatInt(stale.Highest, 10)
			case err != nil:
				return "error"
			}
			return "ok"
		}, e.IsLeader)
	})
	return 0, true
}

// startChild starts this binary again as a child leader.
func startChild(cfg redistest.LeaderConfig) (*redistest.Child, error) {
	c, err := redistest.StartChild(cfg)
	if err != nil {
		return nil, fmt.Errorf("start the child leader: %w", err)
	}
	return c, nil
}

package goredisadapter

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/luascripts"
)

// ErrRingWait is EvalWait's error on a Ring (lock's WithReplicas): WAIT
// must follow its write on one connection, and a Ring does not tell which
// of its shards serves a key.
var ErrRingWait = errors.New("goredisadapter: WAIT after a write is not possible on a Ring")

// errZero is the error of every call on a Client that New did not make
// (a zero Client has no go-redis client to send on), and on New(nil): a
// primitive's constructor refuses it, but lock's CheckReplicaClocks, say,
// calls the clients it is given.
var errZero = errors.New("goredisadapter: a Client not made by New has no go-redis client")

// Client runs the primitives' calls on a go-redis client. Make it with
// New; it is safe for concurrent use.
type Client struct {
	rdb     redis.UniversalClient
	cluster *redis.ClusterClient // rdb, when it is a Cluster client
	ring    bool                 // rdb is a Ring, which routes by a hash it does not expose
	pipes   sync.Pool            // of redis.Pipeliner: an idle one holds no connection
}

// New returns the primitives' client on rdb: a *redis.Client (one server,
// or a Sentinel-monitored primary), a *redis.ClusterClient or a
// *redis.Ring. Pass it to any primitive's constructor. The calls run on
// rdb's own connections, options and hooks; closing rdb ends them.
//
// New(nil) is nil, which each primitive's constructor refuses with its
// ErrNilClient.
func New(rdb redis.UniversalClient) *Client {
	if luascripts.IsNil(rdb) {
		return nil
	}
	c := &Client{rdb: rdb}
	switch r := rdb.(type) {
	case *redis.ClusterClient:
		c.cluster = r
	case *redis.Ring:
		c.ring = true
	}
	c.pipes.New = func() any { return rdb.Pipeline() }
	return c
}

// Eval sends calls in one pipeline (per primary on a Cluster, in parallel)
// and sets each call's outcome: see luascripts.Client.
func (c *Client) Eval(ctx context.Context, calls []luascripts.Call) {
	if c == nil || c.rdb == nil {
		for i := range calls {
			calls[i].Reply, calls[i].Err = nil, errZero
		}
		return
	}
	if c.cluster != nil && len(calls) > 1 {
		c.evalByNode(ctx, calls)
		return
	}
	c.evalOn(ctx, c.pipeline(), true, calls)
}

// pipeline returns an idle pipeline of rdb, for evalOn to give back.
func (c *Client) pipeline() redis.Pipeliner { return c.pipes.Get().(redis.Pipeliner) }

// evalOn sends calls in p, one round trip, and sets their outcomes. p goes
// back to the pool when pooled.
func (c *Client) evalOn(ctx context.Context, p redis.Pipeliner, pooled bool, calls []luascripts.Call) {
	cmds := make([]*redis.Cmd, len(calls))
	onces := make([]*once, len(calls))
	for i := range calls {
		cmds[i], onces[i] = queue(ctx, p, &calls[i])
	}
	_, err := p.Exec(ctx)
	if pooled {
		c.pipes.Put(p)
	}
	for i := range calls {
		if onces[i] != nil {
			onces[i].settle()
		}
		calls[i].Reply, calls[i].Err = outcome(ctx, cmds[i], err)
	}
}

// queue adds call to p: a script that writes is sent at most once (see
// once.go), a resendable one as a plain command.
func queue(ctx context.Context, p redis.Pipeliner, call *luascripts.Call) (*redis.Cmd, *once) {
	s := call.Script
	name := commands[b2i(s.ReadOnly())][b2i(call.Source)]
	args := make([]any, 0, 3+len(call.Keys)+len(call.Args))
	var o *once
	if s.Resendable() {
		args = append(args, name, s.BodyArg(call.Source), len(call.Keys))
	} else {
		o = &once{script: s.Body(call.Source), noop: noScript, noAsk: s.NoAsk()}
		if call.Source {
			o.noop = noopSource
		}
		args = append(args, name, o, len(call.Keys))
	}
	for _, k := range call.Keys {
		args = append(args, k)
	}
	args = append(args, call.Args...)
	cmd := p.Do(ctx, args...)
	if o != nil {
		o.cmd = cmd
	}
	return cmd, o
}

// commands are the script commands by [read-only][source], boxed once: a
// string boxed per call is an allocation per call.
var commands = [2][2]any{{"evalsha", "eval"}, {"evalsha_ro", "eval_ro"}}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// EvalWait sends call and WAIT in one pipeline: of rdb (one server), or
// of the node that serves call's first key on a Cluster, so that WAIT
// shares the script's connection.
func (c *Client) EvalWait(ctx context.Context, call *luascripts.Call, replicas int, timeout time.Duration) (int, error) {
	if call == nil {
		return 0, errors.New("goredisadapter: EvalWait of a nil call")
	}
	p, pooled := redis.Pipeliner(nil), false
	switch {
	case c == nil || c.rdb == nil:
		call.Reply, call.Err = nil, errZero
		return 0, errZero
	case c.ring:
		// A Ring routes WAIT by its first argument, not by the script's
		// key, and does not tell which shard serves a key: WAIT would
		// count another connection's writes.
		call.Reply, call.Err = nil, ErrRingWait
		return 0, ErrRingWait
	case c.cluster != nil && len(call.Keys) > 0:
		node, err := c.cluster.MasterForKey(ctx, call.Keys[0])
		if err != nil {
			call.Reply, call.Err = nil, fmt.Errorf("goredisadapter: the primary of %q: %w", call.Keys[0], err)
			return 0, call.Err
		}
		p = node.Pipeline()
	default:
		p, pooled = c.pipeline(), true
	}
	cmd, o := queue(ctx, p, call)
	wait := p.Do(ctx, "wait", replicas, timeout.Milliseconds())
	_, err := p.Exec(ctx)
	if pooled {
		c.pipes.Put(p)
	}
	if o != nil {
		o.settle()
	}
	call.Reply, call.Err = outcome(ctx, cmd, err)
	if c.cluster != nil && moved(call.Err) {
		c.cluster.ReloadState(ctx)
	}
	_, werr := outcome(ctx, wait, err)
	if werr != nil {
		return 0, werr
	}
	n, err := wait.Int()
	return n, err
}

// Subscribe subscribes with go-redis's Subscribe; see
// luascripts.Client.
func (c *Client) Subscribe(ctx context.Context, channel string) (<-chan struct{}, func()) {
	if c == nil || c.rdb == nil {
		return nil, func() {} // no wake-ups: a waiter attempts at its backoff, and each attempt fails
	}
	ps := c.rdb.Subscribe(ctx, channel)
	events := ps.ChannelWithSubscriptions(redis.WithChannelHealthCheckInterval(0))
	wake := make(chan struct{}, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range events {
			select {
			case wake <- struct{}{}:
			default: // a wake-up is waiting already
			}
		}
	}()
	return wake, func() {
		// The forwarder drains events, so go-redis's reader is never
		// left blocked handing one over; the channel closes once the
		// reader sees the subscription closed.
		_ = ps.Close()
		<-done
	}
}

// Primary names the Cluster primary of key by its address, from the
// client's slot table; "" on one server; luascripts.ErrNoRoute on a Ring.
func (c *Client) Primary(ctx context.Context, key string) (string, error) {
	switch {
	case c == nil || c.rdb == nil:
		return "", errZero
	case c.cluster != nil:
		node, err := c.cluster.MasterForKey(ctx, key)
		if err != nil {
			return "", err
		}
		return node.Options().Addr, nil
	case c.ring:
		return "", luascripts.ErrNoRoute
	}
	return "", nil
}

// Info returns INFO section.
func (c *Client) Info(ctx context.Context, section string) (string, error) {
	if c == nil || c.rdb == nil {
		return "", errZero
	}
	s, err := c.rdb.Info(ctx, section).Result()
	return s, convertErr(ctx, err)
}

// ConfigGet returns CONFIG GET name.
func (c *Client) ConfigGet(ctx context.Context, name string) (string, error) {
	if c == nil || c.rdb == nil {
		return "", errZero
	}
	m, err := c.rdb.ConfigGet(ctx, name).Result()
	if err != nil {
		return "", convertErr(ctx, err)
	}
	v, ok := m[name]
	if !ok {
		return "", fmt.Errorf("CONFIG GET %s: the server did not report it", name)
	}
	return v, nil
}

// Time returns the server's clock.
func (c *Client) Time(ctx context.Context) (time.Time, error) {
	if c == nil || c.rdb == nil {
		return time.Time{}, errZero
	}
	t, err := c.rdb.Time(ctx).Result()
	return t, convertErr(ctx, err)
}

// The contract, checked at build time.
var _ luascripts.Client = (*Client)(nil)

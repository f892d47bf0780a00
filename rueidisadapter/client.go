package rueidisadapter

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/luascripts"
)

// ErrNilClient is New's error for a nil rueidis client.
var ErrNilClient = errors.New("rueidisadapter: nil rueidis client")

// ErrNotAdapted is AddHook's error for a client New did not make.
var ErrNotAdapted = errors.New("rueidisadapter: not a client rueidisadapter.New made")

// ErrUnsupported is matched by the error of what the returned client does
// not do through rueidis: open a connection of its own (Subscribe, a
// dial), or run a transaction.
var ErrUnsupported = errors.New("rueidisadapter: not supported through the adapter")

// New returns a go-redis client whose commands run on rc (see the package
// doc). Pass it to any primitive's constructor. It does not own rc: close
// rc when done, after the primitives using it have stopped.
func New(rc rueidis.Client) (*redis.Client, error) {
	if luascripts.IsNil(rc) {
		return nil, ErrNilClient
	}
	a := &adapter{rc: rc, cluster: rc.Mode() == rueidis.ClientModeCluster}
	a.chain.Store(&chain{process: a.do, pipeline: a.doMulti})
	c := redis.NewClient(&redis.Options{
		Addr: "rueidisadapter",
		// RESP2 keeps go-redis from starting the background goroutines of
		// its RESP3 maintenance notifications: this client opens no
		// connection for them to watch.
		Protocol: 2,
		Dialer: func(context.Context, string, string) (net.Conn, error) {
			return nil, fmt.Errorf("%w: this client opens no connection; its commands run on the rueidis client", ErrUnsupported)
		},
	})
	c.AddHook(hook{a})
	luascripts.Register(c, a)
	return c, nil
}

// An adapter runs a go-redis client's commands on rc. It must not refer
// to that client (luascripts.Register).
type adapter struct {
	rc      rueidis.Client
	cluster bool

	mu      sync.Mutex // serializes AddHook
	hooks   []redis.Hook
	chain   atomic.Pointer[chain] // hooks, then rc
	rebuilt atomic.Int32          // how many times go-redis built its chain over hook
}

// A chain is the hooks added with AddHook around the calls to rc.
type chain struct {
	process  redis.ProcessHook
	pipeline redis.ProcessPipelineHook
}

func (a *adapter) Cluster() bool { return a.cluster }

// AddHook adds h to the hooks of c, a client New made: h wraps each of its
// commands and pipelines, as go-redis's own AddHook does on a go-redis
// client, the later hooks inside the earlier ones, around the call to
// rueidis. (c.AddHook cannot: c's own hook chain ends with the adapter's,
// before any hook added after it; a client that was given one that way
// fails each call with an error that says so, rather than run without
// it.) h's DialHook is not called: the adapter dials nothing.
func AddHook(c *redis.Client, h redis.Hook) error {
	a, ok := luascripts.AdapterOf(c).(*adapter)
	if !ok {
		return ErrNotAdapted
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.hooks = append(a.hooks, h)
	ch := &chain{process: a.do, pipeline: a.doMulti}
	for i := len(a.hooks) - 1; i >= 0; i-- {
		if p := a.hooks[i].ProcessHook(ch.process); p != nil {
			ch.process = p
		}
		if p := a.hooks[i].ProcessPipelineHook(ch.pipeline); p != nil {
			ch.pipeline = p
		}
	}
	a.chain.Store(ch)
	return nil
}

// errForeignHook is the error of every call on a client that was given a
// hook with its own AddHook, which cannot run.
var errForeignHook = errors.New("rueidisadapter: a hook was added with the client's own AddHook, which cannot run on the adapter: add it with rueidisadapter.AddHook")

// hook ends the go-redis client's hook chain: each command and pipeline
// runs on the rueidis client (through the hooks of AddHook), and next
// (go-redis's own connections) is never called.
type hook struct{ a *adapter }

func (h hook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h hook) ProcessHook(redis.ProcessHook) redis.ProcessHook {
	// go-redis builds its chain again for each hook added after this one:
	// those hooks would never run.
	h.a.rebuilt.Add(1)
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.a.rebuilt.Load() > 1 {
			cmd.SetErr(errForeignHook)
			return errForeignHook
		}
		_ = h.a.chain.Load().process(ctx, cmd)
		return cmd.Err()
	}
}

func (h hook) ProcessPipelineHook(redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if h.a.rebuilt.Load() > 1 {
			for _, cmd := range cmds {
				cmd.SetErr(errForeignHook)
			}
			return errForeignHook
		}
		_ = h.a.chain.Load().pipeline(ctx, cmds)
		for _, cmd := range cmds {
			if err := cmd.Err(); err != nil {
				return err
			}
		}
		return nil
	}
}

// do runs one command.
func (a *adapter) do(ctx context.Context, cmd redis.Cmder) error {
	_, bounded := ctx.Deadline()
	c, err := a.command(cmd, bounded)
	if err != nil {
		cmd.SetErr(err)
		return err
	}
	setReply(cmd, a.rc.Do(ctx, c.Completed))
	return cmd.Err()
}

// doMulti runs a pipeline's commands in one round trip (rueidis splits it
// by node on a Cluster). WAIT counts the replicas that have the writes of
// its own connection: a pipeline with WAIT goes on one connection, which
// rueidis gives a pipeline with a blocking command (and sends again on
// another after a failed connection if all its commands may be sent
// again); on a Cluster, on a dedicated connection to the node of its
// first key.
func (a *adapter) doMulti(ctx context.Context, cmds []redis.Cmder) error {
	a.sendMulti(ctx, cmds)
	for _, cmd := range cmds {
		if err := cmd.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (a *adapter) sendMulti(ctx context.Context, cmds []redis.Cmder) {
	multi := make(rueidis.Commands, 0, len(cmds))
	idx := make([]int, 0, len(cmds))
	wait := false
	_, bounded := ctx.Deadline()
	for i, cmd := range cmds {
		c, err := a.command(cmd, bounded)
		if err != nil {
			cmd.SetErr(err)
			continue
		}
		if c.name == "multi" || c.name == "exec" {
			for _, cmd := range cmds {
				cmd.SetErr(fmt.Errorf("%w: transactions", ErrUnsupported))
			}
			return
		}
		wait = wait || c.name == "wait" || c.name == "waitaof"
		multi, idx = append(multi, c.Completed), append(idx, i)
	}
	if len(multi) == 0 {
		return
	}
	var replies []rueidis.RedisResult
	if wait && a.cluster {
		err := a.rc.Dedicated(func(dc rueidis.DedicatedClient) error {
			replies = dc.DoMulti(ctx, multi...)
			return nil
		})
		if err != nil {
			for _, i := range idx {
				cmds[i].SetErr(err)
			}
			return
		}
	} else {
		replies = a.rc.DoMulti(ctx, multi...)
	}
	for j, i := range idx {
		setReply(cmds[i], replies[j])
	}
}

package luascripts

import (
	"context"
	"crypto/sha1"
	"encoding/hex"

	"github.com/redis/go-redis/v9"
)

// Client is the part of a go-redis client a Script needs. *redis.Client,
// *redis.ClusterClient, *redis.Ring and redis.UniversalClient satisfy it.
type Client interface {
	Eval(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
	EvalRO(ctx context.Context, script string, keys []string, args ...any) *redis.Cmd
	EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *redis.Cmd
}

// Script is one Lua script and its SHA1 digest. A Script is immutable and
// safe for concurrent use.
type Script struct {
	name     string
	src      string
	sha      string
	wire     *[2][]byte // what an EVALSHA and an EVAL of it carry: sha, src
	readOnly bool
	// retried: the script may run twice for one call, so go-redis may
	// send it again as it sends any command (see once.go).
	retried bool
	// noAsk: a call answered ASK ends with it instead (NewWithoutAsk).
	noAsk bool
}

// New returns a Script for src. The name only labels it in errors and tests.
func New(name, src string) *Script {
	sum := sha1.Sum([]byte(src))
	sha := hex.EncodeToString(sum[:])
	return &Script{name: name, src: src, sha: sha, wire: &[2][]byte{[]byte(sha), []byte(src)}}
}

// NewReadOnly returns a Script that is run with EVALSHA_RO and EVAL_RO, so
// the server refuses it if it ever writes and lets it run on replicas.
// The script must carry the no-writes flag (#!lua flags=no-writes).
func NewReadOnly(name, src string) *Script {
	s := New(name, src)
	s.readOnly, s.retried = true, true
	return s
}

// NewIdempotent returns a Script that writes and may run twice for one call
// with the effect and the reply of running once (it recognises its own
// earlier run, as lock's acquire does by the acquisition's id), so that
// go-redis may send it again after a failed connection, as it sends any
// command, instead of the call ending with ErrReplyLost.
func NewIdempotent(name, src string) *Script {
	s := New(name, src)
	s.retried = true
	return s
}

// NewWithoutAsk returns a Script that writes, runs at most once per call,
// and is never sent where an ASK redirects it: the call ends with the ASK
// error instead (the script did not run), for its caller to send
// otherwise. A call that comes by ASK to a node importing a slot may touch
// every key of that slot, those still on the source node too, which the
// node then creates anew; a script whose declared key routes it, and that
// touches undeclared keys of the same slot (ratelimit's batch.lua), would
// write them on the wrong node. A MOVED is followed: the slot has moved,
// with all its keys.
func NewWithoutAsk(name, src string) *Script {
	s := New(name, src)
	s.noAsk = true
	return s
}

// Name returns the label given to New.
func (s *Script) Name() string { return s.name }

// Source returns the Lua source.
func (s *Script) Source() string { return s.src }

// SHA1 returns the hex digest the server knows the script by.
func (s *Script) SHA1() string { return s.sha }

// ReadOnly reports whether the script runs with the _RO commands.
func (s *Script) ReadOnly() bool { return s.readOnly }

// Run executes the script: EVALSHA first, and EVAL only if the server does not
// have the script cached. Any other error is returned as it is, wrapped with
// ErrRedisTooOld when a server older than 7.0 refused the call. A Cluster's
// refusal while the call's slot migrates (TRYAGAIN, a MOVED or ASK go-redis
// did not follow: the script did not run) is retried within ctx
// (migrate.go).
//
// A script that writes runs at most once per call: it is sent through a
// pipeline of its own (every go-redis client has Pipeline), and go-redis's
// retries never send it a second time once it may have run (see once.go);
// such a call ends with ErrReplyLost instead. A read-only script, which
// changes nothing, and an idempotent one are sent as plain commands and
// retried as go-redis retries any command. So is a script on a client
// without Pipeline.
func (s *Script) Run(ctx context.Context, c Client, keys []string, args ...any) *redis.Cmd {
	if p, ok := c.(pipeliner); ok && !s.retried {
		return s.RunPipelined(ctx, p.Pipeline, keys, args, nil)
	}
	return untilMigrated(ctx, func() *redis.Cmd {
		var cmd *redis.Cmd
		if s.readOnly {
			cmd = c.EvalShaRO(ctx, s.sha, keys, args...)
		} else {
			cmd = c.EvalSha(ctx, s.sha, keys, args...)
		}
		if isNoScript(cmd.Err()) {
			if s.readOnly {
				cmd = c.EvalRO(ctx, s.src, keys, args...)
			} else {
				cmd = c.Eval(ctx, s.src, keys, args...)
			}
		}
		if err := CheckVersion(cmd.Err()); err != cmd.Err() {
			cmd.SetErr(err)
		}
		return cmd
	})
}

// A pipeliner is a client that can pipeline: every go-redis client.
type pipeliner interface {
	Pipeline() redis.Pipeliner
}

// isNoScript reports whether err is the server's NOSCRIPT reply, the only
// error after which running the full source is known to be safe: the script
// did not run at all.
func isNoScript(err error) bool {
	return err != nil && redis.HasErrorPrefix(err, "NOSCRIPT")
}

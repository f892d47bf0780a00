package luascripts

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"time"
)

// Script is one Lua script and its SHA1 digest. A Script is immutable and
// safe for concurrent use.
type Script struct {
	name       string
	src        string
	sha        string
	wire       [2][]byte // what an EVALSHA and an EVAL of it carry: sha, src
	wireArg    [2]any    // wire, boxed once (BodyArg)
	readOnly   bool
	resendable bool
	noAsk      bool
}

// New returns a Script that writes: each call of it runs at most once (see
// Client.Eval). The name only labels it in errors and tests.
func New(name, src string) *Script {
	sum := sha1.Sum([]byte(src))
	sha := hex.EncodeToString(sum[:])
	s := &Script{name: name, src: src, sha: sha, wire: [2][]byte{[]byte(sha), []byte(src)}}
	s.wireArg = [2]any{s.wire[0], s.wire[1]}
	return s
}

// NewReadOnly returns a Script that is run with EVALSHA_RO and EVAL_RO, so
// the server refuses it if it ever writes and lets it run on replicas. It
// may be sent again, as the client sends any read. The script must carry
// the no-writes flag (#!lua flags=no-writes).
func NewReadOnly(name, src string) *Script {
	s := New(name, src)
	s.readOnly, s.resendable = true, true
	return s
}

// NewIdempotent returns a Script that writes and may run twice for one call
// with the effect and the reply of running once (it recognises its own
// earlier run, as lock's acquire does by the acquisition's id), so that
// the client may send it again after a failed connection, as it sends any
// command, instead of the call ending with ErrReplyLost.
func NewIdempotent(name, src string) *Script {
	s := New(name, src)
	s.resendable = true
	return s
}

// NewWithoutAsk returns a Script that writes, runs at most once per call,
// and is never sent where an ASK redirects it: the call ends with the ASK
// error instead (the script did not run), for its caller to send
// otherwise. A call that comes by ASK to a node importing a slot may touch
// every key of that slot, those still on the source node too, which the
// node then creates anew; a script whose declared key routes it, and that
// touches undeclared keys (ratelimit's batch.lua), would write them on the
// wrong node. A MOVED is followed: the slot has moved, with all its keys.
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

// Body returns what a call carries in the place of the script: its SHA1
// (EVALSHA) or, with source, its text (EVAL). The slice is shared: it must
// not be modified.
func (s *Script) Body(source bool) []byte {
	if source {
		return s.wire[1]
	}
	return s.wire[0]
}

// BodyArg is Body as an interface value, made once: a client whose
// commands take their arguments as []any (go-redis) puts it there without
// an allocation per call.
func (s *Script) BodyArg(source bool) any {
	if source {
		return s.wireArg[1]
	}
	return s.wireArg[0]
}

// ReadOnly reports whether the script runs with the _RO commands.
func (s *Script) ReadOnly() bool { return s.readOnly }

// Resendable reports whether a call of the script may be sent again after
// a failed connection: the script is read-only or idempotent.
func (s *Script) Resendable() bool { return s.resendable }

// NoAsk reports whether an ASK ends a call of the script (NewWithoutAsk).
func (s *Script) NoAsk() bool { return s.noAsk }

// Run runs the script once with keys and args on c, as Send sends a call,
// and returns its outcome.
func (s *Script) Run(ctx context.Context, c Client, keys []string, args ...any) Reply {
	call := []Call{{Script: s, Keys: keys, Args: args}}
	Send(ctx, c, call)
	return call[0].Result()
}

// RunWait runs the script as Run does, followed by WAIT replicas timeout
// on the same connection (Client.EvalWait), and returns the script's
// outcome and WAIT's answer. A call the server answered NOSCRIPT, or
// refused while its slot migrates, is sent again with its WAIT.
func (s *Script) RunWait(ctx context.Context, c Client, keys []string, args []any, replicas int, timeout time.Duration) (Reply, int, error) {
	call := Call{Script: s, Keys: keys, Args: args}
	acked, err := s.sendWait(ctx, c, &call, replicas, timeout)
	call.Err = s.checkVersion(call.Err)
	return call.Result(), acked, err
}

// checkVersion is CheckVersion for a call of s, which has a flags line
// only at its very start, where Redis 7 reads one.
func (s *Script) checkVersion(err error) error {
	return checkVersion(err, strings.HasPrefix(s.src, "#!"))
}

package goredisadapter

import (
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/internal/luascripts"
)

// go-redis sends a command again, and a whole pipeline again, when the
// connection fails after the command was written (MaxRetries, 3 by
// default). A script that ran before the connection failed would then run
// a second time: a rate-limit decision charged twice, a write landing
// twice. Turning retries off is the user's choice of client options, not
// ours, and go-redis has no per-command switch (ADR 0015); so a script
// that writes is sent with its SHA1 (or, for EVAL, its source) in an
// argument that knows how many times it has been written to a connection:
// go-redis asks an encoding.BinaryMarshaler argument for its bytes each
// time it writes the command.
//
// The first time, it writes the script. When go-redis writes the command
// again it looks at what the command holds from the send before:
//
//   - a reply: the script ran, and go-redis is about to send it again (a
//     Cluster pipeline sends a node's whole batch again after a failure).
//     The reply is kept and the command is sent as a no-op;
//   - a refusal that proves the script did not run (MOVED, ASK, TRYAGAIN,
//     CLUSTERDOWN, LOADING, READONLY, MASTERDOWN, NOREPLICAS, too many
//     clients): the script is sent again, so redirects and a server's
//     start-up keep working;
//   - anything else (a broken connection, a timeout): the outcome is
//     unknown. The command is sent as a no-op and ends with ErrReplyLost.
//
// The no-op is EVALSHA of a digest no script has (the server answers
// NOSCRIPT at once) or EVAL of "return false". A command is sent in a
// pipeline, even alone, because only a pipeline records each attempt's
// reply on the command, which the second case needs. The conformance suite
// (internal/clienttest) holds this to the contract with a connection that
// drops right after the write, on the go-redis of the workspace and on the
// oldest this module supports.

// The no-ops: EVALSHA of a SHA1 digest no script has runs nothing (the
// server answers NOSCRIPT), and EVAL of noopSource nothing but itself.
var (
	noScript   = []byte("0000000000000000000000000000000000000000")
	noopSource = []byte("return false")
)

// A once is the script argument of a call sent at most once (see above).
// Each call has its own; it is used by that call's goroutine only.
type once struct {
	script, noop []byte // what the first send carries, and what any later one
	cmd          *redis.Cmd
	state        int
	reply        any   // onceAnswered: the reply of the send that ran
	err          error // onceAnswered: its error (redis.Nil); onceLost: why; onceRefused: the ASK
	noAsk        bool  // its script's: an ASK ends the call
}

// The states of a once.
const (
	onceUnsent   = iota
	onceSent     // its outcome is what the command holds
	onceAnswered // it ran, and reply is what it replied
	onceLost     // sent again by go-redis before its outcome was known
	onceRefused  // answered ASK, which its script must not follow
)

// MarshalBinary is called by go-redis each time it writes the command.
func (o *once) MarshalBinary() ([]byte, error) {
	switch o.state {
	case onceUnsent:
		o.state = onceSent
		return o.script, nil
	case onceSent:
		switch err := o.cmd.Err(); {
		case err == nil && o.cmd.Val() != nil, err == redis.Nil:
			o.state, o.reply, o.err = onceAnswered, o.cmd.Val(), err
		case o.noAsk && redis.HasErrorPrefix(err, "ASK "):
			o.state, o.err = onceRefused, err
		case notRun(err):
			o.cmd.SetErr(nil) // so that this send's failure is not read as the last one's refusal
			return o.script, nil
		default:
			o.state, o.err = onceLost, err
		}
	}
	return o.noop, nil
}

// String is what go-redis prints for the argument (in a command's String).
func (o *once) String() string { return string(o.script) }

// settle puts the outcome of the call into its command, once the pipeline
// that carried it has returned.
func (o *once) settle() {
	switch o.state {
	case onceAnswered:
		o.cmd.SetVal(o.reply)
		o.cmd.SetErr(o.err)
	case onceRefused:
		o.cmd.SetErr(o.err)
	case onceLost:
		if o.err != nil {
			o.cmd.SetErr(fmt.Errorf("%w: %w", luascripts.ErrReplyLost, o.err))
		} else {
			o.cmd.SetErr(luascripts.ErrReplyLost)
		}
	}
}

// notRun reports whether err is a server's refusal that proves a script
// call did not run.
func notRun(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := re.Error()
	for _, p := range []string{"MOVED ", "ASK ", "TRYAGAIN", "CLUSTERDOWN", "LOADING", "READONLY", "MASTERDOWN",
		"NOREPLICAS", "ERR max number of clients reached"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

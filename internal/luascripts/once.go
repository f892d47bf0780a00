package luascripts

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// go-redis sends a command again, and a whole pipeline again, when the
// connection fails after the command was written (MaxRetries, 3 by
// default). A script that ran before the connection failed then runs a
// second time: a rate-limit decision is charged twice, a write lands
// twice. Turning retries off is the user's choice of client options, not
// ours, and go-redis has no per-command switch; so a script that writes is
// sent with its SHA1 (or, for EVAL, its source) in an argument that knows
// how many times it has been written to a connection.
//
// The first time, it writes the script. When go-redis writes the command
// again it looks at what the command holds from the send before:
//
//   - a reply: the script ran, and go-redis is about to send it again (a
//     Cluster pipeline re-sends a node's whole batch after a failure). The
//     reply is kept and the command is sent as a no-op;
//   - a refusal that proves the script did not run (MOVED, ASK, TRYAGAIN,
//     CLUSTERDOWN, LOADING, READONLY, MASTERDOWN, NOREPLICAS, too many
//     clients): the script is sent again,
//     so redirects and a server's start-up keep working;
//   - anything else (a broken connection, a timeout, or nothing: go-redis
//     does not record a failed attempt of a command sent alone): the
//     outcome is unknown. The command is sent as a no-op and ends with
//     ErrReplyLost.
//
// The no-op is EVALSHA of a digest no script has (the server answers
// NOSCRIPT at once) or EVAL of "return false". A command is sent through a
// pipeline, even alone, because only a pipeline records each attempt's
// reply on the command, which the second case needs.

// ErrReplyLost is matched by the error of a script call whose connection
// failed after the call was sent: go-redis would have sent it again, and it
// was not, since it may have run. The call may or may not have taken
// effect, as with a call that timed out.
var ErrReplyLost = errors.New("the connection failed after the script was sent; not sent again, since it may have run")

// The no-ops: EVALSHA of a SHA1 digest no script has runs nothing (the
// server answers NOSCRIPT), and EVAL of noopSource nothing but itself.
var (
	noScript   = []byte("0000000000000000000000000000000000000000")
	noopSource = []byte("return false")
)

// An onceArg is the script argument of a call sent at most once (see
// above). A Script makes one per command; it is used by that command's
// goroutine only.
type onceArg struct {
	script, noop []byte // what the first send carries, and what any later one
	cmd          *redis.Cmd
	state        int
	reply        any   // onceAnswered: the reply of the send that ran
	err          error // onceAnswered: its error (redis.Nil); onceLost: why; onceRefused: the ASK
	noAsk        bool  // its script's: an ASK ends the call (NewWithoutAsk)
}

// The states of an onceArg.
const (
	onceUnsent   = iota
	onceSent     // its outcome is what the command holds
	onceAnswered // it ran, and reply is what it replied
	onceLost     // sent again by go-redis before its outcome was known
	onceRefused  // answered ASK, which its script must not follow
)

// MarshalBinary is called by go-redis each time it writes the command.
func (o *onceArg) MarshalBinary() ([]byte, error) {
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
func (o *onceArg) String() string { return string(o.script) }

// settle puts the outcome of the call into its command, once the pipeline
// that carried it has returned.
func (o *onceArg) settle() {
	switch o.state {
	case onceAnswered:
		o.cmd.SetVal(o.reply)
		o.cmd.SetErr(o.err)
	case onceRefused:
		o.cmd.SetErr(o.err)
	case onceLost:
		if o.err != nil {
			o.cmd.SetErr(fmt.Errorf("%w: %w", ErrReplyLost, o.err))
		} else {
			o.cmd.SetErr(ErrReplyLost)
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

// queueOnce adds the script to p, sent at most once, with its SHA1
// (EVALSHA) or, when source is set, its text (EVAL). settle must be
// called on the returned argument after p.Exec.
func (s *Script) queueOnce(ctx context.Context, p redis.Pipeliner, source bool, keys []string, args []any) (*redis.Cmd, *onceArg) {
	name, o := "evalsha", &onceArg{script: s.wire[0], noop: noScript, noAsk: s.noAsk}
	if source {
		name, o.script, o.noop = "eval", s.wire[1], noopSource
	}
	all := make([]any, 0, 3+len(keys)+len(args))
	all = append(all, name, o, len(keys))
	for _, k := range keys {
		all = append(all, k)
	}
	all = append(all, args...)
	o.cmd = p.Do(ctx, all...)
	return o.cmd, o
}

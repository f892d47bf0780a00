package luascripts

import (
	"context"
	"errors"
	"time"
)

// Client is what the primitives ask of a Redis client, and all they ask.
// Each supported client has an implementation in an adapter module of its
// own (goredisadapter, rueidisadapter, valkeyadapter), so that a user
// downloads only the client it uses; the conformance suite
// (internal/clienttest) holds every implementation to the promises below.
//
// The primitives call a Client from many goroutines at once: an
// implementation must be safe for concurrent use.
type Client interface {
	// Eval sends calls, in one round trip to each server where it can, and
	// sets each call's Reply and Err. It returns when every call has its
	// outcome.
	//
	//   - What is sent: EVALSHA of the script's SHA1, or EVAL of its
	//     source when the call's Source is set; EVALSHA_RO and EVAL_RO for
	//     a read-only script. The call's Keys are its keys, its Args its
	//     arguments (see Call).
	//   - At most once: a call of a script that is not Resendable is
	//     written to a connection at most once. When the connection fails
	//     after the call was written, the call is not sent again: its Err
	//     matches ErrReplyLost (it may or may not have run, as after a
	//     timeout). A call never written (a failed dial) may be sent again.
	//   - A refusal that proves the script did not run (MOVED, ASK,
	//     TRYAGAIN, CLUSTERDOWN, LOADING, READONLY, MASTERDOWN, NOSCRIPT,
	//     too many clients) may be followed or sent again, as the client
	//     does for any command; one it returns is the call's Err, a
	//     *ReplyError, which the runner sends again (see Send). A script
	//     with NoAsk is never sent where an ASK points: the ASK is its Err.
	//   - A Resendable call may be sent again after a failed connection,
	//     as the client sends any command again; and, on a client that
	//     would resend it without end, only while ctx has a deadline.
	//   - Order: calls whose first keys are served by one server are sent
	//     to it in the order of calls. On a Cluster, the calls are split
	//     by the primary that owns their first key's slot.
	//   - Errors: an error reply is a *ReplyError; a call past ctx's end
	//     has an Err matching ctx.Err(); a call on a closed client one
	//     matching ErrClosed.
	Eval(ctx context.Context, calls []Call)

	// EvalWait sends call as Eval does, then WAIT replicas timeout on the
	// connection that carried it, in one round trip, and returns WAIT's
	// answer: how many replicas acknowledged every write made on that
	// connection so far, the call's included. call's Err is set as by
	// Eval; err is WAIT's own failure.
	EvalWait(ctx context.Context, call *Call, replicas int, timeout time.Duration) (acked int, err error)

	// Subscribe subscribes to channel, for wake-ups. wake receives a value
	// once the subscription is in effect and on each message; a value may
	// be dropped while another waits (each is only a wake-up). A
	// subscription that fails sends nothing. stop ends the subscription,
	// and returns once nothing more is sent on wake.
	Subscribe(ctx context.Context, channel string) (wake <-chan struct{}, stop func())

	// Primary names the primary that serves key on a Cluster: two keys
	// with the same name are served by one server. It is "" for a client
	// of one server, and ErrNoRoute for a client that routes by itself
	// and cannot tell. It may read a cached slot table; a name it gives
	// is a placement to try, and a call sent by it may still meet MOVED.
	Primary(ctx context.Context, key string) (string, error)

	// Info returns the text of INFO section. It changes nothing, and may
	// be sent again.
	Info(ctx context.Context, section string) (string, error)

	// ConfigGet returns the value of the configuration parameter name
	// (CONFIG GET name), and an error when the server does not report it.
	// It may be sent again.
	ConfigGet(ctx context.Context, name string) (string, error)

	// Time returns the server's clock (TIME). It may be sent again.
	Time(ctx context.Context) (time.Time, error)
}

// A Call is one script call that Client.Eval sends.
//
// Args may hold string, []byte, int, int64, uint64 and float64 values,
// sent as go-redis and rueidis write them (integers in decimal, floats in
// the shortest decimal that reads back as the same number).
type Call struct {
	Script *Script
	Source bool // send the script's source (EVAL) instead of its SHA1
	Keys   []string
	Args   []any

	// Set by Eval.
	Reply any // int64, string, []any of these, or nil for a null reply
	Err   error
}

// Result returns the call's outcome as a Reply.
func (c *Call) Result() Reply { return Reply{Val: c.Reply, Err: c.Err} }

// ErrReplyLost is matched by the error of a script call whose connection
// failed after the call was written: the call was not sent again, since it
// may have run. It may or may not have taken effect, as with a call that
// timed out.
var ErrReplyLost = errors.New("the connection failed after the script was sent; not sent again, since it may have run")

// ErrClosed is matched by the error of a call on a client that was closed.
var ErrClosed = errors.New("the client is closed")

// ErrNoRoute is Primary's error on a client that routes each call itself
// and does not tell where.
var ErrNoRoute = errors.New("the client routes calls itself and does not tell where")

// A ReplyError is an error reply of the server: NOSCRIPT, NOPERM, MOVED, a
// script's own error. Message is the reply as the server sent it, its code
// first ("ERR ...", "NOPERM ..."); Err is the client's own error value, so
// that a user matches it as it matches its client's errors (errors.As
// with redis.Error on go-redis, *rueidis.RedisError on rueidis).
type ReplyError struct {
	Message string
	Err     error
}

func (e *ReplyError) Error() string { return e.Message }
func (e *ReplyError) Unwrap() error { return e.Err }

// ReplyMessage returns the message of the error reply in err's chain, if
// there is one.
func ReplyMessage(err error) (string, bool) {
	if err == nil {
		return "", false // before errors.As, whose target escapes: no allocation on success
	}
	if re, ok := err.(*ReplyError); ok {
		return re.Message, true
	}
	var re *ReplyError
	if !errors.As(err, &re) {
		return "", false
	}
	return re.Message, true
}

package rueidisadapter

import (
	"fmt"
	"strconv"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/luascripts"
)

// evalNames are the commands of a call: [source][readOnly].
var evalNames = [2][2]string{{"EVALSHA", "EVALSHA_RO"}, {"EVAL", "EVAL_RO"}}

// command builds call's EVALSHA, EVAL, EVALSHA_RO or EVAL_RO. Only its
// first key is declared, so that a Cluster client routes the call by that
// key's slot; the others are arguments to rueidis, and a call on keys of
// several slots is the server's to refuse (CROSSSLOT), not the builder's
// (whose Cluster builder panics on one).
//
// rueidis sends a command again after a failed connection only if it is
// marked retryable, and then, with a backoff, until it gets an answer or
// its context ends: without a deadline, a call to a server that is down
// would never return. So only a call of a Resendable script whose context
// has a deadline (bounded) is marked, and one that must run at most once
// never is. The read-only builders mark their commands retryable whatever
// the context, which is why the four commands are built as Arbitrary ones.
//
// A retryable command is pinned: rueidis recycles a command's memory when
// the call that sent it again returns, while the connection that failed
// under its first send may still be writing it (a data race under -race
// while connections are killed). A command sent once is recycled only
// after its reply, once nothing writes it any more.
func (c *Client) command(call *luascripts.Call, bounded bool) (rueidis.Completed, error) {
	for i, a := range call.Args {
		if !luascripts.ArgOK(a) {
			return rueidis.Completed{}, fmt.Errorf("rueidisadapter: %s: argument %d is a %T; a call's arguments are strings, []byte, integers and floats", call.Script.Name(), i, a)
		}
	}
	s := call.Script
	body := s.SHA1()
	if call.Source {
		body = s.Source()
	}
	b := c.rc.B().Arbitrary(evalNames[b2i(call.Source)][b2i(s.ReadOnly())], body, strconv.Itoa(len(call.Keys)))
	if len(call.Keys) > 0 {
		b = b.Keys(call.Keys[0]).Args(call.Keys[1:]...)
	}
	for _, a := range call.Args {
		b = b.Args(arg(a))
	}
	switch {
	case !s.Resendable() || !bounded:
		return b.Build(), nil
	case s.ReadOnly():
		// Retryable, and a replica's to run if the client sends reads
		// there (SendToReplicas).
		return b.ReadOnly().Pin(), nil
	}
	return b.Build().ToRetryable().Pin(), nil
}

// arg writes a as go-redis and rueidis write an argument: integers in
// decimal, floats in the shortest decimal that reads back as the same
// number.
func arg(a any) string {
	switch v := a.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case uint64:
		return strconv.FormatUint(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case int32:
		return strconv.FormatInt(int64(v), 10)
	case uint32:
		return strconv.FormatUint(uint64(v), 10)
	case int16:
		return strconv.FormatInt(int64(v), 10)
	case uint16:
		return strconv.FormatUint(uint64(v), 10)
	case int8:
		return strconv.FormatInt(int64(v), 10)
	case uint8:
		return strconv.FormatUint(uint64(v), 10)
	case uint:
		return strconv.FormatUint(uint64(v), 10)
	case float32:
		return strconv.FormatFloat(float64(v), 'f', -1, 64) // as go-redis writes one
	}
	return "" // luascripts.ArgOK refused it
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

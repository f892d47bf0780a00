package rueidisadapter

import (
	"encoding"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// A command is a go-redis command built for rueidis.
type command struct {
	rueidis.Completed
	name string // lower case: "evalsha", "config", ...
}

// command builds cmd for rueidis: its arguments written as go-redis writes
// them, its first key declared, so that a Cluster client routes it by
// that key's slot. Only the first key is declared: a command on keys of
// several slots is the server's to refuse (CROSSSLOT), not the builder's.
//
// bounded says the call's context has a deadline. rueidis sends a command
// marked retryable again after a failed connection, with a backoff, until
// it gets an answer or its context ends: without a deadline, a call to a
// server that is down would never return (go-redis gives up after
// MaxRetries). So only a bounded call that may run twice is marked: a
// read-only command, WAIT, or a script the runner sends as one that may
// run twice (see retried); an unbounded one fails on its connection's
// failure, and a write that must run at most once is never marked.
func (a *adapter) command(cmd redis.Cmder, bounded bool) (command, error) {
	args := cmd.Args()
	s := make([]string, len(args))
	for i, arg := range args {
		v, err := argString(arg)
		if err != nil {
			return command{}, err
		}
		s[i] = v
	}
	if len(s) == 0 || s[0] == "" {
		return command{}, fmt.Errorf("rueidisadapter: empty command")
	}
	name := strings.ToLower(s[0])
	if strings.HasSuffix(name, "subscribe") {
		return command{}, fmt.Errorf("%w: %s (the primitives subscribe through the adapter itself)", ErrUnsupported, name)
	}
	key := keyIndex(name, s)
	b := a.rc.B().Arbitrary(s[:min(key, len(s))]...)
	if key < len(s) {
		b = b.Keys(s[key]).Args(s[key+1:]...)
	}
	ro := readOnly[name] || name == "config" && len(s) > 1 && strings.EqualFold(s[1], "get") ||
		name == "script" && len(s) > 1 && strings.EqualFold(s[1], "exists")
	var c rueidis.Completed
	switch {
	case blocking[name]:
		c = b.Blocking()
	case ro && bounded:
		c = b.ReadOnly() // retryable, and sent to a replica if the client is told to
	default:
		c = b.Build()
	}
	if bounded && (name == "wait" || name == "waitaof" || retried(name, args)) {
		c = c.ToRetryable() // WAIT changes nothing
	}
	// Pinned: rueidis recycles a command's memory once Do returns, while a
	// connection that failed under it may still be writing it (a data
	// race under -race when connections are killed).
	return command{Completed: c.Pin(), name: name}, nil
}

// retried reports whether a script call may be sent again after a failed
// connection, as go-redis sends any command again: the runner sends a
// script that must run at most once with an argument that knows how many
// times it was written (luascripts' once.go), and a script that may run
// twice (idempotent) with its plain SHA1 or source.
func retried(name string, args []any) bool {
	if !scripts[name] || len(args) < 2 {
		return false
	}
	switch args[1].(type) {
	case string, []byte:
		return true
	}
	return false
}

// keyIndex returns the index of s's first key, or len(s) for a command
// without one.
func keyIndex(name string, s []string) int {
	switch {
	case scripts[name]:
		if n, err := strconv.Atoi(s[min(2, len(s)-1)]); err == nil && n > 0 && len(s) > 3 {
			return 3
		}
		return len(s)
	case keyless[name] || len(s) < 2:
		return len(s)
	}
	return 1
}

// scripts are the commands whose keys follow a count, after the script.
var scripts = map[string]bool{"eval": true, "evalsha": true, "eval_ro": true, "evalsha_ro": true, "fcall": true, "fcall_ro": true}

// keyless are the commands (of those with arguments) whose first argument
// is not a key.
var keyless = set("auth", "acl", "bgrewriteaof", "bgsave", "client", "cluster", "command", "config", "dbsize", "debug",
	"echo", "flushall", "flushdb", "function", "hello", "info", "keys", "lastsave", "latency", "memory", "module",
	"object", "ping", "publish", "randomkey", "readonly", "readwrite", "replicaof", "role", "save", "scan",
	"script", "select", "shutdown", "slaveof", "slowlog", "spublish", "swapdb", "time", "wait", "waitaof")

// readOnly are the commands rueidis may send again after a failed
// connection (it sends nothing else again): they change nothing.
var readOnly = set("eval_ro", "evalsha_ro", "fcall_ro", "get", "mget", "exists", "ttl", "pttl", "type", "strlen",
	"hget", "hgetall", "hlen", "hexists", "hmget", "zcard", "zscore", "zrange", "zrangebyscore", "zcount",
	"lrange", "llen", "smembers", "scard", "sismember", "info", "time", "ping", "dbsize", "keys", "scan", "echo")

// blocking are the commands that hold their connection until they end.
var blocking = set("wait", "waitaof", "blpop", "brpop", "blmove", "bzpopmin", "bzpopmax", "xread", "xreadgroup")

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// argString writes v as go-redis writes a command argument.
func argString(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case []byte:
		return string(v), nil
	case int:
		return strconv.FormatInt(int64(v), 10), nil
	case int8:
		return strconv.FormatInt(int64(v), 10), nil
	case int16:
		return strconv.FormatInt(int64(v), 10), nil
	case int32:
		return strconv.FormatInt(int64(v), 10), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case uint:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint8:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint16:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint32:
		return strconv.FormatUint(uint64(v), 10), nil
	case uint64:
		return strconv.FormatUint(v, 10), nil
	case float32:
		return strconv.FormatFloat(float64(v), 'f', -1, 64), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	case bool:
		if v {
			return "1", nil
		}
		return "0", nil
	case time.Time:
		return v.Format(time.RFC3339Nano), nil
	case time.Duration:
		return strconv.FormatInt(v.Nanoseconds(), 10), nil
	case encoding.BinaryMarshaler:
		b, err := v.MarshalBinary()
		return string(b), err
	case net.IP:
		return string(v), nil
	}
	return "", fmt.Errorf("rueidisadapter: can't marshal %T (implement encoding.BinaryMarshaler)", v)
}

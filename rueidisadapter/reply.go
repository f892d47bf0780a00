package rueidisadapter

import (
	"strings"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/luascripts"
)

// value reads a reply as the contract gives it, as RESP2 gives it on
// either protocol: integers as int64; strings, status replies, RESP3's
// doubles and big numbers as their text; arrays and sets as []any, a map
// as a flat []any of keys and values (RESP2's order is the server's, a
// map's here is rueidis's); a null as nil; RESP3's booleans as RESP2
// gives a Lua boolean (true 1, false null); an error reply inside an
// array as a *luascripts.ReplyError.
func value(m *rueidis.RedisMessage) any {
	switch {
	case m.IsNil():
		return nil
	case m.IsInt64():
		n, _ := m.AsInt64()
		return n
	case m.IsBool():
		if b, _ := m.AsBool(); b {
			return int64(1)
		}
		return nil
	case m.IsArray():
		a, _ := m.ToArray()
		vs := make([]any, len(a))
		for i := range a {
			vs[i] = value(&a[i])
		}
		return vs
	case m.IsMap():
		kv, _ := m.ToMap()
		vs := make([]any, 0, 2*len(kv))
		for k, v := range kv {
			vs = append(vs, k, value(&v))
		}
		return vs
	}
	if err := m.Error(); err != nil {
		return replyError(m, err)
	}
	s, _ := m.ToString() // any other scalar's text, as RESP2 sends it
	return s
}

// replyError returns the error reply m, whose rueidis error is err, as a
// *luascripts.ReplyError: its message as the server sent it, code first.
// rueidis's error takes the "ERR " off the front of a message; the
// message itself keeps it.
func replyError(m *rueidis.RedisMessage, err error) *luascripts.ReplyError {
	msg, _ := m.ToString() // an error reply's own text
	if msg == "" {
		msg = withCode(err.Error())
	}
	return &luascripts.ReplyError{Message: msg, Err: err}
}

// withCode returns msg, an error reply's text as rueidis's error gives it,
// with the "ERR " that rueidis takes off its front put back. A Redis error
// reply opens with its code, one word in capitals (ERR, NOSCRIPT, MOVED,
// WRONGPASS, ...); a message that does not lost its ERR. An "ERR" reply
// whose next word is in capitals cannot be told from a code and is left
// as it is. It reads the errors that come without their reply (a refusal
// while connecting: WRONGPASS, NOPERM).
func withCode(msg string) string {
	code, _, _ := strings.Cut(msg, " ")
	if code == "" || strings.TrimLeft(code, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_-") != "" {
		return "ERR " + msg
	}
	return msg
}

// text reads a string reply: RESP3 sends INFO as a verbatim string, whose
// text rueidis keeps behind its format ("txt:").
func text(m *rueidis.RedisMessage) (string, error) {
	s, err := m.ToString()
	if err != nil {
		return "", err
	}
	if !m.IsString() && len(s) >= 4 && s[3] == ':' {
		s = s[4:]
	}
	return s, nil
}

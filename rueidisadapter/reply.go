package rueidisadapter

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// A serverError is an error reply of the server, as go-redis gives it: a
// redis.Error, which redis.HasErrorPrefix and errors.As match.
type serverError string

func (e serverError) Error() string { return string(e) }

// RedisError marks it as the server's (redis.Error).
func (serverError) RedisError() {}

// replyError returns the error of a rueidis reply as go-redis would give
// it: redis.Nil for a nil reply, a redis.Error for the server's error
// reply, and any other error (a context's, a connection's) as it is.
func replyError(err error) error {
	if err == nil {
		return nil
	}
	if rueidis.IsRedisNil(err) {
		return redis.Nil
	}
	if re, ok := rueidis.IsRedisErr(err); ok {
		return serverError(withCode(re.Error()))
	}
	if errors.Is(err, rueidis.ErrClosing) {
		return fmt.Errorf("%w: %w", redis.ErrClosed, err)
	}
	return err
}

// withCode returns the server's error message msg with the "ERR " that
// rueidis takes off its front put back, as go-redis gives it: the
// primitives (and their users) read the messages by it. A Redis error
// reply opens with its code, one word in capitals (ERR, NOSCRIPT, MOVED,
// WRONGPASS, ...); a message that does not lost its ERR. An "ERR" reply
// whose next word is in capitals cannot be told from a code and is left
// as it is.
func withCode(msg string) string {
	code, _, _ := strings.Cut(msg, " ")
	if code == "" || strings.TrimLeft(code, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_-") != "" {
		return "ERR " + msg
	}
	return msg
}

// setReply puts the reply r into cmd, converted to cmd's type.
func setReply(cmd redis.Cmder, r rueidis.RedisResult) {
	if err := replyError(r.Error()); err != nil {
		cmd.SetErr(err)
		return
	}
	m, _ := r.ToMessage()
	if err := setValue(cmd, &m); err != nil {
		cmd.SetErr(err)
	}
}

// setValue converts m to cmd's value.
func setValue(cmd redis.Cmder, m *rueidis.RedisMessage) error {
	switch cmd := cmd.(type) {
	case *redis.Cmd:
		v, err := value(m)
		cmd.SetVal(v)
		return err
	case *redis.StatusCmd:
		s, err := m.ToString()
		cmd.SetVal(s)
		return err
	case *redis.StringCmd:
		s, err := str(m)
		cmd.SetVal(s)
		return err
	case *redis.IntCmd:
		n, err := m.AsInt64()
		cmd.SetVal(n)
		return err
	case *redis.BoolCmd:
		b, err := boolean(m)
		cmd.SetVal(b)
		return err
	case *redis.FloatCmd:
		f, err := m.AsFloat64()
		cmd.SetVal(f)
		return err
	case *redis.DurationCmd:
		n, err := m.AsInt64()
		unit := time.Second
		if args := cmd.Args(); len(args) > 0 && strings.EqualFold(fmt.Sprint(args[0]), "pttl") {
			unit = time.Millisecond
		}
		if n < 0 { // -1: no expiry, -2: no key, as go-redis gives them
			cmd.SetVal(time.Duration(n))
		} else {
			cmd.SetVal(time.Duration(n) * unit)
		}
		return err
	case *redis.TimeCmd:
		s, err := m.AsStrSlice()
		if err != nil || len(s) != 2 {
			return fmt.Errorf("rueidisadapter: TIME replied %v: %w", m, err)
		}
		sec, err1 := strconv.ParseInt(s[0], 10, 64)
		usec, err2 := strconv.ParseInt(s[1], 10, 64)
		cmd.SetVal(time.Unix(sec, usec*1000))
		return errors.Join(err1, err2)
	case *redis.StringSliceCmd:
		s, err := m.AsStrSlice()
		cmd.SetVal(s)
		return err
	case *redis.IntSliceCmd:
		s, err := m.AsIntSlice()
		cmd.SetVal(s)
		return err
	case *redis.BoolSliceCmd:
		a, err := m.ToArray()
		b := make([]bool, len(a))
		for i := range a {
			if b[i], err = boolean(&a[i]); err != nil {
				break
			}
		}
		cmd.SetVal(b)
		return err
	case *redis.SliceCmd:
		a, err := m.ToArray()
		vs := make([]any, len(a))
		for i := range a {
			if vs[i], err = value(&a[i]); err == redis.Nil {
				vs[i], err = nil, nil
			} else if err != nil {
				break
			}
		}
		cmd.SetVal(vs)
		return err
	case *redis.MapStringStringCmd:
		mm, err := strMap(m)
		cmd.SetVal(mm)
		return err
	case *redis.ScanCmd:
		a, err := m.ToArray()
		if err != nil || len(a) != 2 {
			return fmt.Errorf("rueidisadapter: SCAN replied %v: %w", m, err)
		}
		cursor, err := str(&a[0])
		if err != nil {
			return err
		}
		n, err := strconv.ParseUint(cursor, 10, 64)
		if err != nil {
			return err
		}
		keys, err := a[1].AsStrSlice()
		cmd.SetVal(keys, n)
		return err
	case *redis.ZSliceCmd:
		z, err := zslice(m)
		cmd.SetVal(z)
		return err
	case *redis.MapStringIntCmd:
		mm, err := strMap(m)
		n := make(map[string]int64, len(mm))
		for k, v := range mm {
			if n[k], err = strconv.ParseInt(v, 10, 64); err != nil {
				break
			}
		}
		cmd.SetVal(n)
		return err
	}
	return fmt.Errorf("rueidisadapter: %s: a reply of type %T is not converted", cmd.Name(), cmd)
}

// value converts m as go-redis's Cmd reads a reply: integers as int64,
// strings as string, arrays as []any, maps as map[any]any, a nil inside
// an array as nil, an error reply inside one as a redis.Error; a nil
// reply itself is redis.Nil.
func value(m *rueidis.RedisMessage) (any, error) {
	if err := m.Error(); err != nil {
		return nil, replyError(err)
	}
	switch {
	case m.IsArray():
		a, _ := m.ToArray()
		vs := make([]any, len(a))
		for i := range a {
			v, err := value(&a[i])
			switch {
			case err == redis.Nil:
			case err != nil:
				vs[i] = err
			default:
				vs[i] = v
			}
		}
		return vs, nil
	case m.IsMap():
		kv, _ := m.ToMap()
		mm := make(map[any]any, len(kv))
		for k, v := range kv {
			mm[k], _ = value(&v)
		}
		return mm, nil
	}
	return m.ToAny()
}

// str converts m as go-redis's StringCmd reads a reply: any scalar as
// its text.
func str(m *rueidis.RedisMessage) (string, error) {
	if m.IsInt64() {
		n, _ := m.AsInt64()
		return strconv.FormatInt(n, 10), nil
	}
	v, err := m.ToAny()
	if err != nil {
		return "", err
	}
	return fmt.Sprint(v), nil
}

// boolean converts m as go-redis's BoolCmd reads a reply: 1 or OK is true.
func boolean(m *rueidis.RedisMessage) (bool, error) {
	if m.IsBool() {
		return m.AsBool()
	}
	if m.IsInt64() {
		n, _ := m.AsInt64()
		return n == 1, nil
	}
	s, err := m.ToString()
	return s == "OK", err
}

// strMap converts a map reply, or a flat array of pairs (RESP2's), to a
// map of strings, integers written out.
func strMap(m *rueidis.RedisMessage) (map[string]string, error) {
	if m.IsMap() {
		kv, err := m.ToMap()
		mm := make(map[string]string, len(kv))
		for k, v := range kv {
			if mm[k], err = str(&v); err != nil {
				break
			}
		}
		return mm, err
	}
	a, err := m.ToArray()
	mm := make(map[string]string, len(a)/2)
	for i := 0; err == nil && i+1 < len(a); i += 2 {
		var k string
		if k, err = str(&a[i]); err == nil {
			mm[k], err = str(&a[i+1])
		}
	}
	return mm, err
}

// zslice converts a reply of members with scores: pairs (RESP3's) or a
// flat array (RESP2's).
func zslice(m *rueidis.RedisMessage) ([]redis.Z, error) {
	a, err := m.ToArray()
	if err != nil {
		return nil, err
	}
	var flat []rueidis.RedisMessage
	for i := range a {
		if a[i].IsArray() {
			pair, _ := a[i].ToArray()
			flat = append(flat, pair...)
		} else {
			flat = append(flat, a[i])
		}
	}
	z := make([]redis.Z, 0, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		member, err := str(&flat[i])
		if err != nil {
			return z, err
		}
		score, err := flat[i+1].AsFloat64()
		if err != nil {
			return z, err
		}
		z = append(z, redis.Z{Member: member, Score: score})
	}
	return z, nil
}

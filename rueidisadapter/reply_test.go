package rueidisadapter_test

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/rueidisadapter"
)

// The primitives read replies and errors as the contract gives them, the
// same on RESP3 (rueidis's default) and RESP2: RESP3's booleans as RESP2's
// (a Lua false is null, not false), error replies with their code, the
// "ERR " rueidis takes off included.
func TestRepliesAndErrorsReadTheSameOnRESP2AndRESP3(t *testing.T) {
	s := redistest.Start(t)
	k := s.Prefix() + "k"
	cases := []struct {
		name, src string
		keys      []string
		reply     any
		err       string // the ReplyError's Message
	}{
		{"nested", "return {1, 'two', {3, false}, redis.status_reply('OK'), true}", nil,
			[]any{int64(1), "two", []any{int64(3), nil}, "OK", int64(1)}, ""},
		{"false", "return false", nil, nil, ""},
		{"nil", "return nil", nil, nil, ""},
		{"true", "return true", nil, int64(1), ""},
		{"integer", "return -42", nil, int64(-42), ""},
		{"error with ERR", "return redis.error_reply('ERR boom')", nil, nil, "ERR boom"},
		{"error with a code", "return redis.error_reply('NOPERM not you')", nil, nil, "NOPERM not you"},
		{"syntax", "return redis.pcall('SET', KEYS[1], 'v', 'NX', 'XX')", []string{k}, nil, "ERR syntax error"},
		{"error in an array", "return {1, redis.error_reply('ERR inner')}", nil,
			[]any{int64(1), &luascripts.ReplyError{Message: "ERR inner"}}, ""},
	}
	for _, resp2 := range []bool{false, true} {
		c := rueidisadapter.New(newRueidis(t, rueidis.ClientOption{InitAddress: addrs(s), AlwaysRESP2: resp2}))
		for _, tc := range cases {
			script := luascripts.New(tc.name, tc.src)
			r := script.Run(context.Background(), c, tc.keys)
			if tc.err != "" {
				msg, ok := luascripts.ReplyMessage(r.Err)
				var re *rueidis.RedisError
				if !ok || msg != tc.err || !errors.As(r.Err, &re) {
					t.Errorf("RESP2 %v, %s: error %#v (%q), want a ReplyError %q around a *rueidis.RedisError", resp2, tc.name, r.Err, msg, tc.err)
				}
				continue
			}
			if r.Err != nil {
				t.Errorf("RESP2 %v, %s: %v", resp2, tc.name, r.Err)
				continue
			}
			if !sameReply(r.Val, tc.reply) {
				t.Errorf("RESP2 %v, %s: %#v, want %#v", resp2, tc.name, r.Val, tc.reply)
			}
		}
	}
}

// sameReply compares replies, a ReplyError by its message.
func sameReply(got, want any) bool {
	if w, ok := want.(*luascripts.ReplyError); ok {
		g, ok := got.(*luascripts.ReplyError)
		return ok && g.Message == w.Message
	}
	ga, ok1 := got.([]any)
	wa, ok2 := want.([]any)
	if ok1 && ok2 {
		if len(ga) != len(wa) {
			return false
		}
		for i := range ga {
			if !sameReply(ga[i], wa[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(got, want)
}

// INFO (a verbatim string on RESP3), CONFIG GET (a map on RESP3, an array
// on RESP2) and TIME read the same on either protocol.
func TestServerCommandsReadTheSameOnRESP2AndRESP3(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	for _, resp2 := range []bool{false, true} {
		c := rueidisadapter.New(newRueidis(t, rueidis.ClientOption{InitAddress: addrs(s), AlwaysRESP2: resp2}))
		info, err := c.Info(ctx, "server")
		if err != nil || !strings.HasPrefix(info, "# Server") || !strings.Contains(info, "redis_version:") {
			t.Errorf("RESP2 %v: INFO server: %q, %v", resp2, info, err)
		}
		if v, err := c.ConfigGet(ctx, "maxmemory-policy"); err != nil || v != "noeviction" {
			t.Errorf("RESP2 %v: CONFIG GET maxmemory-policy: %q, %v", resp2, v, err)
		}
		if _, err := c.ConfigGet(ctx, "no-such-parameter"); err == nil {
			t.Errorf("RESP2 %v: CONFIG GET of no parameter: no error", resp2)
		}
		now, err := c.Time(ctx)
		if d := time.Since(now); err != nil || d < -time.Second || d > time.Second {
			t.Errorf("RESP2 %v: TIME %v (%v from here), %v", resp2, now, d, err)
		}
		if v, scriptsRun, err := luascripts.ServerVersion(ctx, c); err != nil || v == "" || !scriptsRun {
			t.Errorf("RESP2 %v: server version %q (scripts run: %v), %v", resp2, v, scriptsRun, err)
		}
		if policy, _, _, err := luascripts.Durability(ctx, c); err != nil || policy != "noeviction" {
			t.Errorf("RESP2 %v: durability: policy %q, %v", resp2, policy, err)
		}
	}
}

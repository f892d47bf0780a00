package clienttest_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// Each primitive decodes its script's reply once, for every client: a
// client that gave a Lua false as false instead of nil, true as true
// instead of 1, a status as something else than its text, or an empty
// table as nil, would break the decoding on that client alone (RESP3
// has booleans, RESP2 does not; a script gets them with redis.setresp(3)).
// Every kind must give the same Go values, by EVALSHA, by EVAL and by
// EVALSHA_RO.
func TestConformanceRepliesAreTheSameGoValuesOnEveryClient(t *testing.T) {
	cases := []struct {
		name, src string
		write     bool // the script writes: no read-only run
		want      any
	}{
		{"integer", "return 42", false, int64(42)},
		{"negative integer", "return -7", false, int64(-7)},
		{"2^62", "return 4611686018427387904", false, int64(1) << 62},
		{"Lua number, truncated", "return 3.99", false, int64(3)},
		{"string", "return 'text'", false, "text"},
		{"empty string", "return ''", false, ""},
		{"binary string", `return '\0\255'`, false, "\x00\xff"},
		{"status", "return redis.status_reply('PONG')", false, "PONG"},
		{"Lua false", "return false", false, nil},
		{"Lua nil", "return nil", false, nil},
		{"Lua true", "return true", false, int64(1)},
		// A script that asked for RESP3 replies (redis.setresp(3)) returns
		// its booleans as RESP3 booleans to a RESP3 connection; without
		// it, Redis sends 1 and null whatever the connection speaks.
		{"Lua true under RESP3", "redis.setresp(3); return true", false, int64(1)},
		{"Lua false under RESP3", "redis.setresp(3); return false", false, nil},
		{"nested booleans under RESP3", "redis.setresp(3); return {true, {false, 1}}", false, []any{int64(1), []any{nil, int64(1)}}},
		{"empty table", "return {}", false, []any{}},
		{"nested", "return {1, 'a', {2, {'b', false}}, true}", false,
			[]any{int64(1), "a", []any{int64(2), []any{"b", nil}}, int64(1)}},
		{"table cut at its first nil", "return {1, nil, 2}", false, []any{int64(1)}},
		{"a missing key's GET", "return redis.call('GET', KEYS[1])", false, nil},
		{"a written key's GET", "redis.call('SET', KEYS[1], '12'); return redis.call('GET', KEYS[1])", true, "12"},
		{"a command's integer", "return redis.call('INCRBY', KEYS[1], 5)", true, int64(5)},
		{"a command's array", "redis.call('RPUSH', KEYS[1], 'x', 'y'); return redis.call('LRANGE', KEYS[1], 0, -1)", true, []any{"x", "y"}},
		{"a command's status", "return redis.call('SET', KEYS[1], 'v')", true, "OK"},
	}
	var got confPerKind[map[string]any]
	confEachClientThen(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		c := k.server(t, srv)
		ctx := confCtx(t)
		replies := map[string]any{}
		for i, tc := range cases {
			ways := map[string]func(key string) luascripts.Reply{
				"EVALSHA": func(key string) luascripts.Reply {
					return luascripts.New(tc.name, tc.src).Run(ctx, c, []string{key})
				},
				"EVAL": func(key string) luascripts.Reply {
					call := []luascripts.Call{{Script: luascripts.New(tc.name, tc.src), Source: true, Keys: []string{key}}}
					c.Eval(ctx, call)
					return call[0].Result()
				},
			}
			if !tc.write {
				ways["EVALSHA_RO"] = func(key string) luascripts.Reply {
					return luascripts.NewReadOnly(tc.name, "#!lua flags=no-writes\n"+tc.src).Run(ctx, c, []string{key})
				}
			}
			for way, run := range ways {
				r := run(fmt.Sprintf("%sr%d:%s", srv.Prefix(), i, way))
				if r.Err != nil || !reflect.DeepEqual(r.Val, tc.want) {
					t.Errorf("%s by %s: %#v, %v; want %#v", tc.name, way, r.Val, r.Err, tc.want)
				}
				replies[tc.name+" by "+way] = r.Val
			}
		}
		got.set(k, replies)
	}, func() {
		var first string
		for name, replies := range got.m {
			if first == "" {
				first = name
				continue
			}
			for what, v := range replies {
				if w := got.m[first][what]; !reflect.DeepEqual(v, w) {
					t.Errorf("%s: %s gives %#v, %s %#v", what, name, v, first, w)
				}
			}
		}
		t.Logf("%d replies compared across %d kinds", len(got.m[first]), len(got.m))
	})
}

package clienttest_test

import (
	"context"
	"math"
	"reflect"
	"strconv"
	"testing"

	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

// A primitive's script reads its ARGV as the go-redis of its first
// version wrote them: a token written as "1e+06", a float cut to six
// digits, a []byte written as its Go syntax, would be a different number
// or member to the script on one client alone, and a read-only script
// sent as a plain EVALSHA would be refused by a replica and escape the
// server's no-writes check. Each call is sent as the contract says:
// EVALSHA, EVAL with Source, the _RO forms for a read-only script; its
// keys and arguments in order and written alike on every client; and a
// batch's calls on one server run in the order of the batch.
func TestConformanceACallIsSentWithItsCommandKeysAndArgumentsAsWritten(t *testing.T) {
	echo := luascripts.New("echo", `local r = {}
for _, k in ipairs(KEYS) do r[#r + 1] = k end
for _, a in ipairs(ARGV) do r[#r + 1] = a end
return r`)
	args := []any{"text", []byte("\x00bytes\xff"), 42, int64(-7), uint64(math.MaxUint64), 0.1, 3.0, 1e21, 2.5e-8, -1.5}
	var got confPerKind[[]any]
	confEachClientThen(t, func(t *testing.T, k kind) {
		srv := redistest.Start(t)
		rdb := srv.Client(t)
		c := k.server(t, srv)
		ctx := confCtx(t)
		p := srv.Prefix()
		confLoad(t, rdb, echo, confCount, confRead)

		keys := []string{p + "k1", p + "k2", p + "k3"}
		call := []luascripts.Call{{Script: echo, Keys: keys, Args: args}}
		c.Eval(ctx, call)
		r, err := call[0].Result().Slice()
		if err != nil || len(r) != len(keys)+len(args) {
			t.Fatalf("echo: %#v, %v; want %d values", r, err, len(keys)+len(args))
		}
		for i, key := range keys {
			if r[i] != key {
				t.Errorf("KEYS[%d] = %#v; want %q", i+1, r[i], key)
			}
		}
		for i, a := range args {
			v, _ := r[len(keys)+i].(string)
			switch a := a.(type) {
			case string:
				if v != a {
					t.Errorf("ARGV[%d] = %q; want %q", i+1, v, a)
				}
			case []byte:
				if v != string(a) {
					t.Errorf("ARGV[%d] = %q; want the bytes %q", i+1, v, a)
				}
			case float64:
				if f, err := strconv.ParseFloat(v, 64); err != nil || f != a {
					t.Errorf("ARGV[%d] = %q; want a decimal that reads back as %v", i+1, v, a)
				}
				if want := strconv.FormatFloat(a, 'f', -1, 64); v != want {
					t.Errorf("ARGV[%d] = %q; want %q, as go-redis writes %v", i+1, v, want, a)
				}
			default:
				if want := confFmtInt(a); v != want {
					t.Errorf("ARGV[%d] = %q; want %q", i+1, v, want)
				}
			}
		}
		got.set(k, r[len(keys):]) // the keys have each server's prefix

		// The command each call is sent with, counted by the server.
		if err := rdb.ConfigResetStat(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		batch := []luascripts.Call{
			{Script: confCount, Keys: []string{p + "n"}},
			{Script: confCount, Source: true, Keys: []string{p + "n"}},
			{Script: confRead, Keys: []string{p + "n"}},
			{Script: confRead, Source: true, Keys: []string{p + "n"}},
		}
		c.Eval(ctx, batch)
		for i, call := range batch {
			if call.Err != nil {
				t.Errorf("call %d: %v", i, call.Err)
			}
		}
		for _, cmd := range []string{"evalsha", "eval", "evalsha_ro", "eval_ro"} {
			if n := confCalls(t, rdb, cmd); n != 1 {
				t.Errorf("the server ran %s %d times; want once, for the one call sent with it", cmd, n)
			}
		}

		// A batch's calls on one server, in the batch's order.
		appendTo := luascripts.New("append", "return redis.call('RPUSH', KEYS[1], ARGV[1])")
		batch = nil
		var want []string
		for i := range 40 {
			key := p + "log"
			if i%3 == 1 {
				key = p + "elsewhere" + strconv.Itoa(i) // other keys between, on the same server
			}
			batch = append(batch, luascripts.Call{Script: appendTo, Keys: []string{key}, Args: []any{i}})
			if i%3 != 1 {
				want = append(want, strconv.Itoa(i))
			}
		}
		luascripts.Send(ctx, c, batch)
		log, err := rdb.LRange(context.Background(), p+"log", 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(log, want) {
			t.Errorf("a batch's calls on one key ran in the order %q; want the batch's, %q", log, want)
		}
	}, func() {
		var first string
		for name, r := range got.m {
			if first == "" {
				first = name
			} else if !reflect.DeepEqual(r, got.m[first]) {
				t.Errorf("the script read the arguments %q on %s, %q on %s", r, name, got.m[first], first)
			}
		}
	})
}

// confFmtInt writes an integer argument in decimal.
func confFmtInt(a any) string {
	switch a := a.(type) {
	case int:
		return strconv.Itoa(a)
	case int64:
		return strconv.FormatInt(a, 10)
	case uint64:
		return strconv.FormatUint(a, 10)
	}
	return "not an integer"
}

package luascripts_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/redis-primitives/go/internal/luascripts"
)

// A reader must never hand back a zero value without an error: a null
// reply read as 0 or "" would be taken for a real count or text (a fence's
// mark of 0, a lock held by nobody).
func TestReplyReadersNeverTakeANullOrAWrongTypeForAValue(t *testing.T) {
	boom := errors.New("boom")
	for _, c := range []struct {
		name  string
		r     luascripts.Reply
		int64 int64
		text  string
		err   string // "" ok, "nil" ErrNil, "boom" the reply's error, "type" a type error
	}{
		{"integer", luascripts.Reply{Val: int64(42)}, 42, "42", ""},
		{"digits", luascripts.Reply{Val: "17"}, 17, "17", ""},
		{"null", luascripts.Reply{}, 0, "", "nil"},
		{"error", luascripts.Reply{Val: int64(1), Err: boom}, 0, "", "boom"},
		{"array", luascripts.Reply{Val: []any{int64(1)}}, 0, "", "type"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, nerr := c.r.Int64()
			s, serr := c.r.Text()
			check := func(what string, err error) {
				t.Helper()
				switch c.err {
				case "":
					if err != nil {
						t.Errorf("%s: %v, want no error", what, err)
					}
				case "nil":
					if !errors.Is(err, luascripts.ErrNil) {
						t.Errorf("%s: %v, want ErrNil", what, err)
					}
				case "boom":
					if !errors.Is(err, boom) {
						t.Errorf("%s: %v, want the reply's own error", what, err)
					}
				case "type":
					if err == nil || errors.Is(err, luascripts.ErrNil) {
						t.Errorf("%s: %v, want a type error", what, err)
					}
				}
			}
			check("Int64", nerr)
			if c.err == "" && c.name != "array" {
				check("Text", serr)
			}
			if nerr == nil && n != c.int64 {
				t.Errorf("Int64 = %d, want %d", n, c.int64)
			}
			if serr == nil && s != c.text {
				t.Errorf("Text = %q, want %q", s, c.text)
			}
		})
	}
	if _, err := (luascripts.Reply{Val: "x1"}).Int64(); err == nil {
		t.Error(`Int64 of "x1" read a number`)
	}
}

func TestReplySlicesReadEveryElementOrSayWhichFailed(t *testing.T) {
	r := luascripts.Reply{Val: []any{int64(3), "4", int64(-5)}}
	if got, err := r.Int64Slice(); err != nil || !slices.Equal(got, []int64{3, 4, -5}) {
		t.Fatalf("Int64Slice = %v, %v", got, err)
	}
	if got, err := r.StringSlice(); err != nil || !slices.Equal(got, []string{"3", "4", "-5"}) {
		t.Fatalf("StringSlice = %v, %v", got, err)
	}
	// A null element of a string array is "" (a hash field that is not
	// there), as go-redis reads it.
	if got, err := (luascripts.Reply{Val: []any{"a", nil}}).StringSlice(); err != nil || !slices.Equal(got, []string{"a", ""}) {
		t.Fatalf("StringSlice with a null element = %q, %v", got, err)
	}
	bad := luascripts.Reply{Val: []any{int64(1), []any{}}}
	if _, err := bad.Int64Slice(); err == nil || fmt.Sprint(err)[:9] != "element 1" {
		t.Fatalf("Int64Slice of a nested array: %v, want an error naming element 1", err)
	}
	if _, err := (luascripts.Reply{}).Slice(); !errors.Is(err, luascripts.ErrNil) {
		t.Fatalf("Slice of a null reply: %v, want ErrNil", err)
	}
	if _, err := (luascripts.Reply{Val: "x"}).Slice(); err == nil {
		t.Fatal("Slice of a string read an array")
	}
	if n, err := (luascripts.Reply{Val: int64(7)}).Int(); err != nil || n != 7 {
		t.Fatalf("Int = %d, %v", n, err)
	}
	if v, err := (luascripts.Reply{Val: "v"}).Result(); err != nil || v != "v" {
		t.Fatalf("Result = %v, %v", v, err)
	}
}

// An error reply is matched by its message, through any wrapping, and by
// the client's own error it carries.
func TestReplyErrorIsReadThroughWrappingAndUnwrapsToTheClientsError(t *testing.T) {
	own := errors.New("client's own NOPERM")
	err := fmt.Errorf("lock: acquire: %w", &luascripts.ReplyError{Message: "NOPERM this user has no permissions", Err: own})
	msg, ok := luascripts.ReplyMessage(err)
	if !ok || msg != "NOPERM this user has no permissions" {
		t.Fatalf("ReplyMessage = %q, %v", msg, ok)
	}
	if !errors.Is(err, own) {
		t.Fatal("the client's own error is not in the chain")
	}
	if _, ok := luascripts.ReplyMessage(errors.New("EOF")); ok {
		t.Fatal("a connection's error read as an error reply")
	}
	if _, ok := luascripts.ReplyMessage(nil); ok {
		t.Fatal("no error read as an error reply")
	}
	cmd, ok := luascripts.RefusedScript(err)
	if !ok || cmd != "EVALSHA_RO" {
		t.Fatalf("RefusedScript = %q, %v; want EVALSHA_RO", cmd, ok)
	}
	if cmd, ok := luascripts.RefusedScript(&luascripts.ReplyError{Message: "NOPERM User u has no permissions to run the 'eval_ro' command"}); !ok || cmd != "EVAL_RO" {
		t.Fatalf("RefusedScript of eval_ro = %q, %v", cmd, ok)
	}
	if _, ok := luascripts.RefusedScript(&luascripts.ReplyError{Message: "ERR nope"}); ok {
		t.Fatal("an ERR reply read as NOPERM")
	}
}

// The refusals Send waits out are the ones a migrating slot gives, and
// only error replies: a connection's error that happens to read "MOVED"
// is not one.
func TestMigratingKnowsOnlyTheRefusalsOfAMigratingSlot(t *testing.T) {
	for msg, want := range map[string]bool{
		"TRYAGAIN Multiple keys request during rehashing of slot": true,
		"MOVED 3999 127.0.0.1:6381":                               true,
		"ASK 3999 127.0.0.1:6381":                                 true,
		"ERR MOVED is not this":                                   false,
		"NOSCRIPT No matching script":                             false,
		"CLUSTERDOWN The cluster is down":                         false,
	} {
		if got := luascripts.Migrating(&luascripts.ReplyError{Message: msg}); got != want {
			t.Errorf("Migrating(%q) = %v, want %v", msg, got, want)
		}
	}
	if luascripts.Migrating(errors.New("MOVED 1 x:1")) {
		t.Error("a plain error read as a refusal")
	}
}

// The body a call carries is the digest or the source, and the flags of
// each constructor are what the clients read to decide whether a call may
// be sent twice.
func TestScriptFlagsTellEachClientWhatItMaySendAgain(t *testing.T) {
	src := "return 1"
	for _, c := range []struct {
		s                         *luascripts.Script
		readOnly, resendable, ask bool
	}{
		{luascripts.New("w", src), false, false, false},
		{luascripts.NewReadOnly("r", "#!lua flags=no-writes\n"+src), true, true, false},
		{luascripts.NewIdempotent("i", src), false, true, false},
		{luascripts.NewWithoutAsk("a", src), false, false, true},
	} {
		if c.s.ReadOnly() != c.readOnly || c.s.Resendable() != c.resendable || c.s.NoAsk() != c.ask {
			t.Errorf("%s: read-only %v, resendable %v, no ASK %v; want %v, %v, %v", c.s.Name(),
				c.s.ReadOnly(), c.s.Resendable(), c.s.NoAsk(), c.readOnly, c.resendable, c.ask)
		}
		if string(c.s.Body(false)) != c.s.SHA1() || string(c.s.Body(true)) != c.s.Source() {
			t.Errorf("%s: bodies %q and %q, want the digest and the source", c.s.Name(), c.s.Body(false), c.s.Body(true))
		}
	}
}

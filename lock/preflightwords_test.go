package lock_test

import (
	"context"
	"strings"
	"testing"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// A restart without persistence loses the counter. With the default
// tokens that does not reissue a token (they rest on the server's clock,
// within the package doc's bound); with WithCounterTokens it does. The
// report says which, instead of "reissues tokens" for both.
func TestPreflightSaysALostCounterReissuesTokensOnlyWithCounterTokens(t *testing.T) {
	s := redistest.Start(t, redistest.Own()) // the fixture's default: --save "" --appendonly no
	for _, tc := range []struct {
		name string
		opts []lock.Option
		want string
	}{
		{"default tokens", nil, "server's clock alone"},
		{"counter tokens", []lock.Option{lock.WithCounterTokens()}, "handed out again"},
	} {
		r, err := newLocker(t, s, tc.opts...).Preflight(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %q", tc.name, r.Problems)
		if len(r.Problems) != 1 || !strings.Contains(r.Problems[0], "no persistence") || !strings.Contains(r.Problems[0], tc.want) {
			t.Errorf("%s: problems %q, want the missing persistence saying %q", tc.name, r.Problems, tc.want)
		}
	}
}

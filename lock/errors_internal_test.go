package lock

import (
	"context"
	"errors"
	"testing"
)

// The replies Redis 6.2 gives to what lock sends (no 6.2 server here: the
// texts are 6.2's, for EVALSHA_RO and for a script with a flags shebang).
func TestARedisOlderThan7RefusalSaysItNeedsRedis7(t *testing.T) {
	for _, reply := range []string{
		"ERR unknown command 'evalsha_ro', with args beginning with: 'abc' '2' ",
		"ERR unknown command 'EVAL_RO', with args beginning with: ",
		"ERR Error compiling script (new function): user_script:1: unexpected symbol near '#' ",
	} {
		err := wrap(context.Background(), "holder", "job", errors.New(reply))
		if !errors.Is(err, ErrRedisTooOld) {
			t.Errorf("%q: %v does not match ErrRedisTooOld", reply, err)
		}
	}
	if err := wrap(context.Background(), "holder", "job", errors.New("ERR something else")); errors.Is(err, ErrRedisTooOld) {
		t.Errorf("an unrelated error matched ErrRedisTooOld: %v", err)
	}
}

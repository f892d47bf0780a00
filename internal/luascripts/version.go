package luascripts

import (
	"errors"
	"fmt"
	"strings"
)

// ErrRedisTooOld is matched by the error of a script call that a server
// older than Redis 7.0 refused: the primitives need EVALSHA_RO and EVAL_RO
// and the flags line (#!lua flags=no-writes) of read-only scripts, all new
// in 7.0. Each primitive exports it under its own name (lock.ErrRedisTooOld,
// fence.ErrRedisTooOld, ratelimit.ErrRedisTooOld), so callers never import
// this package.
var ErrRedisTooOld = errors.New("needs Redis 7.0 or later")

// CheckVersion returns err wrapped with ErrRedisTooOld when it is how a
// server older than 7.0 refuses a script call, and err unchanged otherwise.
// Run, RunWait, Send and SendOnce apply it, knowing the script (see
// checkVersion); a caller that sends calls with Client.Eval itself applies
// it to each call's error.
func CheckVersion(err error) error { return checkVersion(err, true) }

// checkVersion is CheckVersion for a call of a script that opens with a
// flags line or not (flagged). A server older than 7.0 stops at the '#' of
// a flags line, which only a script that has one can meet: any other
// script's compile error at a '#' is its own, on every server (fence's
// Eval runs a caller's Lua, in which '#' is the length operator).
func checkVersion(err error, flagged bool) error {
	if err == nil || errors.Is(err, ErrRedisTooOld) {
		return err
	}
	msg := strings.ToLower(err.Error())
	for _, cmd := range []string{"evalsha_ro", "eval_ro"} {
		// 7.0 quotes the command it does not know (as when it is renamed
		// away); 6.2 puts it in backticks.
		if strings.Contains(msg, "unknown command '"+cmd+"'") || strings.Contains(msg, "unknown command `"+cmd+"`") {
			return fmt.Errorf("%w: %w", ErrRedisTooOld, err)
		}
	}
	// Redis 6 and the emulators that parse scripts as it does (miniredis's
	// Lua says "line:1(column:1) near '#': syntax error") stop at the flags.
	if flagged && (strings.Contains(msg, "unexpected symbol near '#'") ||
		strings.Contains(msg, "near '#':") && strings.Contains(msg, "syntax error")) {
		return fmt.Errorf("%w: %w", ErrRedisTooOld, err)
	}
	for _, lib := range []string{"struct", "cjson", "cmsgpack", "bit"} {
		if strings.Contains(msg, "nonexistent global variable '"+lib+"'") {
			return fmt.Errorf("the server's Lua has no %s library, which every Redis has (an emulator such as miniredis runs only some scripts): %w", lib, err)
		}
	}
	return err
}

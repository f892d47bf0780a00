package luascripts

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// The start-up checks (Preflight) of every primitive read the same facts
// from a server; they are read here once.

// ServerVersion returns the server's version (INFO server, redis_version)
// and whether it runs the primitives' scripts: Redis 7.0 or later.
func ServerVersion(ctx context.Context, c Client) (version string, scriptsRun bool, err error) {
	info, err := c.Info(ctx, "server")
	if msg, refused := ReplyMessage(err); refused && !strings.HasPrefix(msg, "NOPERM") {
		return "", false, fmt.Errorf("INFO server: %w (the checks need a server that reports its version; an emulator such as miniredis does not)", err)
	}
	if err != nil {
		return "", false, err
	}
	version = infoField(info, "redis_version")
	major, _, _ := strings.Cut(version, ".")
	n, _ := strconv.Atoi(major)
	return version, n >= 7, nil
}

// Durability returns what decides whether a key without a TTL survives:
// maxmemory-policy, appendonly and save (trimmed). An error the server
// returns (an ACL without CONFIG GET) is a *ReplyError.
func Durability(ctx context.Context, c Client) (policy string, appendOnly bool, save string, err error) {
	var v [3]string
	for i, p := range [3]string{"maxmemory-policy", "appendonly", "save"} {
		if v[i], err = c.ConfigGet(ctx, p); err != nil {
			return "", false, "", fmt.Errorf("CONFIG GET %s: %w", p, err)
		}
	}
	return v[0], v[1] == "yes", strings.TrimSpace(v[2]), nil
}

// RefusedScript reports whether err is the server's NOPERM refusal of a
// read-only script call itself (the user may not run EVALSHA_RO or EVAL_RO,
// or not on its keys), and names the command refused.
func RefusedScript(err error) (string, bool) {
	msg, ok := ReplyMessage(err)
	if !ok || !strings.HasPrefix(msg, "NOPERM") {
		return "", false
	}
	if strings.Contains(msg, "'eval_ro'") {
		return "EVAL_RO", true
	}
	return "EVALSHA_RO", true
}

package luascripts

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// The start-up checks (Preflight) of every primitive read the same facts
// from a server; they are read here once.

// InfoClient is the part of a client ServerVersion needs; every go-redis
// client has it.
type InfoClient interface {
	Info(ctx context.Context, section ...string) *redis.StringCmd
}

// ServerVersion returns the server's version (INFO server, redis_version)
// and whether it runs the primitives' scripts: Redis 7.0 or later.
func ServerVersion(ctx context.Context, c InfoClient) (version string, scriptsRun bool, err error) {
	info, err := c.Info(ctx, "server").Result()
	if err != nil {
		return "", false, err
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "redis_version:"); ok {
			version = v
			break
		}
	}
	major, _, _ := strings.Cut(version, ".")
	n, _ := strconv.Atoi(major)
	return version, n >= 7, nil
}

// ConfigClient is the part of a client Durability needs.
type ConfigClient interface {
	ConfigGet(ctx context.Context, parameter string) *redis.MapStringStringCmd
}

// Durability returns what decides whether a key without a TTL survives:
// maxmemory-policy, appendonly and save (trimmed). An error the server
// returns (an ACL without CONFIG GET) matches redis.Error.
func Durability(ctx context.Context, c ConfigClient) (policy string, appendOnly bool, save string, err error) {
	var v [3]string
	for i, p := range [3]string{"maxmemory-policy", "appendonly", "save"} {
		m, err := c.ConfigGet(ctx, p).Result()
		if err != nil {
			return "", false, "", fmt.Errorf("CONFIG GET %s: %w", p, err)
		}
		var ok bool
		if v[i], ok = m[p]; !ok {
			return "", false, "", fmt.Errorf("CONFIG GET %s: the server did not report it", p)
		}
	}
	return v[0], v[1] == "yes", strings.TrimSpace(v[2]), nil
}

// RefusedScript reports whether err is the server's NOPERM refusal of a
// read-only script call itself (the user may not run EVALSHA_RO or EVAL_RO,
// or not on its keys), and names the command refused.
func RefusedScript(err error) (string, bool) {
	var re redis.Error
	if !errors.As(err, &re) || !strings.HasPrefix(re.Error(), "NOPERM") {
		return "", false
	}
	if strings.Contains(re.Error(), "'eval_ro'") {
		return "EVAL_RO", true
	}
	return "EVALSHA_RO", true
}

package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// serverStats is what the server says it spent so far.
type serverStats struct {
	cmd time.Duration // sum of usec over commandstats, INFO itself excluded
	cpu time.Duration // used_cpu_user + used_cpu_sys
}

func readServerStats(ctx context.Context, c *redis.Client) (serverStats, error) {
	info, err := c.Info(ctx, "commandstats", "cpu").Result()
	if err != nil {
		return serverStats{}, fmt.Errorf("bench: INFO commandstats cpu: %w", err)
	}
	var st serverStats
	for line := range strings.SplitSeq(info, "\r\n") {
		if rest, ok := strings.CutPrefix(line, "cmdstat_"); ok {
			name, fields, _ := strings.Cut(rest, ":")
			if name == "info" {
				continue
			}
			for f := range strings.SplitSeq(fields, ",") {
				if v, ok := strings.CutPrefix(f, "usec="); ok {
					n, err := strconv.ParseInt(v, 10, 64)
					if err != nil {
						return serverStats{}, fmt.Errorf("bench: commandstats %q: %w", line, err)
					}
					st.cmd += time.Duration(n) * time.Microsecond
				}
			}
			continue
		}
		for _, name := range []string{"used_cpu_user:", "used_cpu_sys:"} {
			if v, ok := strings.CutPrefix(line, name); ok {
				secs, err := strconv.ParseFloat(v, 64)
				if err != nil {
					return serverStats{}, fmt.Errorf("bench: INFO cpu %q: %w", line, err)
				}
				st.cpu += time.Duration(secs * float64(time.Second))
			}
		}
	}
	return st, nil
}

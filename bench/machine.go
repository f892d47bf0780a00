package bench

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Machine is where the figures were taken.
type Machine struct {
	CPU       string `json:"cpu"`
	Cores     int    `json:"cores"`
	Memory    string `json:"memory"`
	Go        string `json:"go"`
	Platform  string `json:"platform"`
	Redis     string `json:"redis"`
	LoadStart string `json:"loadavg_start"`
	LoadEnd   string `json:"loadavg_end"`
}

func machine(ctx context.Context, c *redis.Client) Machine {
	m := Machine{
		CPU:       procField("/proc/cpuinfo", "model name"),
		Cores:     runtime.NumCPU(),
		Memory:    procField("/proc/meminfo", "MemTotal"),
		Go:        runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
		LoadStart: loadAvg(),
	}
	if info, err := c.Info(ctx, "server").Result(); err == nil {
		for line := range strings.SplitSeq(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
				m.Redis = v
			}
		}
	}
	return m
}

// procField returns the value of the first "name: value" line of a /proc
// file, or "" where there is none (not Linux).
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// loadAvg returns the 1, 5 and 15 minute load averages, or "".
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// Command servercost counts the instructions redis-server executes per
// operation of this project's primitives and of the peers' (package bench's
// CostCases): a redis-server of its own runs under valgrind's callgrind, on
// a free loopback port, and for each case the counters are zeroed, n
// operations run, and the counts dumped (callgrind_control -z, -d).
//
// Instructions, unlike seconds, do not move with what else the machine is
// doing: the same binary and inputs give the same count, so this is how a
// script's server cost is compared on a shared machine. Everything the
// server does for an operation is counted: reading and parsing the request,
// the script and its commands, the reply, and its share of the server's
// periodic tasks.
//
//	go run ./cmd/servercost [-n 2000] [-keys 1000] [-only lock]
//
// Needs valgrind (Debian: valgrind) and redis-server.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/bench"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/luascripts"
	"github.com/redis-primitives/go/internal/redistest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "servercost:", err)
		os.Exit(1)
	}
}

func run() error {
	n := flag.Int("n", 2000, "operations per case")
	keys := flag.Int("keys", 1000, "distinct keys the operations cycle through")
	only := flag.String("only", "", "run only the cases whose name contains this (PING always runs)")
	flag.Parse()
	for _, tool := range []string{"valgrind", "callgrind_control", "redis-server"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("needs %s (Debian: apt-get install valgrind redis-server): %w", tool, err)
		}
	}
	dir, err := os.MkdirTemp("", "servercost")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	srv, err := redistest.LaunchUnder([]string{"valgrind", "--tool=callgrind", "--callgrind-out-file=" + filepath.Join(dir, "cg.out")})
	if err != nil {
		return err
	}
	defer srv.Close()
	pid, addr := strconv.Itoa(srv.LaunchedPid()), srv.Addr()

	ctx := context.Background()
	c := redis.NewClient(srv.Options())
	version, _, err := luascripts.ServerVersion(ctx, goredisadapter.New(c))
	_ = c.Close()
	if err != nil {
		return err
	}
	fmt.Printf("redis-server %s under callgrind; %d operations per case over %d keys\n\n", version, *n, *keys)

	cases, closeAll := bench.CostCases(addr, "cost:", *keys)
	defer closeAll()
	var base float64
	width := 0
	for _, cs := range cases {
		width = max(width, len(cs.Name)+16)
	}
	fmt.Printf("%-*s %14s %16s\n", width, "case", "instr/op", "minus a PING")
	for i, cs := range cases {
		if i > 0 && !strings.Contains(cs.Name, *only) {
			continue
		}
		// Not cg.out.*: callgrind numbers its own dumps so, and a dump
		// renamed to a name it writes next would hide that one.
		dump := filepath.Join(dir, fmt.Sprintf("case-%d.callgrind", i))
		zero := func() error { return exec.Command("callgrind_control", "-z", pid).Run() }
		done := func() error {
			// -d writes cg.out.<k>; find the newest after it.
			before, _ := filepath.Glob(filepath.Join(dir, "cg.out.*"))
			if err := exec.Command("callgrind_control", "-d", "case"+strconv.Itoa(i), pid).Run(); err != nil {
				return err
			}
			after, _ := filepath.Glob(filepath.Join(dir, "cg.out.*"))
			for _, f := range after {
				if !slices.Contains(before, f) {
					return os.Rename(f, dump)
				}
			}
			return errors.New("callgrind_control -d wrote no dump")
		}
		if err := bench.RunCost(ctx, cs, *n, zero, done); err != nil {
			return err
		}
		ir, err := totalIr(dump)
		if err != nil {
			return err
		}
		per := ir / float64(*n)
		if i == 0 {
			base = per
		}
		conc := ""
		if cs.Concurrency > 1 {
			conc = fmt.Sprintf(" (%d goroutines)", cs.Concurrency)
		}
		fmt.Printf("%-*s %14.0f %16.0f\n", width, cs.Name+conc, per, per-base)
	}
	return nil
}

// totalIr reads the instruction total of a callgrind dump ("summary:" or
// "totals:" line).
func totalIr(path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, p := range []string{"summary:", "totals:"} {
			if rest, ok := strings.CutPrefix(line, p); ok {
				fs := strings.Fields(rest)
				if len(fs) > 0 {
					return strconv.ParseFloat(fs[0], 64)
				}
			}
		}
	}
	return 0, fmt.Errorf("%s: no totals", path)
}

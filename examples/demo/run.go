package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"
)

// Exit codes.
const (
	exitOK          = 0   // every failure showed and every fix held
	exitFailed      = 1   // some row did not show what it should
	exitSetup       = 2   // bad flags, no server, an output file not written
	exitInterrupted = 130 // Ctrl-C
)

// scenario runs one row of the table. It fills row and may add timelines;
// an error stops the scenario and marks the row failed.
type scenario struct {
	id, title string
	run       func(ctx context.Context, d *demo, row *Row, rep *Report) error
}

var scenarios = []scenario{
	{"fixed-window-boundary", "rate limit at a window boundary", boundary},
	{"sliding-window-concurrency", "rate limit under 100 concurrent callers", concurrency},
	{"stale-write", "stale write after a lease expired", staleWrite},
	{"release-after-expiry", "release after the lease expired", releaseAfterExpiry},
	{"crashed-semaphore-holders", "semaphore after its holders crashed", crashedHolders},
	{"leader-election", "leader election", leaderElection},
}

// run is the demo: it parses args, runs every scenario and reports. It
// returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonPath := fs.String("json", "", "also write the measured figures to `FILE` as JSON")
	svgPath := fs.String("svg", "", "draw the fencing and split-brain timelines to `FILE` (SVG)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: demo [-json FILE] [-svg FILE]")
		fmt.Fprintln(stderr, "Runs every failure reproduction next to its fix against a redis-server it starts")
		fmt.Fprintln(stderr, "(or REDIS_ADDR) and prints what it measured. Exits 0 only if every fix held.")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK
		}
		return exitSetup
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitSetup
	}

	start := time.Now()
	progress := func(format string, args ...any) {
		fmt.Fprintf(stderr, "demo: "+format+"\n", args...)
	}
	d, err := connect(ctx, stderr)
	if err != nil {
		progress("%v", err)
		return exitSetup
	}
	defer func() {
		if err := d.close(); err != nil {
			progress("cleanup: %v", err)
		}
	}()
	progress("%s", d.describe())

	rep := &Report{Server: d.describe(), Started: start}
	for i, sc := range scenarios {
		row := newRow(sc.id, sc.title)
		t := time.Now()
		err := sc.run(ctx, d, row, rep)
		row.ElapsedMs = ms(time.Since(t))
		if ctx.Err() != nil {
			progress("interrupted during %q; stopping the server and any child process", sc.title)
			return exitInterrupted
		}
		if err != nil {
			row.fail(err)
		}
		rep.Rows = append(rep.Rows, row)
		verdict := "ok"
		if !row.OK {
			verdict = "FAIL"
		}
		progress("[%d/%d] %s: %s (%s)", i+1, len(scenarios), sc.title, verdict, fmtMs(time.Since(t)))
	}
	rep.ElapsedMs = ms(time.Since(start))
	rep.OK = true
	for _, r := range rep.Rows {
		rep.OK = rep.OK && r.OK
	}

	printTable(stdout, rep)
	code := exitOK
	if !rep.OK {
		code = exitFailed
	}
	if *jsonPath != "" {
		if err := writeJSON(*jsonPath, rep); err != nil {
			progress("-json: %v", err)
			code = exitSetup
		} else {
			progress("wrote %s", *jsonPath)
		}
	}
	if *svgPath != "" {
		if err := writeSVG(*svgPath, rep.Timelines); err != nil {
			progress("-svg: %v", err)
			code = exitSetup
		} else {
			progress("wrote %s", *svgPath)
		}
	}
	return code
}

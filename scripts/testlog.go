//go:build ignore

// testlog reads the `go test -json` logs scripts/test.sh keeps (one per
// module, in test-results/).
//
//	go run scripts/testlog.go FILE...             the output of every failed test, and of
//	                                             a package that failed outside its tests
//	go run scripts/testlog.go -slowest N FILE...  the N slowest tests, subtests apart
//
// Lines that are not JSON (a build failure before the tests ran) are
// printed as they are.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"
)

type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

func main() {
	slowest := flag.Int("slowest", 0, "list the `N` slowest tests instead of the failures")
	flag.Parse()
	var events []event
	var raw []string
	for _, name := range flag.Args() {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		for sc.Scan() {
			var e event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				raw = append(raw, sc.Text())
				continue
			}
			events = append(events, e)
		}
		f.Close()
	}
	if *slowest > 0 {
		listSlowest(events, *slowest)
		return
	}
	for _, l := range raw {
		fmt.Println(l)
	}
	listFailures(events)
}

// short is a package's path without the repository's prefix.
func short(pkg string) string {
	return strings.TrimPrefix(pkg, "github.com/redis-primitives/go/")
}

func listSlowest(events []event, n int) {
	var done []event
	for _, e := range events {
		if e.Test != "" && !strings.Contains(e.Test, "/") && (e.Action == "pass" || e.Action == "fail") {
			done = append(done, e)
		}
	}
	sort.Slice(done, func(i, j int) bool { return done[i].Elapsed > done[j].Elapsed })
	for i, e := range done {
		if i == n {
			break
		}
		d := time.Duration(e.Elapsed * float64(time.Second)).Round(100 * time.Millisecond)
		fmt.Printf("%8v  %-4s %s %s\n", d, e.Action, short(e.Package), e.Test)
	}
}

// A key names a test of a package ("" for the package itself).
type key struct{ pkg, test string }

func listFailures(events []event) {
	out := map[key][]string{}
	var failed []key
	for _, e := range events {
		k := key{e.Package, e.Test}
		switch e.Action {
		case "output":
			out[k] = append(out[k], e.Output)
		case "fail":
			failed = append(failed, k)
		}
	}
	for _, k := range failed {
		if k.test != "" && hasFailedChild(failed, k) {
			continue // its failed subtest prints the same lines
		}
		name := short(k.pkg)
		if k.test != "" {
			name += " " + k.test
		}
		fmt.Printf("--- %s\n%s", name, strings.Join(out[k], ""))
	}
}

func hasFailedChild(failed []key, k key) bool {
	for _, f := range failed {
		if f.pkg == k.pkg && strings.HasPrefix(f.test, k.test+"/") {
			return true
		}
	}
	return false
}

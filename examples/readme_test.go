package examples_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/redis-primitives/go/internal/redistest"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// The README names, beside each statement of what is and is not
// guaranteed, the test that asserts it. A renamed or deleted test would
// leave the statement unproven while the README still claims otherwise.
func TestEveryTestTheReadmeNamesExists(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	// Every section that names tests: what is not guaranteed, what a
	// timed-out call may still have done.
	section := string(readme)
	if !strings.Contains(section, "## What this does not guarantee") {
		t.Fatal(`README.md has no "What this does not guarantee" section`)
	}
	// References read `dir`: `TestName`, dir relative to the repository root.
	refs := regexp.MustCompile("`([a-z][a-z/]*)`: `(Test[A-Za-z0-9_]+)`").FindAllStringSubmatch(section, -1)
	if len(refs) < 10 {
		t.Fatalf("found %d test references in the section; the statements lost their tests", len(refs))
	}
	for _, ref := range refs {
		dir, name := ref[1], ref[2]
		if !definesTest(t, filepath.Join("..", dir), name) {
			t.Errorf("README names %s in %s/, which defines no such test", name, dir)
		}
	}
	t.Logf("%d references, all resolved", len(refs))
}

func definesTest(t *testing.T, dir, name string) bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	decl := regexp.MustCompile(`(?m)^func ` + name + `\(t \*testing\.T\)`)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if decl.Match(src) {
			return true
		}
	}
	return false
}

package examples_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The packages whose examples the README and the package docs quote.
var documented = []string{"goredisadapter", "lock", "fence", "fence/pgfence", "ratelimit", "ratelimit/httprate", "election", "semaphore", "semaphore/httpsem", "rueidisadapter", "valkeyadapter"}

// A snippet copied from the README or a package doc must compile and do
// what it says. Each one is the body of an Example function, or a whole
// function of a test file, which go test compiles (and runs, for an Example
// with an Output comment): a README block or a doc comment's code block that
// differs from all of them fails here, so the text a user copies is always
// the text the compiler saw.
func TestEverySnippetInTheDocsIsTheBodyOfACompiledExample(t *testing.T) {
	bodies := exampleBodies(t)
	if len(bodies) == 0 {
		t.Fatal("no Example functions found")
	}
	readme, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	blocks := markdownGoBlocks(string(readme))
	if len(blocks) < 5 {
		t.Fatalf("README.md has %d Go blocks; the quickstarts are gone", len(blocks))
	}
	checked := 0
	for _, b := range blocks {
		checked++
		if _, ok := bodies[b]; !ok {
			t.Errorf("README.md: this Go block is the body of no Example, nor a function, in %v:\n%s", documented, b)
		}
	}
	for _, dir := range documented {
		src, err := os.ReadFile(filepath.Join("..", dir, "doc.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range docCodeBlocks(string(src)) {
			if !isGo(b) {
				continue // a command line, an ACL, a key layout: not Go
			}
			checked++
			if _, ok := bodies[b]; !ok {
				t.Errorf("%s/doc.go: this code block is the body of no Example, nor a function, in %v:\n%s", dir, documented, b)
			}
		}
	}
	t.Logf("%d snippets, each the body of a compiled Example", checked)
}

// exampleBodies returns, as dedented source text, the body of every Example
// function of the documented packages' test files and every function of
// those files whole.
func exampleBodies(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range documented {
		files, err := filepath.Glob(filepath.Join("..", dir, "*_test.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, file := range files {
			src, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, file, src, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				fn, ok := d.(*ast.FuncDecl)
				if !ok || fn.Body == nil {
					continue
				}
				// A whole function of an example file, signature included.
				from, to := fset.Position(fn.Type.Pos()).Offset, fset.Position(fn.Body.Rbrace).Offset+1
				out[normalize(string(src[from:to]))] = dir + "." + fn.Name.Name
				if fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Example") {
					// An Example's body alone.
					from, to = fset.Position(fn.Body.Lbrace).Offset+1, fset.Position(fn.Body.Rbrace).Offset
					out[normalize(string(src[from:to]))] = dir + "." + fn.Name.Name
				}
			}
		}
	}
	return out
}

var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

func markdownGoBlocks(md string) []string {
	var out []string
	for _, m := range goBlock.FindAllStringSubmatch(md, -1) {
		out = append(out, normalize(m[1]))
	}
	return out
}

// docCodeBlocks returns the code blocks of a package doc comment: runs of
// comment lines indented by a tab.
func docCodeBlocks(src string) []string {
	var out []string
	var cur []string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, normalize(strings.Join(cur, "\n")))
			cur = nil
		}
	}
	for _, line := range strings.Split(src, "\n") {
		if strings.HasPrefix(line, "//\t") {
			cur = append(cur, strings.TrimPrefix(line, "//"))
			continue
		}
		if line == "//" && len(cur) > 0 {
			cur = append(cur, "")
			continue
		}
		flush()
	}
	flush()
	return out
}

// isGo reports whether a doc comment's code block is Go: declarations, or
// statements as in a function body.
func isGo(block string) bool {
	fset := token.NewFileSet()
	if _, err := parser.ParseFile(fset, "", "package p\n"+block, 0); err == nil {
		return true
	}
	_, err := parser.ParseFile(fset, "", "package p\nfunc _() {\n"+block+"\n}", 0)
	return err == nil
}

// normalize removes the common leading tabs and the blank lines around a
// block, and trailing spaces, so an Example body and a README block of the
// same code compare equal.
func normalize(s string) string {
	lines := strings.Split(s, "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[0]) == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, "\t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	for i, l := range lines {
		l = strings.TrimRight(l, " \t")
		if len(l) >= indent && indent > 0 {
			l = l[indent:]
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n")
}

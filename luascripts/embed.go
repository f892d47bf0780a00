package luascripts

import (
	"embed"
	"sort"
)

//go:embed *.lua
var sources embed.FS

// registry holds every script declared in this package, by file name.
var registry = map[string]*Script{}

// load reads an embedded file and registers it. It panics at init time if
// the file is missing, which a build with a typo in a file name would hit at
// once in every test.
func load(file string) *Script {
	src, err := sources.ReadFile(file)
	if err != nil {
		panic("luascripts: " + err.Error())
	}
	s := New(file, string(src))
	registry[file] = s
	return s
}

// loadReadOnly is load for scripts that never write.
func loadReadOnly(file string) *Script {
	s := load(file)
	s.readOnly = true
	return s
}

// All returns every embedded script, sorted by name, so a test can load each
// one into a real server and catch a syntax error before any caller does.
func All() []*Script {
	out := make([]*Script, 0, len(registry))
	for _, s := range registry {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

//go:build ignore

// Command localproxy writes the modules of this workspace, as they are in
// the working tree, into a directory laid out as a Go module proxy
// (GOPROXY=file://DIR). It lets `go mod tidy` run outside the workspace and
// lets a scratch consumer `go get` a module exactly as a user would after a
// release, without publishing anything.
//
//	go run scripts/localproxy.go -out DIR [-version v0.1.0]
package main

import (
	"archive/zip"
	"bufio"
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	out := flag.String("out", "", "directory to write the proxy into")
	version := flag.String("version", "v0.1.0", "version to publish every module at")
	flag.Parse()
	if *out == "" {
		log.Fatal("localproxy: -out is required")
	}
	list, err := exec.Command("go", "list", "-m", "-f", "{{.Path}} {{.Dir}}").Output()
	if err != nil {
		log.Fatalf("localproxy: go list -m: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(list)))
	for sc.Scan() {
		path, dir, _ := strings.Cut(sc.Text(), " ")
		if err := publish(*out, path, dir, *version); err != nil {
			log.Fatalf("localproxy: %s: %v", path, err)
		}
	}
}

func publish(out, path, dir, version string) error {
	vdir := filepath.Join(out, escape(path), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, "list"), []byte(version+"\n"), 0o644); err != nil {
		return err
	}
	info := fmt.Sprintf(`{"Version":%q,"Time":%q}`, version, time.Now().UTC().Format(time.RFC3339))
	if err := os.WriteFile(filepath.Join(vdir, version+".info"), []byte(info), 0o644); err != nil {
		return err
	}
	mod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, version+".mod"), mod, 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(vdir, version+".zip"))
	if err != nil {
		return err
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			// Hidden directories, and nested modules, which are modules of their own.
			if strings.HasPrefix(d.Name(), ".") || exists(filepath.Join(p, "go.mod")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		w, err := zw.Create(path + "@" + version + "/" + filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		_, err = w.Write(b)
		return err
	})
	if err != nil {
		return err
	}
	return zw.Close()
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// escape applies the module proxy's case encoding: an upper-case letter
// becomes '!' and its lower-case form.
func escape(path string) string {
	var b strings.Builder
	for _, r := range path {
		if r >= 'A' && r <= 'Z' {
			b.WriteByte('!')
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

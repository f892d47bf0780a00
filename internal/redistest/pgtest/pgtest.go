// Package pgtest starts a real PostgreSQL server for tests and gives each
// test a database of its own. It never mocks.
//
// The server is chosen in this order: PGFENCE_DSN, if set (a role that can
// create databases); else initdb and postgres from PATH or
// /usr/lib/postgresql/*/bin, run on a temporary directory and a free loopback
// port (as the postgres or nobody user when the tests run as root, since
// PostgreSQL refuses to run as root); else Docker through testcontainers-go;
// else the test fails with what to install.
//
// One server serves all tests of a package; it is stopped by
// redistest.VerifyMain after the tests, and dies with the test binary in any
// case (parent-death signal).
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/redis-primitives/go/internal/redistest"
)

// MissingPostgres is the message a test fails with when no server can be had.
const MissingPostgres = "pgtest: no PostgreSQL to test against. Install one " +
	"(Debian/Ubuntu: apt-get install postgresql; macOS: brew install postgresql), " +
	"or set PGFENCE_DSN to a server where the role may create databases, or start Docker"

var (
	mu     sync.Mutex
	shared *server
)

type server struct {
	admin string // connection string of the maintenance database
	proc  *redistest.Process
	dir   string
}

// NewDatabase creates an empty database for t and returns its connection
// string. The database is dropped when t ends.
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin := adminDSN(t)
	name := fmt.Sprintf("t_%d_%d", os.Getpid(), nextID())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := exec1(ctx, admin, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("pgtest: create database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec1(ctx, admin, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("pgtest: drop database %s: %v", name, err)
		}
	})
	return withDatabase(admin, name)
}

var (
	idMu sync.Mutex
	id   int
)

func nextID() int {
	idMu.Lock()
	defer idMu.Unlock()
	id++
	return id
}

func adminDSN(t testing.TB) string {
	t.Helper()
	if dsn := os.Getenv("PGFENCE_DSN"); dsn != "" {
		return dsn
	}
	mu.Lock()
	defer mu.Unlock()
	if shared != nil {
		return shared.admin
	}
	initdb, postgres, ok := binaries()
	if !ok {
		// A container per test: slow, and used only where nothing else is.
		return redistest.StartContainer(t, "postgres", MissingPostgres)
	}
	s, err := start(initdb, postgres)
	if err != nil {
		t.Fatalf("pgtest: start PostgreSQL: %v", err)
	}
	shared = s
	redistest.AtExit(stop)
	return s.admin
}

// Launch starts a PostgreSQL server for a program that is not a test (the
// examples and the demo) and returns the connection string of its
// "postgres" database as the superuser postgres. The caller must call stop;
// the server dies with the caller in any case.
func Launch() (dsn string, stop func() error, err error) {
	initdb, postgres, ok := binaries()
	if !ok {
		return "", nil, errors.New(MissingPostgres)
	}
	s, err := start(initdb, postgres)
	if err != nil {
		return "", nil, err
	}
	return s.admin, func() error {
		err := s.proc.Stop(syscall.SIGINT, 10*time.Second)
		if rerr := os.RemoveAll(s.dir); err == nil {
			err = rerr
		}
		return err
	}, nil
}

func stop() {
	mu.Lock()
	defer mu.Unlock()
	if shared == nil {
		return
	}
	// SIGINT is PostgreSQL's fast shutdown: it ends sessions and exits.
	_ = shared.proc.Stop(syscall.SIGINT, 10*time.Second)
	_ = os.RemoveAll(shared.dir)
	shared = nil
}

// binaries finds initdb and postgres on PATH, or else in the newest
// /usr/lib/postgresql/N/bin, where Debian installs them off PATH.
func binaries() (initdb, postgres string, ok bool) {
	if i, err := exec.LookPath("initdb"); err == nil {
		if p, err := exec.LookPath("postgres"); err == nil {
			return i, p, true
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		i, p := filepath.Join(d, "initdb"), filepath.Join(d, "postgres")
		if isFile(i) && isFile(p) {
			return i, p, true
		}
	}
	return "", "", false
}

func version(binDir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return n
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}

// credential returns who the server runs as. PostgreSQL refuses to run as
// root, so a root test run hands the server to the postgres user (or nobody).
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, fmt.Errorf("running as root and no postgres or nobody user to run PostgreSQL as")
}

func start(initdb, postgres string) (*server, error) {
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	init := exec.Command(initdb, "-D", data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	init.Dir = dir
	init.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	if out, err := init.CombinedOutput(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v: %s", err, out)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := redistest.FreePort()
		if err != nil {
			return nil, err
		}
		s, err := launch(postgres, dir, data, port, cred)
		if err == nil {
			return s, nil
		}
		lastErr = err
	}
	_ = os.RemoveAll(dir)
	return nil, lastErr
}

func launch(postgres, dir, data string, port int, cred *syscall.Credential) (*server, error) {
	logf, err := os.Create(filepath.Join(dir, "postgres.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	if cred != nil {
		_ = logf.Chown(int(cred.Uid), int(cred.Gid))
	}
	p, err := redistest.StartProcess(postgres, []string{
		"-D", data, "-p", strconv.Itoa(port), "-k", dir,
		"-c", "listen_addresses=127.0.0.1",
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=300",
	}, &syscall.SysProcAttr{Credential: cred}, dir, logf)
	if err != nil {
		return nil, err
	}
	admin := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		err = exec1(ctx, admin, "SELECT 1")
		cancel()
		if err == nil {
			return &server{admin: admin, proc: p, dir: dir}, nil
		}
		select {
		case <-p.Exited():
			log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
			return nil, fmt.Errorf("postgres exited during start-up: %s", strings.TrimSpace(string(log)))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = p.Kill()
			return nil, fmt.Errorf("postgres did not accept connections within 30s: %w", err)
		}
	}
}

func exec1(ctx context.Context, dsn, sql string) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, sql)
	return err
}

// withDatabase returns dsn with its database replaced by name.
func withDatabase(dsn, name string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		u.Path = "/" + name
		return u.String()
	}
	return dsn + " dbname=" + name
}

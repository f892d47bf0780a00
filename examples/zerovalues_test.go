package examples_test

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/fence"
	"github.com/redis-primitives/go/fence/pgfence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
	"github.com/redis-primitives/go/ratelimit/ratelimittest"
	"github.com/redis-primitives/go/semaphore"
	"github.com/redis-primitives/go/semaphore/httpsem"
	"github.com/redis-primitives/go/telemetry"
	"github.com/redis-primitives/go/telemetry/pgfencetel"
)

// The published API, as zero values: a pointer to each exported struct
// type's zero value (its methods of both receivers), and each exported
// function. A type or function missing here fails
// TestEveryExportedTypeAndFunctionIsWalked, so a new one is walked too.
var (
	zeroValues = []any{
		&election.Config{}, &election.DemotedError{}, &election.Elector{}, &election.Event{}, &election.Fencer{},
		&election.LeaderInfo{}, &election.Term{},
		&fence.Event{}, &fence.Fencer{}, &fence.Report{}, &fence.StaleError{}, &fence.Store{},
		&pgfence.Event{}, &pgfence.StaleError{}, &pgfence.Store{}, &pgfence.Table{},
		&goredisadapter.Client{},
		&lock.Event{}, &lock.HeldError{}, &lock.Holder{}, &lock.Keeper{}, &lock.Lease{}, &lock.Locker{}, &lock.Report{},
		&ratelimit.Event{}, &ratelimit.Keeper{}, &ratelimit.Limit{}, &ratelimit.Limiter{}, &ratelimit.Report{}, &ratelimit.Reservation{},
		&ratelimit.Result{}, &ratelimit.Policy{},
		&httprate.ClientIPConfig{}, &httprate.Config{}, &httprate.Event{}, &httprate.Middleware{},
		&ratelimittest.Clock{}, &ratelimittest.Limiter{}, &ratelimittest.Reservation{},
		&semaphore.Event{}, &semaphore.FullError{}, &semaphore.Holder{}, &semaphore.Issuer{}, &semaphore.Keeper{},
		&semaphore.Permit{}, &semaphore.Report{},
		&httpsem.Config{}, &httpsem.Event{}, &httpsem.Middleware{},
		&telemetry.FenceWrite{}, &telemetry.Telemetry{},
	}
	zeroFuncs = []any{
		election.New, fence.New, pgfence.New, pgfence.IsSerializationFailure, goredisadapter.New, lock.New,
		ratelimit.New, httprate.New, httprate.ClientIP, httprate.Fields, ratelimittest.New, ratelimittest.NewClock,
		semaphore.New, httpsem.New, telemetry.New, pgfencetel.Hook,
		fence.WithBatching, fence.WithHook, fence.WithLogger, fence.WithScope,
		pgfence.WithHook, pgfence.WithLogger, pgfence.WithMarksTable, pgfence.WithRowsTable,
		lock.WithBatching, lock.WithCounterTokens, lock.WithHook, lock.WithLogger, lock.WithOwner, lock.WithPrefix,
		lock.WithRenewFraction, lock.WithReplicas, lock.WithSafetyMargin, lock.WithServerTimeForTests, lock.WithWaitBackoff,
		ratelimit.GCRA, ratelimit.SlidingCounter, ratelimit.SlidingLog, ratelimit.WithBatching, ratelimit.WithDenyCache,
		ratelimit.WithHook, ratelimit.WithLogger, ratelimit.WithServerTimeForTests, ratelimit.WithPrefix,
		ratelimittest.WithClock,
		semaphore.WithHook, semaphore.WithLogger, semaphore.WithOwner, semaphore.WithPrefix, semaphore.WithRenewFraction,
		semaphore.WithSafetyMargin, semaphore.WithWaitBackoff,
		telemetry.WithKeys, telemetry.WithLockNames, telemetry.WithMeterProvider, telemetry.WithSemaphoreNames,
		telemetry.WithTracerProvider,
	}
)

// Everything else in the published API returns a typed error for a zero
// or nil value: three panicked (a zero Reservation's Commit, a zero
// Telemetry's Lock option at the first Acquire, a nil hook added to a
// rueidis client). Every exported method of every exported type is called
// on the type's zero value with zero arguments (nil functions, nil
// pointers, empty strings, zero durations), and every exported function
// with zero arguments; none may panic. What each returns is not judged
// here: the packages' own tests hold their errors.
func TestNoExportedMethodOrFunctionPanicsOnZeroValues(t *testing.T) {
	calls := walk(func(name string, f reflect.Value) { callNoPanic(t, name, f, zeroArgs) })
	t.Logf("%d methods and functions called on zero values", calls)
}

// walk calls call with every exported method of every zero value and
// every function of the walk, and returns how many there were.
func walk(call func(name string, f reflect.Value)) int {
	n := 0
	for _, v := range zeroValues {
		rv := reflect.ValueOf(v)
		for i := range rv.NumMethod() {
			call(fmt.Sprintf("%v.%s", rv.Type().Elem(), rv.Type().Method(i).Name), rv.Method(i))
			n++
		}
	}
	for _, f := range zeroFuncs {
		rv := reflect.ValueOf(f)
		call(runtime.FuncForPC(rv.Pointer()).Name(), rv)
		n++
	}
	return n
}

// zeroArgs returns the zero value of each of ft's parameters but a
// variadic one, and ctx for a context.Context.
func zeroArgs(ft reflect.Type, ctx context.Context) []reflect.Value {
	var args []reflect.Value
	for i := range ft.NumIn() {
		in := ft.In(i)
		switch {
		case ft.IsVariadic() && i == ft.NumIn()-1:
		case in == reflect.TypeFor[context.Context]():
			args = append(args, reflect.ValueOf(ctx))
		default:
			args = append(args, reflect.Zero(in))
		}
	}
	return args
}

// callNoPanic calls f with the arguments args makes (a context that ends
// within a second for a context.Context), and everything it returns that
// is a func is called too, in the same way.
func callNoPanic(t *testing.T, name string, f reflect.Value, args func(reflect.Type, context.Context) []reflect.Value) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var out []reflect.Value
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s panicked: %v", name, r)
			}
		}()
		out = f.Call(args(f.Type(), ctx))
	}()
	for _, o := range out {
		if o.Kind() == reflect.Func && !o.IsNil() && callable(o.Type()) {
			callNoPanic(t, name+"'s result", o, args)
		}
	}
}

// The published packages, relative to the repository's root.
var published = []string{"election", "fence", "fence/pgfence", "goredisadapter", "lock", "ratelimit", "ratelimit/httprate",
	"ratelimit/ratelimittest", "semaphore", "semaphore/httpsem", "telemetry", "telemetry/pgfencetel", "rueidisadapter", "valkeyadapter"}

// The walk above covers every exported struct type with methods and every
// exported function of the published packages (rueidisadapter and
// valkeyadapter have their own, since this module does not link their
// clients): a new one not added there fails here.
func TestEveryExportedTypeAndFunctionIsWalked(t *testing.T) {
	have := map[string]bool{}
	for _, v := range zeroValues {
		typ := reflect.TypeOf(v).Elem()
		have[typ.PkgPath()+"."+typ.Name()] = true
	}
	for _, f := range zeroFuncs {
		have[runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()] = true
	}
	for _, dir := range published {
		if strings.HasSuffix(dir, "adapter") && dir != "goredisadapter" {
			continue
		}
		pkg := "github.com/redis-primitives/go/" + dir
		for _, name := range exportedTypesAndFuncs(t, filepath.Join("..", dir)) {
			if !have[pkg+"."+name] {
				t.Errorf("%s.%s is not walked: add it to zeroValues or zeroFuncs", pkg, name)
			}
		}
	}
}

// exportedTypesAndFuncs lists the exported struct types, slice types and
// package-level functions of the package in dir.
func exportedTypesAndFuncs(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.IsExported() {
					names = append(names, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					ts, ok := s.(*ast.TypeSpec)
					if !ok || !ts.Name.IsExported() || ts.Assign.IsValid() {
						continue
					}
					switch ts.Type.(type) {
					case *ast.StructType, *ast.ArrayType:
						names = append(names, ts.Name.Name)
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names
}

// callable reports whether a user could call a function of type ft: an
// option (func(*config) error) takes a type of its package's own, which
// only its constructor passes.
func callable(ft reflect.Type) bool {
	for i := range ft.NumIn() {
		in := ft.In(i)
		for in.Kind() == reflect.Pointer || in.Kind() == reflect.Slice {
			in = in.Elem()
		}
		if in.PkgPath() != "" && !token.IsExported(in.Name()) {
			return false
		}
	}
	return true
}

// Each option made from zero arguments (a nil hook, a nil logger, an
// empty prefix, zero durations) is refused by its constructor with an
// error, or accepted and then works: a nil function kept and called at the
// first event would be a panic in production.
func TestEveryOptionOfZeroArgumentsIsRefusedOrWorks(t *testing.T) {
	s := redistest.Start(t)
	client := goredisadapter.New(s.Client(t))
	ctx := context.Background()
	zero := func(f any) any {
		rv := reflect.ValueOf(f)
		return rv.Call(zeroArgs(rv.Type(), ctx))[0].Interface()
	}
	lockPair := func(l *lock.Locker) error {
		lease, err := l.Acquire(ctx, "zero", time.Second)
		if err != nil {
			return err
		}
		_, err = l.Release(ctx, lease)
		return err
	}
	try := func(name string, use func() error) {
		t.Helper()
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s: panicked: %v", name, r)
			}
		}()
		if err := use(); err != nil {
			t.Logf("%s: %v", name, err)
		}
	}
	for _, f := range []any{lock.WithBatching, lock.WithCounterTokens, lock.WithHook, lock.WithLogger, lock.WithOwner,
		lock.WithPrefix, lock.WithRenewFraction, lock.WithReplicas, lock.WithSafetyMargin, lock.WithServerTimeForTests, lock.WithWaitBackoff} {
		try(runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name(), func() error {
			l, err := lock.New(client, zero(f).(lock.Option), lock.WithPrefix(s.Prefix()+"lock:"))
			if err != nil {
				return err
			}
			return lockPair(l)
		})
	}
	for _, f := range []any{semaphore.WithHook, semaphore.WithLogger, semaphore.WithOwner, semaphore.WithPrefix,
		semaphore.WithRenewFraction, semaphore.WithSafetyMargin, semaphore.WithWaitBackoff} {
		try(runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name(), func() error {
			i, err := semaphore.New(client, zero(f).(semaphore.Option), semaphore.WithPrefix(s.Prefix()+"semaphore:"))
			if err != nil {
				return err
			}
			p, err := i.Acquire(ctx, "zero", 2, time.Second)
			if err != nil {
				return err
			}
			_, err = i.Release(ctx, p)
			return err
		})
	}
	for _, f := range []any{fence.WithBatching, fence.WithHook, fence.WithLogger, fence.WithScope} {
		try(runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name(), func() error {
			st, err := fence.New(client, zero(f).(fence.Option))
			if err != nil {
				return err
			}
			return st.Set(ctx, 1, st.Key(s.Prefix()+"zero"), "v")
		})
	}
	for _, f := range []any{ratelimit.WithBatching, ratelimit.WithDenyCache, ratelimit.WithHook, ratelimit.WithLogger,
		ratelimit.WithServerTimeForTests, ratelimit.WithPrefix} {
		try(runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name(), func() error {
			l, err := ratelimit.New(client, zero(f).(ratelimit.Option))
			if err != nil {
				return err
			}
			_, err = l.Allow(ctx, s.Prefix()+"zero", ratelimit.GCRA(10, time.Second, 10))
			return err
		})
	}
	for _, f := range []any{telemetry.WithKeys, telemetry.WithLockNames, telemetry.WithMeterProvider,
		telemetry.WithSemaphoreNames, telemetry.WithTracerProvider} {
		try(runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name(), func() error {
			tel, err := telemetry.New(zero(f).(telemetry.Option))
			if err != nil {
				return err
			}
			l, err := lock.New(client, lock.WithHook(tel.Lock), lock.WithPrefix(s.Prefix()+"tel:"))
			if err != nil {
				return err
			}
			return lockPair(l)
		})
	}
	for _, f := range []any{pgfence.WithHook, pgfence.WithLogger, pgfence.WithMarksTable, pgfence.WithRowsTable} {
		try(runtime.FuncForPC(reflect.ValueOf(f).Pointer()).Name(), func() error {
			_, err := pgfence.New(zero(f).(pgfence.Option))
			return err
		})
	}
	if _, err := ratelimittest.New(zero(ratelimittest.WithClock).(ratelimittest.Option)); err == nil {
		t.Error("ratelimittest.WithClock(nil) accepted")
	}
}

package examples_test

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
	"time"

	"github.com/redis-primitives/go/ratelimit"
)

// samples are arguments a caller would pass, by type: a zero receiver
// must refuse them with an error as it refuses zero arguments.
var samples = map[reflect.Type]reflect.Value{
	reflect.TypeFor[string]():         reflect.ValueOf("x"),
	reflect.TypeFor[int]():            reflect.ValueOf(1),
	reflect.TypeFor[int64]():          reflect.ValueOf(int64(1)),
	reflect.TypeFor[float64]():        reflect.ValueOf(1.0),
	reflect.TypeFor[time.Duration]():  reflect.ValueOf(time.Second),
	reflect.TypeFor[[]string]():       reflect.ValueOf([]string{"x"}),
	reflect.TypeFor[any]():            reflect.ValueOf(any("x")),
	reflect.TypeFor[ratelimit.Rule](): reflect.ValueOf(ratelimit.Rule(ratelimit.GCRA(1, time.Second, 1))),
	reflect.TypeFor[http.Handler]():   reflect.ValueOf(http.Handler(http.NotFoundHandler())),
	reflect.TypeFor[*http.Request]():  reflect.ValueOf(httptest.NewRequest(http.MethodGet, "/", nil)),
	// Only BeginTx makes a Tx that can run a statement; a zero one panics in
	// database/sql itself.
	reflect.TypeFor[*sql.Tx](): reflect.Zero(reflect.TypeFor[*sql.Tx]()),
}

// sampleArgs returns, for each parameter of ft but a variadic one, ctx for
// a context.Context, a sample of its type, a pointer to a zero struct, a
// func returning zero values, or else the zero value.
func sampleArgs(ft reflect.Type, ctx context.Context) []reflect.Value {
	var args []reflect.Value
	for i := range ft.NumIn() {
		in := ft.In(i)
		v, ok := samples[in]
		switch {
		case ft.IsVariadic() && i == ft.NumIn()-1:
			continue
		case in == reflect.TypeFor[context.Context]():
			v = reflect.ValueOf(ctx)
		case ok:
		case in.Kind() == reflect.Pointer && in.Elem().Kind() == reflect.Struct:
			v = reflect.New(in.Elem())
		case in.Kind() == reflect.Func:
			v = reflect.MakeFunc(in, func([]reflect.Value) []reflect.Value {
				out := make([]reflect.Value, in.NumOut())
				for j := range out {
					out[j] = reflect.Zero(in.Out(j))
				}
				return out
			})
		default:
			v = reflect.Zero(in)
		}
		args = append(args, v)
	}
	return args
}

// The zero-value walk again, with the arguments a caller would pass: a
// zero Locker asked to Acquire "x" for a second, a zero Store to Set a
// value, a zero Limiter to Allow under a GCRA rule. None may panic.
func TestNoExportedMethodPanicsOnAZeroReceiverWithPlausibleArguments(t *testing.T) {
	calls := walk(func(name string, f reflect.Value) { callNoPanic(t, name+" with plausible arguments", f, sampleArgs) })
	t.Logf("%d methods and functions called with plausible arguments", calls)
}

package telemetry_test

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/telemetry"
)

func TestMain(m *testing.M) { redistest.VerifyMain(m) }

// sdk is a Telemetry wired to the SDK's in-memory reader and exporter.
type sdk struct {
	*telemetry.Telemetry
	reader *sdkmetric.ManualReader
	spans  *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
}

func newOtel(t testing.TB, opts ...telemetry.Option) *sdk {
	t.Helper()
	o := &sdk{reader: sdkmetric.NewManualReader(), spans: tracetest.NewInMemoryExporter()}
	o.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(o.spans))
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(o.reader))
	t.Cleanup(func() {
		_ = mp.Shutdown(context.Background())
		_ = o.tp.Shutdown(context.Background())
	})
	tel, err := telemetry.New(append([]telemetry.Option{telemetry.WithMeterProvider(mp), telemetry.WithTracerProvider(o.tp)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	o.Telemetry = tel
	return o
}

// point is one data point: a counter's value or a histogram's count.
type point struct {
	attrs attribute.Set
	value int64
	sum   float64
}

// points returns the data points of the instrument called name.
func (o *sdk) points(t testing.TB, name string) []point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := o.reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	var out []point
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					out = append(out, point{attrs: p.Attributes, value: p.Value})
				}
			case metricdata.Gauge[int64]:
				for _, p := range d.DataPoints {
					out = append(out, point{attrs: p.Attributes, value: p.Value})
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					out = append(out, point{attrs: p.Attributes, value: int64(p.Count), sum: p.Sum})
				}
			default:
				t.Fatalf("%s: unexpected data %T", name, m.Data)
			}
		}
	}
	return out
}

// value returns the value (or count) of name's point whose attributes are
// exactly kv; 0 when there is none.
func (o *sdk) value(t testing.TB, name string, kv ...attribute.KeyValue) int64 {
	t.Helper()
	want := attribute.NewSet(kv...)
	for _, p := range o.points(t, name) {
		if p.attrs.Equals(&want) {
			return p.value
		}
	}
	return 0
}

// spanNamed returns the ended spans called name.
func (o *sdk) spanNamed(name string) []tracetest.SpanStub {
	var out []tracetest.SpanStub
	for _, s := range o.spans.GetSpans() {
		if s.Name == name {
			out = append(out, s)
		}
	}
	return out
}

func attr(s tracetest.SpanStub, k attribute.Key) (attribute.Value, bool) {
	for _, kv := range s.Attributes {
		if kv.Key == k {
			return kv.Value, true
		}
	}
	return attribute.Value{}, false
}

// Package promtel serves the examples' telemetry (package telemetry, on
// OpenTelemetry's SDK) as Prometheus text at /metrics, through
// OpenTelemetry's Prometheus exporter. The exporter is a dependency of the
// examples only: the telemetry module speaks the OpenTelemetry API and
// leaves the choice of exporter to the program.
package promtel

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/attribute"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	"github.com/redis-primitives/go/telemetry"
)

// Metrics is one Prometheus registry that the Telemetry it makes report to.
type Metrics struct {
	reg *prometheus.Registry

	mu        sync.Mutex
	providers []*sdkmetric.MeterProvider
}

// New returns an empty registry.
func New() *Metrics { return &Metrics{reg: prometheus.NewRegistry()} }

// Telemetry returns a Telemetry whose metrics /metrics serves. A program
// makes one; instance, when not empty, is the service.instance.id of a
// node simulated in this process (the scheduler runs three), added as the
// label service_instance_id to each of its series so that the nodes'
// series stay apart, as those of separate processes would.
func (m *Metrics) Telemetry(service, instance string, opts ...telemetry.Option) (*telemetry.Telemetry, error) {
	attrs := []attribute.KeyValue{semconv.ServiceName(service)}
	expOpts := []otelprom.Option{otelprom.WithRegisterer(m.reg), otelprom.WithoutTargetInfo()}
	if instance != "" {
		attrs = append(attrs, semconv.ServiceInstanceID(instance))
		expOpts = append(expOpts, otelprom.WithResourceAsConstantLabels(attribute.NewAllowKeysFilter(semconv.ServiceInstanceIDKey)))
	}
	exp, err := otelprom.New(expOpts...)
	if err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(resource.NewSchemaless(attrs...)))
	m.mu.Lock()
	m.providers = append(m.providers, mp)
	m.mu.Unlock()
	return telemetry.New(append([]telemetry.Option{telemetry.WithMeterProvider(mp)}, opts...)...)
}

// Handler serves the registry in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// Shutdown stops every MeterProvider made by Telemetry.
func (m *Metrics) Shutdown(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	var errs []error
	for _, mp := range m.providers {
		errs = append(errs, mp.Shutdown(ctx))
	}
	m.providers = nil
	return errors.Join(errs...)
}

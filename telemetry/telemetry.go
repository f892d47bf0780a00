package telemetry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every meter and tracer this
// package makes.
const ScopeName = "github.com/redis-primitives/go/telemetry"

// ErrInvalidOption is returned by New for a nil option or a bad value.
var ErrInvalidOption = errors.New("telemetry: invalid option")

// Option changes what New builds.
type Option func(*config) error

type config struct {
	mp             metric.MeterProvider
	tp             trace.TracerProvider
	lockNames      bool
	semaphoreNames bool
	keys           bool
}

// WithMeterProvider sets where the metrics go (default: otel's global
// MeterProvider, as set by otel.SetMeterProvider before New).
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(c *config) error {
		if mp == nil {
			return fmt.Errorf("%w: nil MeterProvider", ErrInvalidOption)
		}
		c.mp = mp
		return nil
	}
}

// WithTracerProvider sets where the spans go (default: otel's global
// TracerProvider, as set by otel.SetTracerProvider before New).
func WithTracerProvider(tp trace.TracerProvider) Option {
	return func(c *config) error {
		if tp == nil {
			return fmt.Errorf("%w: nil TracerProvider", ErrInvalidOption)
		}
		c.tp = tp
		return nil
	}
}

// WithLockNames adds the lock's name (attribute lock.name) to lock metrics
// and spans. Off by default: one time series per name is fine for a few
// fixed names, not for a name per user or per job.
func WithLockNames() Option {
	return func(c *config) error { c.lockNames = true; return nil }
}

// WithSemaphoreNames adds the semaphore's name (attribute semaphore.name)
// to semaphore metrics and spans, and to httpsem metrics (there the
// request's key). Off by default, for the reason of WithLockNames, and more
// so behind httpsem when its key is one per client.
func WithSemaphoreNames() Option {
	return func(c *config) error { c.semaphoreNames = true; return nil }
}

// WithKeys adds the caller's keys to metrics and spans: ratelimit.key, and
// fence.key (a fence key, or a pgfence row id). Off by default, for the
// same reason as WithLockNames, and more so: rate-limit keys are usually
// one per user or per client address.
func WithKeys() Option {
	return func(c *config) error { c.keys = true; return nil }
}

// Telemetry turns the hooks of lock, ratelimit and its middleware httprate,
// semaphore and its middleware httpsem, fence, pgfence (through package
// pgfencetel) and election into OpenTelemetry metrics and spans.
// Make one per process and share it; it is safe for concurrent use.
//
// The zero Telemetry works: at its first use it records to the global
// providers (otel.GetMeterProvider, otel.GetTracerProvider), as New() with
// no options does, and passes an instrument the global meter refuses to
// otel.Handle. Use New to choose the providers and options.
type Telemetry struct {
	once   sync.Once // the instruments are made once, by New or at first use
	cfg    config
	tracer trace.Tracer

	lock leases

	rlDecisions        metric.Int64Counter
	rlDuration, rlWait metric.Float64Histogram
	rlCache            cache[rateLimitKind]

	semaphore leases

	httpRateRequests metric.Int64Counter
	httpRateDuration metric.Float64Histogram
	httpRateCache    cache[httpRateKind]

	httpSemRequests metric.Int64Counter
	httpSemDuration metric.Float64Histogram
	httpSemCache    cache[string]

	fenceWrites   metric.Int64Counter
	fenceDuration metric.Float64Histogram
	fenceCache    cache[fenceKind]

	electionTransitions metric.Int64Counter
	electionTerm        metric.Float64Histogram
	electionLeader      metric.Int64UpDownCounter
	electionEpoch       metric.Int64Gauge

	electionAttempts, electionRenewals               metric.Int64Counter
	electionAttemptDuration, electionRenewalDuration metric.Float64Histogram
}

// New makes the instruments. It fails with ErrInvalidOption for a nil or
// bad option, and with the meter's error if an instrument cannot be made.
func New(opts ...Option) (*Telemetry, error) {
	var cfg config
	for i, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("%w: option %d is nil", ErrInvalidOption, i)
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	t := new(Telemetry)
	var err error
	t.once.Do(func() { err = t.setup(cfg) })
	if err != nil {
		return nil, err
	}
	return t, nil
}

// ready makes the instruments of a zero Telemetry, at its first use.
func (t *Telemetry) ready() *Telemetry {
	t.once.Do(func() {
		if err := t.setup(config{}); err != nil {
			otel.Handle(err)
		}
	})
	return t
}

// setup makes the instruments with cfg's providers, the global ones for
// those not set.
func (t *Telemetry) setup(cfg config) error {
	if cfg.mp == nil {
		cfg.mp = otel.GetMeterProvider()
	}
	if cfg.tp == nil {
		cfg.tp = otel.GetTracerProvider()
	}
	m := cfg.mp.Meter(ScopeName)
	t.lock.prefix, t.semaphore.prefix = "lock", "semaphore"
	t.cfg, t.tracer = cfg, cfg.tp.Tracer(ScopeName)
	var errs []error
	hist := func(name, desc string) metric.Float64Histogram {
		h, err := m.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(secondsBuckets...))
		errs = append(errs, err)
		return h
	}
	count := func(name, unit, desc string) metric.Int64Counter {
		c, err := m.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		errs = append(errs, err)
		return c
	}
	t.lock.duration = hist("lock.operation.duration", "Duration of lock operations (acquire, extend, release, force_release), by outcome.")
	t.lock.wait = hist("lock.wait.duration", "Time AcquireWait took, waiting included, by outcome.")
	t.lock.hold = hist("lock.hold.duration", "How long a lease was held, from its acquire to its release, by release outcome.")
	t.lock.lost = count("lock.lost", "{lease}", "Leases given up while held, by cause (not_held: found gone; deadline: no renewal in time).")
	t.rlDecisions = count("ratelimit.decisions", "{decision}", "Rate-limit decisions, by operation, outcome (allowed, rejected, expired, settled, error) and binding limit.")
	t.rlDuration = hist("ratelimit.decision.duration", "Duration of rate-limit decisions, by outcome and binding limit.")
	t.rlWait = hist("ratelimit.wait.duration", "Time Wait and WaitN took, waiting included, by outcome and binding limit.")
	t.semaphore.duration = hist("semaphore.operation.duration", "Duration of semaphore operations (acquire, extend, release), by outcome.")
	t.semaphore.wait = hist("semaphore.wait.duration", "Time AcquireWait took, waiting included, by outcome.")
	t.semaphore.hold = hist("semaphore.hold.duration", "How long a permit was held, from its grant to its release, by release outcome.")
	t.semaphore.lost = count("semaphore.lost", "{permit}", "Permits given up while held, by cause (not_held: found gone; deadline: no renewal in time).")
	t.httpRateRequests = count("httprate.requests", "{request}", "Requests the rate-limit middleware decided on, by outcome (allowed, rejected, failed_open, failed_closed, error) and binding limit.")
	t.httpRateDuration = hist("httprate.decision.duration", "Duration of the rate-limit middleware's limiter calls, by outcome and binding limit.")
	t.httpSemRequests = count("httpsem.requests", "{request}", "Requests the concurrency-limit middleware decided on, by outcome (admitted, full, failed_open, failed_closed, error).")
	t.httpSemDuration = hist("httpsem.acquire.duration", "Duration of the concurrency-limit middleware's acquires, by outcome.")
	t.fenceWrites = count("fence.writes", "{write}", "Fenced writes, by outcome (accepted; stale: refused for a token below the highest; error: no verdict).")
	t.fenceDuration = hist("fence.write.duration", "Duration of fenced writes, by outcome.")
	t.electionTransitions = count("election.transitions", "{transition}", "Role transitions of this node (elected, demoted, follower) and the leader changes it saw (leader_changed), by election.")
	t.electionTerm = hist("election.term.duration", "Length of this node's terms as leader, by demotion reason.")
	t.electionAttempts = count("election.attempts", "{attempt}", "Attempts to take an election's lease, by outcome (elected, held, error).")
	t.electionAttemptDuration = hist("election.attempt.duration", "Duration of attempts to take an election's lease, by outcome.")
	t.electionRenewals = count("election.renewals", "{renewal}", "Renewals of the leader's lease, by outcome (ok, lost, error).")
	t.electionRenewalDuration = hist("election.renewal.duration", "Duration of renewals of the leader's lease, by outcome.")
	var err error
	t.electionEpoch, err = m.Int64Gauge("election.epoch", metric.WithUnit("{epoch}"),
		metric.WithDescription("The epoch of the latest term this node saw, its own or another node's."))
	errs = append(errs, err)
	t.electionLeader, err = m.Int64UpDownCounter("election.leader", metric.WithUnit("{leader}"),
		metric.WithDescription("1 while this node leads the election, else 0."))
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("telemetry: instruments: %w", err)
	}
	return nil
}

// secondsBuckets suit calls of tens of microseconds (a lock round trip)
// up to waits and terms of minutes.
var secondsBuckets = []float64{
	0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
	0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600,
}

// clientKind is every span's kind, made once.
var clientKind = trace.WithSpanKind(trace.SpanKindClient)

// span records a call that has already happened: it started latency ago
// and ended now. Its parent is ctx's span.
func (t *Telemetry) span(ctx context.Context, name string, latency time.Duration, err error, attrs []attribute.KeyValue) {
	now := time.Now()
	_, s := t.tracer.Start(ctx, name, trace.WithTimestamp(now.Add(-latency)), clientKind, trace.WithAttributes(attrs...))
	if err != nil {
		s.RecordError(err, trace.WithTimestamp(now))
		s.SetStatus(codes.Error, err.Error())
	}
	s.End(trace.WithTimestamp(now))
}

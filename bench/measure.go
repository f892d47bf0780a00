package bench

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// An op is one operation of a case, run by goroutine g for the i-th time.
// It reports whether the operation got what it asked for (the lock was
// acquired, the request admitted); an error stops the measurement.
type op func(ctx context.Context, g, i int) (bool, error)

// sample is one run of one contender.
type sample struct {
	Ops     int64 // operations completed
	OK      int64 // of which got what they asked for
	Elapsed time.Duration
	p50     time.Duration
	p99     time.Duration
	Mallocs uint64 // heap objects allocated during the run, by the whole process
	Bytes   uint64
	noAlloc bool // allocations not measured (the limit runs in another process)
	// The server's side, from INFO before and after the run: the time its
	// commands took (commandstats, summed over commands) and the CPU time
	// its process used (used_cpu_user + used_cpu_sys, which also counts
	// reading and writing the sockets).
	SrvCmd time.Duration
	SrvCPU time.Duration
	// CliCPU is the CPU time (user + system) the client used: this whole
	// process, or redis-benchmark's for the limit.
	CliCPU time.Duration
}

func (s sample) rate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.Ops) / s.Elapsed.Seconds()
}

func (s sample) okRate() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.OK) / s.Elapsed.Seconds()
}

// srvPerOp returns d per operation in microseconds.
func (s sample) srvPerOp(d time.Duration) float64 {
	if s.Ops == 0 {
		return 0
	}
	return us(d) / float64(s.Ops)
}

func (s sample) perOp(v uint64) float64 {
	if s.noAlloc || s.Ops == 0 {
		return -1
	}
	return float64(v) / float64(s.Ops)
}

// measure runs fn on goroutines goroutines for about d and returns what
// they did. Every goroutine is started and waiting before the clock and
// the allocation counters are read, so neither counts their start-up.
func measure(ctx context.Context, goroutines int, d time.Duration, fn op) (sample, error) {
	hists := make([]histogram, goroutines)
	ops := make([]int64, goroutines)
	oks := make([]int64, goroutines)
	var (
		stop    atomic.Bool
		errOnce sync.Once
		firstE  error
		wg      sync.WaitGroup
		ready   sync.WaitGroup
		start   = make(chan struct{})
	)
	wg.Add(goroutines)
	ready.Add(goroutines)
	for g := range goroutines {
		go func() {
			defer wg.Done()
			h := &hists[g]
			var n, ok int64
			ready.Done()
			<-start
			for i := 0; !stop.Load(); i++ {
				t0 := time.Now()
				got, err := fn(ctx, g, i)
				h.record(time.Since(t0))
				if err != nil {
					errOnce.Do(func() { firstE = err })
					stop.Store(true)
					break
				}
				n++
				if got {
					ok++
				}
			}
			ops[g], oks[g] = n, ok
		}()
	}
	ready.Wait()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0 := processCPU()
	t0 := time.Now()
	close(start)
	timer := time.NewTimer(d)
	select {
	case <-timer.C:
	case <-ctx.Done():
	}
	timer.Stop()
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(t0)
	cpu := processCPU() - cpu0
	runtime.ReadMemStats(&after)

	if firstE != nil {
		return sample{}, firstE
	}
	if err := ctx.Err(); err != nil {
		return sample{}, err
	}
	var all histogram
	s := sample{Elapsed: elapsed, Mallocs: after.Mallocs - before.Mallocs, Bytes: after.TotalAlloc - before.TotalAlloc, CliCPU: cpu}
	for g := range goroutines {
		all.merge(&hists[g])
		s.Ops += ops[g]
		s.OK += oks[g]
	}
	s.p50, s.p99 = all.quantile(0.50), all.quantile(0.99)
	return s, nil
}

// processCPU is the CPU time this process has used so far, user and
// system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

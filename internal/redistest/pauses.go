package redistest

import (
	"bufio"
	"net"
	"sync"
	"time"
)

// Pauses watches how late this process runs its timers: a goroutine
// sleeps a millisecond at a time and keeps the longest it overslept. It
// can watch servers too: a PING every millisecond on a connection of its
// own to each, a reply later than a millisecond counting as the server (or
// this process) held back by the excess. A timing test that misses its
// bound reads it to tell a machine too busy to run anything on time (then
// it tries again) from a late primitive (then it fails). Make it with
// WatchPauses; Stop it before the test returns.
type Pauses struct {
	stop     chan struct{}
	wg       sync.WaitGroup
	mu       sync.Mutex
	longest  time.Duration
	conns    []net.Conn // closed by Stop, so that no read outlives it
	stopped  bool
	stopOnce sync.Once
}

// WatchPauses starts watching this process and servers.
func WatchPauses(servers ...*Server) *Pauses {
	p := &Pauses{stop: make(chan struct{})}
	p.wg.Add(1 + len(servers))
	go func() {
		defer p.wg.Done()
		p.every(func() time.Duration { return 0 })
	}()
	for _, s := range servers {
		go func() {
			defer p.wg.Done()
			p.watchServer(s.Addr())
		}()
	}
	return p
}

// every runs probe every millisecond until Stop (or until probe fails,
// returning a negative duration) and keeps the longest the timer overslept
// or probe took over a millisecond.
func (p *Pauses) every(probe func() time.Duration) {
	t := time.NewTimer(time.Millisecond)
	defer t.Stop()
	for {
		start := time.Now()
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		late := time.Since(start) - time.Millisecond
		took := probe()
		if took < 0 {
			return
		}
		if held := max(late, took-time.Millisecond); held > 0 {
			p.mu.Lock()
			p.longest = max(p.longest, held)
			p.mu.Unlock()
		}
		t.Reset(time.Millisecond)
	}
}

// watchServer PINGs addr every millisecond until Stop; a server it cannot
// reach, or that stops answering, is no longer measured.
func (p *Pauses) watchServer(addr string) {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return
	}
	p.mu.Lock()
	if p.stopped {
		p.mu.Unlock()
		_ = conn.Close()
		return
	}
	p.conns = append(p.conns, conn)
	p.mu.Unlock()
	r := bufio.NewReader(conn)
	p.every(func() time.Duration {
		start := time.Now()
		if _, err := conn.Write([]byte("PING\r\n")); err != nil {
			return -1
		}
		if _, err := r.ReadString('\n'); err != nil {
			return -1
		}
		return time.Since(start)
	})
}

// Longest returns the longest a timer has fired late, or a server was late
// to answer, so far.
func (p *Pauses) Longest() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.longest
}

// Stop ends the watch and returns the longest a timer fired late or a
// server was late to answer.
func (p *Pauses) Stop() time.Duration {
	p.stopOnce.Do(func() {
		close(p.stop)
		p.mu.Lock()
		p.stopped = true
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
	})
	p.wg.Wait()
	return p.Longest()
}

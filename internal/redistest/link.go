package redistest

import (
	"net"
	"sync"
	"testing"
)

// Relay is a TCP relay to a server that can be stalled: a stalled relay
// keeps reading and forwards nothing, in either direction, until Resume.
//
// It shows two faults no signal to a process can:
//   - one client cut off while its own process runs and every other client,
//     connected directly, is unaffected (a leader that stops renewing
//     without releasing);
//   - the asynchronous-replication gap: between a replica and its primary
//     (StartReplica, Partition), a write the primary acknowledged never
//     reaches the replica. Freezing the replica cannot show that, because
//     the kernel keeps receiving into a frozen process's socket buffer.
//
// Its methods are safe for concurrent use.
type Relay struct {
	ln     net.Listener
	target string
	// serve, when set, relays each connection instead of two plain pipes
	// (Redis62); the Relay closes both connections and waits for it.
	serve func(in, out net.Conn)

	mu      sync.Mutex
	stalled bool
	held    map[net.Conn]bool // the connections StallOpen stalled
	closed  bool              // set by Close: accept drops a connection it dialed after
	cond    *sync.Cond
	conns   []net.Conn
	wg      sync.WaitGroup
}

// StartRelay starts a relay to target (host:port) on a free loopback port.
// It is closed when t ends.
func StartRelay(t testing.TB, target string) *Relay {
	t.Helper()
	r, err := newRelay(target)
	if err != nil {
		t.Fatalf("redistest: relay to %s: %v", target, err)
	}
	t.Cleanup(r.Close)
	return r
}

func newRelay(target string) (*Relay, error) { return newServingRelay(target, nil) }

func newServingRelay(target string, serve func(in, out net.Conn)) (*Relay, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r := &Relay{ln: ln, target: target, serve: serve}
	r.cond = sync.NewCond(&r.mu)
	r.wg.Add(1)
	go r.accept()
	return r, nil
}

// Addr returns the address clients dial instead of the target's.
func (r *Relay) Addr() string { return r.ln.Addr().String() }

func (r *Relay) port() int { return r.ln.Addr().(*net.TCPAddr).Port }

func (r *Relay) accept() {
	defer r.wg.Done()
	for {
		in, err := r.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", r.target)
		if err != nil {
			in.Close()
			continue
		}
		r.mu.Lock()
		if r.closed {
			// Accepted before Close stopped the listener, dialed after it
			// dropped every connection: nothing would ever close these.
			r.mu.Unlock()
			in.Close()
			out.Close()
			return
		}
		r.conns = append(r.conns, in, out)
		if r.serve != nil {
			r.wg.Add(1)
			r.mu.Unlock()
			go func() {
				defer r.wg.Done()
				r.serve(in, out)
			}()
			continue
		}
		r.wg.Add(2)
		r.mu.Unlock()
		go r.pipe(out, in)
		go r.pipe(in, out)
	}
}

func (r *Relay) pipe(dst, src net.Conn) {
	defer r.wg.Done()
	defer dst.Close()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			r.mu.Lock()
			for r.stalled || r.held[src] || r.held[dst] {
				r.cond.Wait()
			}
			r.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Stall stops forwarding, in both directions, until Resume or Close. What
// arrives meanwhile is held, not dropped.
func (r *Relay) Stall() { r.setStalled(true) }

// StallOpen stops forwarding on the connections open now, in both
// directions, until Resume or Close; connections made after it forward as
// before. It is a path that fails for the connections on it while a new
// connection gets through: what a client sent on an old connection (held,
// as TCP retransmits it) reaches the server after what it sends on a new
// one.
func (r *Relay) StallOpen() {
	r.mu.Lock()
	r.held = make(map[net.Conn]bool, len(r.conns))
	for _, c := range r.conns {
		r.held[c] = true
	}
	r.mu.Unlock()
}

// Resume forwards again, what was held first.
func (r *Relay) Resume() { r.setStalled(false) }

func (r *Relay) setStalled(stalled bool) {
	r.mu.Lock()
	r.stalled = stalled
	if !stalled {
		r.held = nil
	}
	r.cond.Broadcast()
	r.mu.Unlock()
}

// Close stops accepting, drops every connection and waits for the relay's
// goroutines. It may be called more than once.
func (r *Relay) Close() {
	r.ln.Close()
	r.mu.Lock()
	r.closed = true
	r.stalled = false
	r.held = nil
	r.cond.Broadcast()
	for _, c := range r.conns {
		c.Close()
	}
	r.conns = nil
	r.mu.Unlock()
	r.wg.Wait()
}

package redistest

import (
	"net"
	"sync"
)

// link is a TCP relay between a replica and its primary. Cutting it holds
// every byte in flight, so a write the primary acknowledged never reaches
// the replica: the asynchronous-replication gap a failover loses data in.
// Freezing the replica cannot show that gap, because the kernel keeps
// receiving into the frozen process's socket buffer.
type link struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	cond  *sync.Cond
	conns []net.Conn
	wg    sync.WaitGroup
}

func newLink(target string) (*link, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	l := &link{ln: ln, target: target}
	l.cond = sync.NewCond(&l.mu)
	l.wg.Add(1)
	go l.accept()
	return l, nil
}

func (l *link) port() int { return l.ln.Addr().(*net.TCPAddr).Port }

func (l *link) accept() {
	defer l.wg.Done()
	for {
		in, err := l.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", l.target)
		if err != nil {
			in.Close()
			continue
		}
		l.mu.Lock()
		l.conns = append(l.conns, in, out)
		l.mu.Unlock()
		l.wg.Add(2)
		go l.pipe(out, in)
		go l.pipe(in, out)
	}
}

func (l *link) pipe(dst, src net.Conn) {
	defer l.wg.Done()
	defer dst.Close()
	buf := make([]byte, 32*1024)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			l.mu.Lock()
			for l.cut {
				l.cond.Wait()
			}
			l.mu.Unlock()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (l *link) setCut(cut bool) {
	l.mu.Lock()
	l.cut = cut
	l.cond.Broadcast()
	l.mu.Unlock()
}

func (l *link) close() {
	l.ln.Close()
	l.mu.Lock()
	l.cut = false
	l.cond.Broadcast()
	for _, c := range l.conns {
		c.Close()
	}
	l.mu.Unlock()
	l.wg.Wait()
}

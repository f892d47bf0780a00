package clienttest_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// A confDropper makes a client's connections (target.dial) and drops one of
// them right after a write has run: the first connection that writes a
// command containing marker (a key of the test's own, which nothing but
// the call under test carries) forwards that command, reads the server's
// replies to everything it forwarded, the marked command's included, so
// the script has certainly run, discards them, closes, and answers the
// client's reads with io.EOF. What the client writes on it after the
// marked command is taken and never sent, as bytes lost with a
// connection. It does that once; every other connection, and every
// connection dialled after, passes everything through.
//
// Writes succeed until the client has read the io.EOF: to the client, the
// call was written and the connection then failed, the case the
// contract's "at most once" is about. Later writes fail as on a closed
// connection: rueidis's and valkey-go's writer goroutine ends only on a
// failed write, and outlived its client while writes kept succeeding.
type confDropper struct {
	marker  []byte
	fired   atomic.Bool   // a connection saw the marker
	dropped chan struct{} // closed once that connection has been dropped
	once    sync.Once
}

func newConfDropper(marker string) *confDropper {
	return &confDropper{marker: []byte(marker), dropped: make(chan struct{})}
}

// dial is a target's dial.
func (d *confDropper) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &confDropConn{Conn: c, d: d}, nil
}

// didDrop fails t unless a connection was dropped: a test whose call never
// met the fault proves nothing.
func (d *confDropper) didDrop(t testing.TB) {
	t.Helper()
	select {
	case <-d.dropped:
	default:
		t.Fatalf("no connection wrote %q and was dropped: the call under test never met the fault", d.marker)
	}
}

// A confDropConn is one connection of a confDropper. The client may read and
// write it from two goroutines at once (rueidis and valkey-go do); mu
// guards the state both look at.
type confDropConn struct {
	net.Conn
	d *confDropper

	mu      sync.Mutex
	out     []byte // the client's bytes of a command not yet whole, forwarded
	sent    int    // commands forwarded whole
	marked  bool   // the command being forwarded carries the marker
	cut     bool   // the marked command is forwarded; nothing more is
	target  int    // when cut: the commands whose replies are read and dropped
	in      []byte // the server's bytes of a reply not yet whole
	replies int    // replies read whole (pushes aside)
	eof     bool   // dropped: reads end with io.EOF
}

func (c *confDropConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.eof {
		c.mu.Unlock()
		return 0, net.ErrClosed // dropped: as a closed connection does
	}
	if c.cut {
		c.mu.Unlock()
		return len(p), nil // after the marked command: lost with the connection
	}
	buf := append(append([]byte(nil), c.out...), p...)
	markAt := -1
	if c.marked {
		markAt = 0 // the marked command is the one c.out begins
	} else if i := bytes.Index(buf, c.d.marker); i >= 0 && c.d.fired.CompareAndSwap(false, true) {
		c.marked, markAt = true, i
	}
	forward, off := len(p), 0
	for {
		n, ok := confRESPLen(buf[off:])
		if !ok {
			break
		}
		off += n
		c.sent++
		if c.marked && markAt < off {
			// The marked command ends here: forward it, and nothing after.
			c.cut, c.target = true, c.sent
			forward = off - len(c.out)
			break
		}
	}
	if c.cut {
		c.out = nil
	} else {
		c.out = buf[off:]
	}
	// The state is set before the bytes leave, so that the reader, which
	// looks at it after each read, drops every reply to the marked command.
	c.mu.Unlock()
	if _, err := c.Conn.Write(p[:forward]); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (c *confDropConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	eof := c.eof
	c.mu.Unlock()
	if eof {
		return 0, io.EOF
	}
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.countReplies(p[:n])
	if !c.cut {
		c.mu.Unlock()
		return n, err
	}
	// The marked command has been sent: read the server's replies up to its
	// own, so that it has certainly run, and give the client none of them.
	var buf [4096]byte
	for c.replies < c.target && err == nil {
		c.mu.Unlock()
		var m int
		m, err = c.Conn.Read(buf[:])
		c.mu.Lock()
		c.countReplies(buf[:m])
	}
	c.eof = true
	c.mu.Unlock()
	_ = c.Conn.Close()
	c.d.once.Do(func() { close(c.d.dropped) })
	return 0, io.EOF
}

// countReplies adds b, read from the server, to the replies read whole. The
// caller holds c.mu.
func (c *confDropConn) countReplies(b []byte) {
	c.in = append(c.in, b...)
	off := 0
	for {
		n, ok := confRESPLen(c.in[off:])
		if !ok {
			break
		}
		if c.in[off] != '>' { // a RESP3 push answers no command
			c.replies++
		}
		off += n
	}
	c.in = append(c.in[:0], c.in[off:]...)
}

func (c *confDropConn) Close() error {
	c.mu.Lock()
	c.eof = true
	c.mu.Unlock()
	return c.Conn.Close()
}

// confRESPLen returns the length of the RESP2 or RESP3 value b begins with,
// and false when b does not hold it whole yet.
func confRESPLen(b []byte) (int, bool) {
	i := bytes.Index(b, []byte("\r\n"))
	if i < 1 {
		return 0, false
	}
	n := i + 2
	size, _ := strconv.Atoi(string(b[1:i]))
	switch b[0] {
	case '$', '!', '=': // bulk string, bulk error, verbatim string
		if size < 0 {
			return n, true
		}
		if len(b) < n+size+2 {
			return 0, false
		}
		return n + size + 2, true
	case '*', '~', '>', '%', '|': // array, set, push, map, attribute
		if b[0] == '%' || b[0] == '|' {
			size *= 2
		}
		for range max(size, 0) {
			m, ok := confRESPLen(b[n:])
			if !ok {
				return 0, false
			}
			n += m
		}
		if b[0] == '|' { // an attribute precedes the value it describes
			m, ok := confRESPLen(b[n:])
			if !ok {
				return 0, false
			}
			n += m
		}
		return n, true
	}
	return n, true // a simple type, or an inline command: one line
}

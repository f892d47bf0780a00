package redistest

import (
	"fmt"
	"net"
)

// FreePort returns a loopback TCP port that was free a moment ago. Another
// process may take it before the caller binds it, so callers that start a
// server on it retry on failure.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redistest: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

package httprate

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// ErrNoClientIP is returned by a ClientIP key function when the request's
// RemoteAddr is not an IP address.
var ErrNoClientIP = errors.New("httprate: no client IP")

// ClientIP returns a key function that yields the client's IP address.
//
// It trusts X-Forwarded-For only from the given proxies (CIDRs such as
// "10.0.0.0/8" or single addresses): starting from the connection's peer, it
// walks the header from right to left past every trusted proxy and returns
// the first address that is not one. With no trusted proxies, or when the
// peer is not one, the header is ignored, since any client can send it. An
// entry that is not an IP address stops the walk at the last trusted hop.
func ClientIP(trustedProxies ...string) (func(*http.Request) (string, error), error) {
	var trusted []netip.Prefix
	for _, p := range trustedProxies {
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			addr, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return nil, fmt.Errorf("httprate: trusted proxy %q is neither a CIDR nor an IP address", p)
			}
			prefix = netip.PrefixFrom(addr, addr.BitLen())
		}
		trusted = append(trusted, prefix.Masked())
	}
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return func(r *http.Request) (string, error) {
		host, _, err := net.SplitHostPort(r.RemoteAddr)
		if err != nil {
			host = r.RemoteAddr
		}
		peer, err := netip.ParseAddr(host)
		if err != nil {
			return "", fmt.Errorf("%w: remote address %q", ErrNoClientIP, r.RemoteAddr)
		}
		client := peer.Unmap()
		if !isTrusted(client) {
			return client.String(), nil
		}
		var hops []string
		for _, h := range r.Header.Values("X-Forwarded-For") {
			hops = append(hops, strings.Split(h, ",")...)
		}
		for i := len(hops) - 1; i >= 0; i-- {
			hop, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
			if err != nil {
				break
			}
			client = hop.Unmap()
			if !isTrusted(client) {
				break
			}
		}
		return client.String(), nil
	}, nil
}

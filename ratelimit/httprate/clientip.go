package httprate

import (
	"cmp"
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

// ErrInvalidProxy is returned by ClientIP for a trusted proxy that is
// neither a CIDR nor an IP address.
var ErrInvalidProxy = errors.New("httprate: invalid trusted proxy")

// defaultIPv6Prefix keys an IPv6 client by its /64: a host is commonly
// given a whole /64 and may rotate through it at will (privacy addresses,
// RFC 8981), so keying by the address would give one client 2^64 keys.
// An IPv4 client is keyed by its address (32).
const defaultIPv6Prefix, defaultIPv4Prefix = 64, 32

// ClientIPConfig configures ClientIP. The zero value trusts no proxy, reads
// no header, and keys by the peer's address (an IPv6 one by its /64).
type ClientIPConfig struct {
	// TrustedProxies are the proxies, as CIDRs ("10.0.0.0/8") or single
	// addresses, whose header is believed. The header is read only when
	// the connection's peer is one of them.
	TrustedProxies []string
	// Header is the header the trusted proxies write the client's address
	// in: "X-Forwarded-For" (the default, when empty); "Forwarded" (RFC
	// 7239, walked by its elements' for= parameters); or another, such as
	// "X-Real-IP", "True-Client-IP" or "CF-Connecting-IP", read as
	// X-Forwarded-For is (comma-separated entries). Trust the one header
	// your proxies write, never two: a proxy that writes one passes any
	// other on from the client unchanged.
	Header string
	// IPv6Prefix is how many leading bits of an IPv6 client's address make
	// its key: 64 when zero, 1 to 128. Below 128 the key is the prefix
	// ("2001:db8:1:2::/64"); at 128, the address.
	IPv6Prefix int
	// IPv4Prefix is the same for an IPv4 client: 32 (the address) when
	// zero, 1 to 32 ("198.51.100.0/24" at 24). An IPv4-mapped IPv6 address
	// is an IPv4 client.
	IPv4Prefix int
}

// ClientIP returns a key function that yields the client's address, or
// the prefix of it that cfg names: by default an IPv6 client's /64
// ("2001:db8:1:2::/64"), which it can rotate through, and an IPv4 client's
// address. ClientIP(ClientIPConfig{}) keys by the connection's peer.
//
// Starting from the peer, it walks cfg.Header from right to left past
// every trusted proxy and returns the first address that is not one. With
// no trusted proxies, or when the peer is not one, the header is ignored,
// since any client can send it. Entries may carry a port, as some load
// balancers write them: "203.0.113.7:4711", "[2001:db8::1]:4711"; the port
// is dropped, so one client keeps one key across connections. In Forwarded,
// quoted IPv6 addresses and ports are understood
// (for="[2001:db8::1]:4711"). An entry that is not an address ("unknown",
// garbage, an obfuscated identifier such as "_hidden", a Forwarded element
// with no for=) stops the walk at the last trusted hop. Which proxies are
// trusted decides which entry is the client; the prefix only shapes the
// key, after the walk.
//
// It fails with ErrInvalidProxy for a proxy that is neither a CIDR nor an
// address, and with ErrInvalidConfig for a prefix length out of range or a
// header name that is not a valid token.
func ClientIP(cfg ClientIPConfig) (func(*http.Request) (string, error), error) {
	t, err := newTrust(cfg.TrustedProxies)
	if err != nil {
		return nil, err
	}
	bits6, bits4 := cmp.Or(cfg.IPv6Prefix, defaultIPv6Prefix), cmp.Or(cfg.IPv4Prefix, defaultIPv4Prefix)
	if bits6 < 1 || bits6 > 128 || bits4 < 1 || bits4 > 32 {
		return nil, fmt.Errorf("%w: IPv6Prefix %d, IPv4Prefix %d (want 1 to 128 and 1 to 32, or 0 for the defaults)",
			ErrInvalidConfig, cfg.IPv6Prefix, cfg.IPv4Prefix)
	}
	header, hops := "X-Forwarded-For", splitForwardedFor
	if cfg.Header != "" {
		if !validHeaderName(cfg.Header) {
			return nil, fmt.Errorf("%w: Header %q is not a header name", ErrInvalidConfig, cfg.Header)
		}
		header = http.CanonicalHeaderKey(cfg.Header)
	}
	if header == "Forwarded" {
		hops = forwardedFor
	}
	return func(r *http.Request) (string, error) {
		a, err := t.walk(r, header, hops)
		if err != nil {
			return "", err
		}
		bits := bits4
		if a.Is6() {
			bits = bits6
		}
		if bits == a.BitLen() {
			return a.String(), nil
		}
		p, _ := a.Prefix(bits) // bits is within the address's length
		return p.String(), nil
	}, nil
}

// validHeaderName reports whether s is an HTTP field name (RFC 9110 token).
func validHeaderName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return s != ""
}

type trust []netip.Prefix

func newTrust(proxies []string) (trust, error) {
	var t trust
	for _, p := range proxies {
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			addr, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return nil, fmt.Errorf("%w: %q is neither a CIDR nor an IP address", ErrInvalidProxy, p)
			}
			prefix = netip.PrefixFrom(addr, addr.BitLen())
		}
		t = append(t, prefix.Masked())
	}
	return t, nil
}

func (t trust) trusted(a netip.Addr) bool {
	for _, p := range t {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// walk returns the client's address: the peer, or, while the hop at hand is
// a trusted proxy, the hop it names before it. hops splits the header's
// values into the nodes the proxies wrote, leftmost first.
func (t trust) walk(r *http.Request, header string, hops func([]string) []string) (netip.Addr, error) {
	if r == nil {
		return netip.Addr{}, fmt.Errorf("%w: a nil request", ErrNoClientIP)
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}, fmt.Errorf("%w: remote address %q", ErrNoClientIP, r.RemoteAddr)
	}
	client := canonical(peer)
	if !t.trusted(client) {
		return client, nil
	}
	values := r.Header.Values(header)
	if len(values) == 0 {
		return client, nil
	}
	nodes := hops(values)
	for i := len(nodes) - 1; i >= 0; i-- {
		hop, ok := parseNode(nodes[i])
		if !ok {
			break
		}
		client = hop
		if !t.trusted(client) {
			break
		}
	}
	return client, nil
}

// canonical drops what would give one client two keys: the IPv4-in-IPv6
// mapping and an IPv6 zone (a zoned address is in no prefix, either).
func canonical(a netip.Addr) netip.Addr { return a.Unmap().WithZone("") }

// splitForwardedFor returns the entries of X-Forwarded-For values.
func splitForwardedFor(values []string) []string {
	var nodes []string
	for _, v := range values {
		for _, n := range strings.Split(v, ",") {
			nodes = append(nodes, strings.TrimSpace(n))
		}
	}
	return nodes
}

// forwardedFor returns the for= node of every element of Forwarded values
// (RFC 7239 section 4), unquoted; "" for an element that has none or does
// not parse, which stops the walk there.
func forwardedFor(values []string) []string {
	var nodes []string
	for _, v := range values {
		for _, element := range splitOutsideQuotes(v, ',') {
			nodes = append(nodes, forParam(element))
		}
	}
	return nodes
}

// forParam returns the unquoted value of the element's for= pair, or "".
func forParam(element string) string {
	for _, pair := range splitOutsideQuotes(element, ';') {
		name, value, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "for") {
			continue
		}
		value = strings.TrimSpace(value)
		if strings.HasPrefix(value, `"`) {
			u, ok := unquote(value)
			if !ok {
				return ""
			}
			return u
		}
		return value
	}
	return ""
}

// splitOutsideQuotes splits s at every sep that is not inside a
// quoted-string.
func splitOutsideQuotes(s string, sep byte) []string {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++ // the escaped character, whatever it is
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// unquote decodes an RFC 9110 quoted-string that makes up all of s.
func unquote(s string) (string, bool) {
	if len(s) < 2 || s[0] != '"' || s[len(s)-1] != '"' {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(s)-1; i++ {
		c := s[i]
		switch {
		case c == '\\':
			i++
			if i == len(s)-1 {
				return "", false
			}
			b.WriteByte(s[i])
		case c == '"':
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// parseNode reads a node as proxies write it: an IPv4 or IPv6 address,
// bracketed or not, with an optional port ("203.0.113.7:4711",
// "[2001:db8::1]:4711", RFC 7239's obfuscated port "_p1"). Anything else,
// such as "unknown" or an obfuscated identifier, is not an address.
func parseNode(s string) (netip.Addr, bool) {
	if rest, ok := strings.CutPrefix(s, "["); ok {
		host, port, ok := strings.Cut(rest, "]")
		if !ok {
			return netip.Addr{}, false
		}
		if port != "" {
			if p, ok := strings.CutPrefix(port, ":"); !ok || !validPort(p) {
				return netip.Addr{}, false
			}
		}
		a, err := netip.ParseAddr(host)
		if err != nil || !a.Is6() {
			return netip.Addr{}, false
		}
		return canonical(a), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return canonical(a), true
	}
	// An IPv4 address with a port: an unbracketed IPv6 address with a port
	// would be ambiguous, and is no address.
	host, port, ok := strings.Cut(s, ":")
	if !ok || !validPort(port) {
		return netip.Addr{}, false
	}
	a, err := netip.ParseAddr(host)
	if err != nil || !a.Is4() {
		return netip.Addr{}, false
	}
	return a, true
}

// validPort reports whether p is a port number (1 to 5 digits, at most
// 65535) or an obfuscated port ("_" and letters, digits, '.', '_', '-').
func validPort(p string) bool {
	if p == "" {
		return false
	}
	if p[0] == '_' {
		for i := 1; i < len(p); i++ {
			c := p[i]
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-') {
				return false
			}
		}
		return len(p) > 1
	}
	if len(p) > 5 {
		return false
	}
	n := 0
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
		n = n*10 + int(p[i]-'0')
	}
	return n <= 65535
}

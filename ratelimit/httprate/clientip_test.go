package httprate_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/ratelimit"
	"github.com/redis-primitives/go/ratelimit/httprate"
)

// exact is ClientIP keyed by whole addresses, IPv6 ones too, so that what
// is parsed from a header is compared whole.
func exact(t *testing.T, header string, proxies ...string) func(*http.Request) (string, error) {
	t.Helper()
	key, err := httprate.ClientIP(httprate.ClientIPConfig{TrustedProxies: proxies, Header: header, IPv6Prefix: 128})
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func TestClientIPTrustsForwardedForOnlyFromConfiguredProxies(t *testing.T) {
	behindProxies := exact(t, "", "10.0.0.0/8", "192.0.2.7")
	direct, err := httprate.ClientIP(httprate.ClientIPConfig{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name   string
		remote string
		xff    []string
		want   string
	}{
		{"spoofed header from an untrusted peer is ignored", "203.0.113.9:5000", []string{"1.2.3.4"}, "203.0.113.9"},
		{"no proxies configured: header ignored", "10.1.1.1:5000", []string{"1.2.3.4"}, "10.1.1.1"},
		{"one trusted proxy", "10.1.1.1:5000", []string{"198.51.100.4"}, "198.51.100.4"},
		{"chain of trusted proxies", "10.1.1.1:5000", []string{"198.51.100.4, 192.0.2.7", "10.2.2.2"}, "198.51.100.4"},
		{"client-supplied entry left of the real client is ignored", "10.1.1.1:5000", []string{"6.6.6.6, 198.51.100.4"}, "198.51.100.4"},
		{"garbage stops at the last trusted hop", "10.1.1.1:5000", []string{"198.51.100.4, nonsense, 10.3.3.3"}, "10.3.3.3"},
		{"only proxies", "10.1.1.1:5000", []string{"10.9.9.9"}, "10.9.9.9"},
		{"ipv6 peer", "[2001:db8::1]:443", nil, "2001:db8::1"},
		{"ipv4 with a port", "10.1.1.1:5000", []string{"203.0.113.7:4711"}, "203.0.113.7"},
		{"bracketed ipv6 with a port", "10.1.1.1:5000", []string{"[2001:db8::1]:4711"}, "2001:db8::1"},
		{"bracketed ipv6 without a port", "10.1.1.1:5000", []string{"[2001:db8::1]"}, "2001:db8::1"},
		{"bare ipv6", "10.1.1.1:5000", []string{"2001:db8::1"}, "2001:db8::1"},
		{"trusted proxy with a port in the chain", "10.1.1.1:5000", []string{"198.51.100.4:1, 10.2.2.2:443"}, "198.51.100.4"},
		{"ipv4-mapped ipv6 is the ipv4 client", "10.1.1.1:5000", []string{"[::ffff:198.51.100.4]:80"}, "198.51.100.4"},
		{"zone dropped", "10.1.1.1:5000", []string{"fe80::1%eth0"}, "fe80::1"},
		{"port out of range is garbage", "10.1.1.1:5000", []string{"198.51.100.4:65536"}, "10.1.1.1"},
		{"port that is not a number is garbage", "10.1.1.1:5000", []string{"198.51.100.4:http"}, "10.1.1.1"},
		{"bracketed ipv6 with a bad port is garbage", "10.1.1.1:5000", []string{"[2001:db8::1]:x"}, "10.1.1.1"},
		{"unknown stops the walk", "10.1.1.1:5000", []string{"6.6.6.6, unknown"}, "10.1.1.1"},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remote
		for _, h := range tc.xff {
			r.Header.Add("X-Forwarded-For", h)
		}
		f := behindProxies
		if tc.name == "no proxies configured: header ignored" {
			f = direct
		}
		got, err := f(r)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}

	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "@unix"
	if _, err := direct(r); !errors.Is(err, httprate.ErrNoClientIP) {
		t.Errorf("unix-socket peer: %v, want ErrNoClientIP", err)
	}
	if _, err := httprate.ClientIP(httprate.ClientIPConfig{TrustedProxies: []string{"not-a-cidr"}}); !errors.Is(err, httprate.ErrInvalidProxy) {
		t.Errorf("ClientIP with a malformed proxy: %v, want ErrInvalidProxy", err)
	}
	if _, err := httprate.ClientIP(httprate.ClientIPConfig{TrustedProxies: []string{"10.0.0.0/33"}, Header: "Forwarded"}); !errors.Is(err, httprate.ErrInvalidProxy) {
		t.Errorf("ClientIP of Forwarded with a malformed proxy: %v, want ErrInvalidProxy", err)
	}
}

func TestClientIPTrustsTheForwardedHeaderOnlyFromConfiguredProxies(t *testing.T) {
	key := exact(t, "Forwarded", "10.0.0.0/8", "2001:db8:ffff::/48")
	cases := []struct {
		name   string
		remote string
		fwd    []string
		xff    string
		want   string
	}{
		{"untrusted peer: header ignored", "203.0.113.9:5000", []string{"for=1.2.3.4"}, "", "203.0.113.9"},
		{"ipv4", "10.1.1.1:5000", []string{"for=198.51.100.4;proto=https;by=10.1.1.1"}, "", "198.51.100.4"},
		{"quoted ipv4 with a port", "10.1.1.1:5000", []string{`for="198.51.100.4:4711"`}, "", "198.51.100.4"},
		{"quoted ipv6 with a port", "10.1.1.1:5000", []string{`for="[2001:db8:cafe::17]:4711"`}, "", "2001:db8:cafe::17"},
		{"quoted ipv6 without a port", "10.1.1.1:5000", []string{`For="[2001:db8:cafe::17]"`}, "", "2001:db8:cafe::17"},
		{"obfuscated port", "10.1.1.1:5000", []string{`for="198.51.100.4:_p1"`}, "", "198.51.100.4"},
		{"chain over two fields", "10.1.1.1:5000", []string{`for=6.6.6.6, for=198.51.100.4`, `for="[2001:db8:ffff::1]:80";proto=http`}, "", "198.51.100.4"},
		{"comma inside quotes is not a separator", "10.1.1.1:5000", []string{`for=198.51.100.4;ext="a,b"`}, "", "198.51.100.4"},
		{"obfuscated client stops at the last trusted hop", "10.1.1.1:5000", []string{"for=_hidden, for=10.2.2.2"}, "", "10.2.2.2"},
		{"unknown client stops at the last trusted hop", "10.1.1.1:5000", []string{"for=unknown"}, "", "10.1.1.1"},
		{"element without for stops the walk", "10.1.1.1:5000", []string{"for=6.6.6.6, proto=http"}, "", "10.1.1.1"},
		{"unterminated quote stops the walk", "10.1.1.1:5000", []string{`for="198.51.100.4`}, "", "10.1.1.1"},
		{"X-Forwarded-For ignored", "10.1.1.1:5000", nil, "6.6.6.6", "10.1.1.1"},
	}
	for _, tc := range cases {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remote
		for _, h := range tc.fwd {
			r.Header.Add("Forwarded", h)
		}
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		got, err := key(r)
		if err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	xffKey, err := httprate.ClientIP(httprate.ClientIPConfig{TrustedProxies: []string{"10.0.0.0/8"}})
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.1.1.1:5000"
	r.Header.Set("Forwarded", "for=6.6.6.6")
	if got, _ := xffKey(r); got != "10.1.1.1" {
		t.Errorf("ClientIP read the Forwarded header: %q", got)
	}
}

// One host may rotate through every address of its /64 (privacy addresses),
// so keyed by address it would get a limit per address: 2^64 of them. The
// default key is the /64: twenty requests from twenty addresses of one /64
// are limited as one client's, and another /64 is another client.
func TestClientRotatingThroughItsIPv6SlashSixtyFourIsLimitedAsOneClient(t *testing.T) {
	s := redistest.Start(t)
	key, err := httprate.ClientIP(httprate.ClientIPConfig{TrustedProxies: []string{"127.0.0.1"}}) // the test's own connections come through this "proxy"
	if err != nil {
		t.Fatal(err)
	}
	const limit, sent = 5, 20
	sv := serve(t, s, httprate.Config{Policy: ratelimit.Policy{ratelimit.SlidingLog(limit, time.Minute)}, Key: key})
	admitted := func(net64 string) (ok int, keys map[string]bool) {
		keys = map[string]bool{}
		for i := range sent {
			addr := fmt.Sprintf("%s:%x:%x:%x:%x", net64, rand.Uint32N(1<<16), rand.Uint32N(1<<16), rand.Uint32N(1<<16), i)
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = "127.0.0.1:1"
			r.Header.Set("X-Forwarded-For", addr)
			k, err := key(r)
			if err != nil {
				t.Fatal(err)
			}
			keys[k] = true
			req, _ := http.NewRequest("GET", sv.srv.URL, nil)
			req.Header.Set("X-Forwarded-For", addr)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				ok++
			}
		}
		return ok, keys
	}
	ok, keys := admitted("2001:db8:1:2")
	t.Logf("%d addresses of 2001:db8:1:2::/64: %d admitted against a limit of %d, keys %v", sent, ok, limit, keys)
	if ok != limit || len(keys) != 1 || !keys["2001:db8:1:2::/64"] {
		t.Errorf("one /64 rotating through %d addresses: %d admitted, keys %v; want %d admitted under the one key 2001:db8:1:2::/64", sent, ok, keys, limit)
	}
	if ok, _ := admitted("2001:db8:1:3"); ok != limit {
		t.Errorf("the next /64: %d admitted, want its own %d", ok, limit)
	}
}

// A header of the proxy's own (X-Real-IP, CF-Connecting-IP, …) is believed
// under the same rules as X-Forwarded-For: only from a trusted peer, walked
// right to left past trusted proxies; and then X-Forwarded-For is not read.
func TestCustomClientIPHeaderIsBelievedOnlyFromTrustedProxies(t *testing.T) {
	key := exact(t, "x-real-ip", "10.0.0.0/8")
	for _, tc := range []struct {
		name, remote, real, xff, want string
	}{
		{"untrusted peer: header ignored", "203.0.113.9:5000", "1.2.3.4", "", "203.0.113.9"},
		{"trusted peer: header believed", "10.1.1.1:5000", "198.51.100.4", "", "198.51.100.4"},
		{"trusted peer, no header: the peer", "10.1.1.1:5000", "", "198.51.100.4", "10.1.1.1"},
		{"X-Forwarded-For ignored", "10.1.1.1:5000", "198.51.100.4", "6.6.6.6", "198.51.100.4"},
		{"walked past trusted entries", "10.1.1.1:5000", "6.6.6.6, 198.51.100.4, 10.2.2.2", "", "198.51.100.4"},
		{"garbage stops at the last trusted hop", "10.1.1.1:5000", "garbage", "", "10.1.1.1"},
		{"ipv6 with a port", "10.1.1.1:5000", "[2001:db8::1]:4711", "", "2001:db8::1"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remote
		if tc.real != "" {
			r.Header.Set("X-Real-IP", tc.real)
		}
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got, err := key(r); err != nil || got != tc.want {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// The prefix lengths shape the key, not the trust: a trusted proxy is
// matched by its whole address.
func TestClientIPPrefixesShapeTheKeyAndAreChecked(t *testing.T) {
	key, err := httprate.ClientIP(httprate.ClientIPConfig{TrustedProxies: []string{"2001:db8:ffff::1"}, IPv4Prefix: 24, IPv6Prefix: 48})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ remote, xff, want string }{
		{"198.51.100.4:1", "", "198.51.100.0/24"},
		{"198.51.100.250:1", "", "198.51.100.0/24"},
		{"[::ffff:198.51.100.9]:1", "", "198.51.100.0/24"},
		{"[2001:db8:aa:bb::1]:1", "", "2001:db8:aa::/48"},
		// The proxy's neighbour in its /48 is not the proxy.
		{"[2001:db8:ffff::2]:1", "198.51.100.4", "2001:db8:ffff::/48"},
		{"[2001:db8:ffff::1]:1", "198.51.100.4", "198.51.100.0/24"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tc.remote
		if tc.xff != "" {
			r.Header.Set("X-Forwarded-For", tc.xff)
		}
		if got, err := key(r); err != nil || got != tc.want {
			t.Errorf("%s (X-Forwarded-For %q): %q, %v; want %q", tc.remote, tc.xff, got, err, tc.want)
		}
	}
	for _, cfg := range []httprate.ClientIPConfig{{IPv6Prefix: 129}, {IPv6Prefix: -1}, {IPv4Prefix: 33}, {IPv4Prefix: -8}, {Header: "X Real IP"}, {Header: "X-Real-IP:"}} {
		if _, err := httprate.ClientIP(cfg); !errors.Is(err, httprate.ErrInvalidConfig) {
			t.Errorf("ClientIP(%+v): %v, want ErrInvalidConfig", cfg, err)
		}
	}
	if _, err := httprate.ClientIP(httprate.ClientIPConfig{TrustedProxies: []string{"nope"}}); !errors.Is(err, httprate.ErrInvalidProxy) {
		t.Errorf("a malformed proxy: %v, want ErrInvalidProxy", err)
	}
}

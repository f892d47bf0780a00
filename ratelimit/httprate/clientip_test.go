package httprate_test

import (
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/redis-primitives/go/ratelimit/httprate"
)

func TestClientIPTrustsForwardedForOnlyFromConfiguredProxies(t *testing.T) {
	behindProxies, err := httprate.ClientIP("10.0.0.0/8", "192.0.2.7")
	if err != nil {
		t.Fatal(err)
	}
	direct, err := httprate.ClientIP()
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
	if _, err := httprate.ClientIP("not-a-cidr"); !errors.Is(err, httprate.ErrInvalidProxy) {
		t.Errorf("ClientIP with a malformed proxy: %v, want ErrInvalidProxy", err)
	}
	if _, err := httprate.ClientIPFromForwarded("10.0.0.0/33"); !errors.Is(err, httprate.ErrInvalidProxy) {
		t.Errorf("ClientIPFromForwarded with a malformed proxy: %v, want ErrInvalidProxy", err)
	}
}

func TestClientIPFromForwardedTrustsTheForwardedHeaderOnlyFromConfiguredProxies(t *testing.T) {
	key, err := httprate.ClientIPFromForwarded("10.0.0.0/8", "2001:db8:ffff::/48")
	if err != nil {
		t.Fatal(err)
	}
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
	xffKey, err := httprate.ClientIP("10.0.0.0/8")
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

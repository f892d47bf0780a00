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
	if _, err := httprate.ClientIP("not-a-cidr"); err == nil {
		t.Error("ClientIP accepted a malformed proxy")
	}
}

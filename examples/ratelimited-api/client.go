package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// exchange is one request the client made and what came back.
type exchange struct {
	who            string
	status         int
	policy, fields string // RateLimit-Policy and RateLimit
	retryAfter     string
	problem        problem
}

type problem struct {
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail"`
}

// selfDrive serves the API on ln and plays a client against it: alice sends
// seven requests in a row against a burst of five, bob two; then alice
// waits as long as Retry-After says and tries again.
func selfDrive(ctx context.Context, a *api, ln net.Listener, w io.Writer) ([]exchange, error) {
	sctx, stop := context.WithCancel(ctx)
	served := make(chan error, 1)
	go func() { served <- a.serve(sctx, ln) }()
	defer func() {
		stop()
		<-served
	}()

	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	hc := &http.Client{Transport: transport, Timeout: 5 * time.Second}
	url := "http://" + ln.Addr().String() + "/hello"
	fmt.Fprintf(w, "API on %s; policy per key: 5 per 2 s (burst) and 20 per minute\n", ln.Addr())

	var log []exchange
	call := func(who string) (exchange, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return exchange{}, err
		}
		req.Header.Set("X-API-Key", who)
		resp, err := hc.Do(req)
		if err != nil {
			return exchange{}, err
		}
		defer resp.Body.Close()
		e := exchange{
			who: who, status: resp.StatusCode,
			policy: resp.Header.Get("RateLimit-Policy"), fields: resp.Header.Get("RateLimit"),
			retryAfter: resp.Header.Get("Retry-After"),
		}
		if resp.StatusCode == http.StatusTooManyRequests {
			if err := json.NewDecoder(resp.Body).Decode(&e.problem); err != nil {
				return e, fmt.Errorf("429 body: %w", err)
			}
		} else {
			_, _ = io.Copy(io.Discard, resp.Body)
		}
		log = append(log, e)
		line := fmt.Sprintf("%-5s #%d  %d  RateLimit: %s", who, count(log, who), e.status, e.fields)
		if e.status == http.StatusTooManyRequests {
			line += fmt.Sprintf("  Retry-After: %s  %q", e.retryAfter, e.problem.Detail)
		}
		fmt.Fprintln(w, line)
		return e, nil
	}

	var last exchange
	for range 7 {
		e, err := call("alice")
		if err != nil {
			return log, err
		}
		last = e
	}
	for range 2 {
		if _, err := call("bob"); err != nil {
			return log, err
		}
	}
	if last.status != http.StatusTooManyRequests {
		return log, errors.New("alice's seventh request was not refused")
	}
	fmt.Fprintf(w, "RateLimit-Policy: %s\n", last.policy)
	secs, err := strconv.Atoi(last.retryAfter)
	if err != nil {
		return log, fmt.Errorf("Retry-After %q: %w", last.retryAfter, err)
	}
	fmt.Fprintf(w, "alice waits %d s, as Retry-After says\n", secs)
	select {
	case <-time.After(time.Duration(secs) * time.Second):
	case <-ctx.Done():
		return log, ctx.Err()
	}
	if _, err := call("alice"); err != nil {
		return log, err
	}
	return log, nil
}

func count(log []exchange, who string) int {
	n := 0
	for _, e := range log {
		if e.who == who {
			n++
		}
	}
	return n
}

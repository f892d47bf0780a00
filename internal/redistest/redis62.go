package redistest

import (
	"bufio"
	"bytes"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Redis62 is a relay to a real server (7.0 or later) that answers as Redis
// 6.2 does to what the primitives send and 6.2 refuses, and passes
// everything else on. Redis 6.2 itself is not packaged where the tests run;
// a 7.0 server with commands renamed away (Args("--rename-command", …))
// shows a missing command, but not these:
//
//   - EVALSHA_RO, EVAL_RO, FCALL, FCALL_RO and FUNCTION are unknown
//     commands, and 6.2 words that differently from 7.0: "ERR unknown
//     command `evalsha_ro`, with args beginning with: `…`, " (backticks,
//     each argument followed by a comma);
//   - a script opening with a flags line (#!lua flags=no-writes) does not
//     compile: "ERR Error compiling script (new function): user_script:1:
//     unexpected symbol near '#'";
//   - SET with both NX and GET is a syntax error ("ERR syntax error"; 7.0
//     allowed the pair), as a command and inside a script. A script that
//     runs such a SET is sent on with that call changed to one 7.0 refuses
//     with the same reply (NX and XX together), so the rest of the script
//     runs on the real server exactly as it would on 6.2.
//
// It keeps a script cache of its own, as a separate server would: EVALSHA
// of a script not sent through this relay by EVAL or SCRIPT LOAD answers
// NOSCRIPT, even when the real server has it. INFO still reports the real
// server's version. Commands are relayed one at a time, each reply read
// whole before the next command is sent; a connection that subscribes is
// relayed as it is from then on.
type Redis62 struct {
	relay *Relay // accepts, dials, closes; serve relays each connection

	mu      sync.Mutex
	scripts map[string]string // SHA1 the client knows → SHA1 the real server runs
}

// StartRedis62 starts a Redis62 relay to target (host:port) on a free
// loopback port. It is closed when t ends.
func StartRedis62(t testing.TB, target string) *Redis62 {
	t.Helper()
	r := &Redis62{scripts: map[string]string{}}
	relay, err := newServingRelay(target, r.serve)
	if err != nil {
		t.Fatalf("redistest: 6.2 relay to %s: %v", target, err)
	}
	r.relay = relay
	t.Cleanup(relay.Close)
	return r
}

// Addr returns the address clients dial instead of the target's.
func (r *Redis62) Addr() string { return r.relay.Addr() }

// Close stops accepting, drops every connection and waits for the relay's
// goroutines. It may be called more than once.
func (r *Redis62) Close() { r.relay.Close() }

// serve relays one client connection, command by command.
func (r *Redis62) serve(in, out net.Conn) {
	defer in.Close()
	defer out.Close()
	cr, sr := bufio.NewReader(in), bufio.NewReader(out)
	for {
		args, raw, err := readCommand(cr)
		if err != nil {
			return
		}
		name := strings.ToLower(args[0])
		if reply, ok := r.answer(name, args); ok {
			if _, err := in.Write([]byte(reply)); err != nil {
				return
			}
			continue
		}
		if fwd := r.rewrite(name, args); fwd != nil {
			raw = encodeCommand(fwd)
		}
		if _, err := out.Write(raw); err != nil {
			return
		}
		switch name {
		case "subscribe", "psubscribe":
			// From here on replies are pushed, not one per command.
			r.relay.wg.Add(1)
			go func() {
				defer r.relay.wg.Done()
				_, _ = io.Copy(in, sr)
				in.Close()
			}()
			_, _ = io.Copy(out, cr)
			return
		}
		var reply bytes.Buffer
		if err := copyReply(sr, &reply); err != nil {
			return
		}
		if name == "script" && len(args) > 2 && strings.EqualFold(args[1], "load") && bytes.HasPrefix(reply.Bytes(), []byte("$40\r\n")) {
			// The real server's SHA1 of the rewritten script: give the
			// client the one of what it sent.
			reply.Reset()
			fmt.Fprintf(&reply, "$40\r\n%s\r\n", SHA1(args[2]))
		}
		if _, err := in.Write(reply.Bytes()); err != nil {
			return
		}
	}
}

// answer returns 6.2's reply to a command that 6.2 refuses before running
// anything, and false for a command to relay.
func (r *Redis62) answer(name string, args []string) (string, bool) {
	switch name {
	case "evalsha_ro", "eval_ro", "fcall", "fcall_ro", "function":
		return unknownCommand62(args), true
	case "set":
		if setNXGet(args[1:]) {
			return "-ERR syntax error\r\n", true
		}
	case "eval":
		if len(args) > 1 && strings.HasPrefix(args[1], "#!") {
			return compileError62, true
		}
	case "script":
		if len(args) > 2 && strings.EqualFold(args[1], "load") && strings.HasPrefix(args[2], "#!") {
			return compileError62, true
		}
	case "evalsha":
		if len(args) > 1 {
			r.mu.Lock()
			_, known := r.scripts[strings.ToLower(args[1])]
			r.mu.Unlock()
			if !known {
				return "-NOSCRIPT No matching script. Please use EVAL.\r\n", true
			}
		}
	}
	return "", false
}

// rewrite returns the command to send instead of args, or nil to send args
// as they came: a script is sent as 6.2 would run it, and EVALSHA names the
// real server's SHA1 of that script.
func (r *Redis62) rewrite(name string, args []string) []string {
	switch {
	case name == "eval" && len(args) > 1,
		name == "script" && len(args) > 2 && strings.EqualFold(args[1], "load"):
		i := 1
		if name == "script" {
			i = 2
		}
		src := as62(args[i])
		r.mu.Lock()
		r.scripts[SHA1(args[i])] = SHA1(src)
		r.mu.Unlock()
		if src == args[i] {
			return nil
		}
		fwd := append([]string(nil), args...)
		fwd[i] = src
		return fwd
	case name == "evalsha" && len(args) > 1:
		r.mu.Lock()
		sha := r.scripts[strings.ToLower(args[1])]
		r.mu.Unlock()
		fwd := append([]string(nil), args...)
		fwd[1] = sha
		return fwd
	case name == "script" && len(args) > 1 && strings.EqualFold(args[1], "flush"):
		r.mu.Lock()
		clear(r.scripts)
		r.mu.Unlock()
	}
	return nil
}

// compileError62 is 6.2's reply to a script with a flags line: 6.2 wraps the
// body in "function f_<sha>() …" and Lua stops at the '#'.
const compileError62 = "-ERR Error compiling script (new function): user_script:1: unexpected symbol near '#'\r\n"

// unknownCommand62 is 6.2's reply to a command it does not have
// (processCommand: each argument in backticks, a comma after each, up to
// 128 bytes of them).
func unknownCommand62(args []string) string {
	var b strings.Builder
	for _, a := range args[1:] {
		if b.Len() >= 128 {
			break
		}
		fmt.Fprintf(&b, "`%.*s`, ", 128-b.Len(), a)
	}
	return fmt.Sprintf("-ERR unknown command `%s`, with args beginning with: %s\r\n", args[0], b.String())
}

// setNXGet reports whether SET's options (after the command name) hold both
// NX and GET, which 6.2's parser refuses whatever their order.
func setNXGet(opts []string) bool {
	var nx, get bool
	for i, o := range opts {
		if i < 2 { // key and value
			continue
		}
		nx = nx || strings.EqualFold(o, "nx")
		get = get || strings.EqualFold(o, "get")
	}
	return nx && get
}

// scriptSet matches a redis.call or redis.pcall of SET with literal
// arguments (no parentheses among them).
var scriptSet = regexp.MustCompile(`redis\.p?call\(\s*['"][sS][eE][tT]['"][^()]*\)`)

var scriptNX = regexp.MustCompile(`['"][nN][xX]['"]`)
var scriptGet = regexp.MustCompile(`['"][gG][eE][tT]['"]`)

// as62 returns src with every SET call that passes both NX and GET given
// XX as well, which 7.0 refuses with the reply 6.2 gives to NX and GET:
// "ERR syntax error", with no effect.
func as62(src string) string {
	return scriptSet.ReplaceAllStringFunc(src, func(call string) string {
		if !scriptNX.MatchString(call) || !scriptGet.MatchString(call) {
			return call
		}
		return scriptNX.ReplaceAllStringFunc(call, func(nx string) string { return nx + ", 'XX'" })
	})
}

// SHA1 returns the hex SHA1 digest by which a server knows the script src.
func SHA1(src string) string {
	sum := sha1.Sum([]byte(src))
	return hex.EncodeToString(sum[:])
}

var errProtocol = errors.New("redistest: 6.2 relay: unexpected protocol")

// readCommand reads one command (an array of bulk strings, as every
// client library sends them) and returns its arguments and its bytes.
func readCommand(r *bufio.Reader) ([]string, []byte, error) {
	var raw bytes.Buffer
	line, err := readLine(r, &raw)
	if err != nil {
		return nil, nil, err
	}
	if len(line) < 2 || line[0] != '*' {
		return nil, nil, errProtocol
	}
	n, err := strconv.Atoi(line[1:])
	if err != nil || n < 1 {
		return nil, nil, errProtocol
	}
	args := make([]string, n)
	for i := range args {
		line, err := readLine(r, &raw)
		if err != nil {
			return nil, nil, err
		}
		if len(line) < 2 || line[0] != '$' {
			return nil, nil, errProtocol
		}
		size, err := strconv.Atoi(line[1:])
		if err != nil || size < 0 {
			return nil, nil, errProtocol
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, nil, err
		}
		raw.Write(buf)
		args[i] = string(buf[:size])
	}
	return args, raw.Bytes(), nil
}

func encodeCommand(args []string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.Bytes()
}

// readLine reads one CRLF-terminated line into raw and returns it without
// the CRLF.
func readLine(r *bufio.Reader, raw *bytes.Buffer) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	raw.WriteString(line)
	if !strings.HasSuffix(line, "\r\n") {
		return "", errProtocol
	}
	return line[:len(line)-2], nil
}

// copyReply copies one whole reply, RESP2 or RESP3, from r to out.
func copyReply(r *bufio.Reader, out *bytes.Buffer) error {
	line, err := readLine(r, out)
	if err != nil {
		return err
	}
	if line == "" {
		return errProtocol
	}
	count := func() (int, error) { return strconv.Atoi(line[1:]) }
	switch line[0] {
	case '+', '-', ':', '_', ',', '#', '(':
		return nil
	case '$', '!', '=': // bulk, bulk error, verbatim string
		n, err := count()
		if err != nil {
			return errProtocol
		}
		if n < 0 {
			return nil
		}
		_, err = io.CopyN(out, r, int64(n)+2)
		return err
	case '*', '~', '>', '%', '|': // array, set, push, map, attribute
		n, err := count()
		if err != nil {
			return errProtocol
		}
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for range max(n, 0) {
			if err := copyReply(r, out); err != nil {
				return err
			}
		}
		if line[0] == '|' { // attributes precede the reply they describe
			return copyReply(r, out)
		}
		return nil
	}
	return errProtocol
}

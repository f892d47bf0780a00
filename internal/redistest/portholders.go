package redistest

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// tcpStates names the states of /proc/net/tcp's st column.
var tcpStates = map[string]string{
	"01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1", "05": "FIN_WAIT2",
	"06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT", "09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING",
}

// portHolders describes the TCP sockets on this machine whose local port
// is port (Linux: /proc/net/tcp and tcp6): each one's state, the address
// it is connected to, and the process that owns it when this one may see
// it. A restart on a port that stays taken says so: whether another
// server took the port, or a client's socket sits on it. Empty where
// /proc cannot tell.
func portHolders(port int) string {
	owners := map[string]string{} // socket inode -> "pid (name)", filled once needed
	var found []string
	for _, table := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		data, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 {
				continue
			}
			_, local, _ := strings.Cut(f[1], ":")
			if p, err := strconv.ParseInt(local, 16, 32); err != nil || int(p) != port {
				continue
			}
			if len(owners) == 0 {
				socketOwners(owners)
			}
			state := tcpStates[f[3]]
			if state == "" {
				state = "state " + f[3]
			}
			desc := state + " to " + hexAddr(f[2])
			if owner := owners[f[9]]; owner != "" {
				desc += " owned by " + owner
			} else if f[9] == "0" {
				desc += " owned by no process"
			}
			found = append(found, desc)
		}
	}
	if len(found) > 5 { // a listener's queue of closed connections can be long
		found = append(found[:5], fmt.Sprintf("%d more", len(found)-5))
	}
	return strings.Join(found, "; ")
}

// socketOwners maps each socket inode the processes this one may read hold
// to "pid (name)".
func socketOwners(owners map[string]string) {
	fds, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range fds {
		link, err := os.Readlink(fd)
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		pid := strings.Split(fd, "/")[2]
		comm, _ := os.ReadFile("/proc/" + pid + "/comm")
		owners[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = pid + " (" + strings.TrimSpace(string(comm)) + ")"
	}
	owners[""] = "" // looked once, even when nothing was found
}

// hexAddr prints /proc/net/tcp's address "0100007F:1F90" as "127.0.0.1:8080"
// (IPv4; an IPv6 address keeps its hex).
func hexAddr(s string) string {
	ip, port, ok := strings.Cut(s, ":")
	p, err := strconv.ParseInt(port, 16, 32)
	if !ok || err != nil {
		return s
	}
	if len(ip) != 8 {
		return fmt.Sprintf("[%s]:%d", ip, p)
	}
	var b [4]int64
	for i := range b {
		b[3-i], _ = strconv.ParseInt(ip[2*i:2*i+2], 16, 32)
	}
	return fmt.Sprintf("%d.%d.%d.%d:%d", b[0], b[1], b[2], b[3], p)
}

package redistest

import (
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
)

// A killed server whose port another process took before the restart
// (fence/pgfence's Sentinel test saw "Address already in use" for over a
// second once, holder unknown) fails its restart with what holds the port
// (relaunch appends portHolders): here a listener of this test's own. The
// holders are read from Linux's /proc/net/tcp, where the fixtures run.
func TestATakenPortIsReportedWithWhatHoldsIt(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port
	held := portHolders(port)
	t.Logf("port %d: %s", port, held)
	for _, want := range []string{"LISTEN", "owned by " + strconv.Itoa(os.Getpid()) + " ("} {
		if !strings.Contains(held, want) {
			t.Errorf("holders of a port this test listens on do not say %q: %q", want, held)
		}
	}
	if free := portHolders(0); free != "" {
		t.Errorf("holders of port 0: %q, want none", free)
	}
}

// Package redistest starts real Redis servers for tests. It never mocks.
//
// Start gives each test its own server, chosen in this order:
//
//  1. REDIS_ADDR, if set: a server someone else runs. The test is isolated by
//     a key prefix (Server.Prefix) and its keys are deleted afterwards. Fault
//     controls are not available on it.
//  2. redis-server from PATH, started on a free loopback port with
//     --save "" --appendonly no --maxmemory-policy noeviction.
//  3. Docker, through testcontainers-go, run as a separate program
//     (cmd/testcontainer) so that the Docker client never becomes a
//     dependency of the modules whose tests use this package.
//  4. Otherwise the test fails with what to install. It never skips for
//     want of a server.
//
// A server the fixture started can be stopped, killed, restarted on the same
// port, frozen and thawed (SIGSTOP, SIGCONT), and given a replica that can be
// promoted, so failures can be reproduced rather than imagined. Two fault
// tools reach past the server: a Relay (StartRelay) stalls one client's
// connection while every other client goes on, and a child (StartChild,
// ChildConfig, Report, WriteAsLeader) runs the test's own binary again as a
// process to freeze, thaw and kill, such as a leader paused between its
// check and its write.
//
// StartSentinel runs a primary, two replicas and three sentinels, with a
// go-redis failover client and failovers by SENTINEL FAILOVER, SIGKILL and
// SIGSTOP; StartCluster runs a Cluster of three primaries with a replica
// each, failed over by CLUSTER FAILOVER or SIGKILL. Under go test -short
// (make test-quick) both skip the test, the one case where the fixture
// skips: they take seconds to start, and make test and CI run them.
//
// Every process is stopped in t.Cleanup, and each is started with a parent
// death signal so that it dies with the test binary even when the binary is
// killed. Package pgtest does the same for PostgreSQL.
package redistest

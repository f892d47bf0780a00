package pgfence_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver of database/sql, for GuardSQL
	"github.com/redis/go-redis/v9"

	"github.com/redis-primitives/go/election"
	"github.com/redis-primitives/go/fence/pgfence"
	"github.com/redis-primitives/go/goredisadapter"
	"github.com/redis-primitives/go/internal/redistest"
	"github.com/redis-primitives/go/lock"
)

// tokenScheme is one way lock issues fencing tokens.
type tokenScheme struct {
	name string
	opts []lock.Option
	// monotonic: a token issued after a failover is above every token
	// issued before it, so not one stale write may be accepted.
	monotonic bool
}

// tokenSchemes returns the token schemes the failover history runs side by
// side, each with locks of its own: the counter alone
// (lock.WithCounterTokens), which a failover can move backwards, and lock's
// default, max(counter+1, the server's clock in µs), which it must not.
func tokenSchemes() []tokenScheme {
	return []tokenScheme{
		{name: "counter-only", opts: []lock.Option{lock.WithCounterTokens()}},
		{name: "hybrid clock", monotonic: true},
	}
}

const (
	pgFailovers = 20
	// pgMinWrites is the least number of fenced writes each monotonic
	// scheme, and each election, must have made through the faults.
	pgMinWrites = 2_000
	pgWorkers   = 3 // lock holders per resource, or nodes per election, each on a client of its own
	// pgOpTimeout bounds each call, so that a holder whose primary froze
	// gives up on it in about the time Sentinel takes to call the primary
	// down.
	pgOpTimeout = 2 * redistest.SentinelDownAfter
	// The elections' lease: short, so that terms come and go through the
	// faults.
	electionTTL   = 300 * time.Millisecond
	electionRenew = 100 * time.Millisecond
)

// door is one way pgfence fences a write: Store.Update on a row, or a
// transaction that calls Guard (pgx) or GuardSQL (database/sql) first and
// then inserts into a table of the caller's. write returns nil when the
// write was committed, an error matching pgfence.ErrStale when it was
// refused.
type door struct {
	name  string
	write func(ctx context.Context, token int64, value string) error
	// committed returns the tokens of the writes committed through a guard,
	// in the order PostgreSQL committed them; nil for Update.
	committed func(ctx context.Context) ([]int64, error)
}

// doors returns the three doors for one resource, id, of a fresh database.
func doors(t *testing.T, pool *pgxpool.Pool, db *sql.DB, store *pgfence.Store, id string) []door {
	t.Helper()
	ctx := context.Background()
	if err := store.Insert(ctx, pool, id+"/row", "initial", 1); err != nil {
		t.Fatal(err)
	}
	guarded := func(resource string) func(ctx context.Context) ([]int64, error) {
		return func(ctx context.Context) ([]int64, error) {
			rows, err := pool.Query(ctx, `SELECT token FROM guarded_writes WHERE resource = $1 ORDER BY id`, resource)
			if err != nil {
				return nil, err
			}
			defer rows.Close()
			var tokens []int64
			for rows.Next() {
				var tok int64
				if err := rows.Scan(&tok); err != nil {
					return nil, err
				}
				tokens = append(tokens, tok)
			}
			return tokens, rows.Err()
		}
	}
	return []door{
		{name: "Update", write: func(ctx context.Context, token int64, value string) error {
			return store.Update(ctx, pool, id+"/row", value, token)
		}},
		{name: "Guard", write: func(ctx context.Context, token int64, value string) error {
			tx, err := pool.Begin(ctx)
			if err != nil {
				return err
			}
			defer func() { _ = tx.Rollback(context.Background()) }()
			if err := store.Guard(ctx, tx, id+"/guard", token); err != nil {
				return err
			}
			// The id is taken after the guard, which holds the resource's
			// mark until commit: ids follow commit order.
			if _, err := tx.Exec(ctx, `INSERT INTO guarded_writes (resource, value, token) VALUES ($1, $2, $3)`, id+"/guard", value, token); err != nil {
				return err
			}
			return tx.Commit(ctx)
		}, committed: guarded(id + "/guard")},
		{name: "GuardSQL", write: func(ctx context.Context, token int64, value string) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer func() { _ = tx.Rollback() }()
			if err := store.GuardSQL(ctx, tx, id+"/guardsql", token); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO guarded_writes (resource, value, token) VALUES ($1, $2, $3)`, id+"/guardsql", value, token); err != nil {
				return err
			}
			return tx.Commit()
		}, committed: guarded(id + "/guardsql")},
	}
}

// With Sentinel failing the Redis primary over again and again (SENTINEL
// FAILOVER, SIGKILL, SIGSTOP past down-after in turn), lock holders of both
// token schemes, and the leaders of two elections, write to a PostgreSQL
// that is not failed over through each of pgfence's doors: Store.Update,
// Guard and GuardSQL. Holders take random TTLs, some release, some let the
// lease expire, one in ten pauses past its lease before its last write;
// leaders resign after a few writes, and one term in four writes once more
// after its term ended, as a leader that learns late. A write is stale
// when it was accepted after a write of a holder (or a term) that acquired
// strictly later. Counter-only tokens go back whenever a promoted replica
// missed the last INCRs, and their stale writes are counted and shown;
// lock's default tokens, which are election's epochs, must let none
// through: the promise of election + pgfence, a stale leader's PostgreSQL
// write refused across a Redis failover.
func TestSentinelFailoversLetStaleWritesIntoPostgresOnlyWhenTokensGoBack(t *testing.T) {
	sen := redistest.StartSentinel(t)
	pool, store := newDB(t, 40)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `CREATE TABLE guarded_writes (id bigserial PRIMARY KEY, resource text NOT NULL, value text NOT NULL, token bigint NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("pgx", pool.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(12)
	t.Cleanup(func() { _ = db.Close() })

	runCtx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	start := time.Now()
	var histories []*pgHistory
	for si, sc := range tokenSchemes() {
		for di, d := range doors(t, pool, db, store, fmt.Sprintf("lock%d", si)) {
			h := &pgHistory{kind: sc.name + " tokens", door: d, monotonic: sc.monotonic, start: start}
			histories = append(histories, h)
			for w := range pgWorkers {
				who := fmt.Sprintf("s%dd%dw%d", si, di, w)
				opts := append([]lock.Option{lock.WithPrefix(fmt.Sprintf("pg:s%dd%d:", si, di)), lock.WithOwner(who)}, sc.opts...)
				l, err := lock.New(goredisadapter.New(sen.Client(t)), opts...)
				if err != nil {
					t.Fatal(err)
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					h.holder(runCtx, l, who, rand.New(rand.NewPCG(uint64(si*10+di), uint64(w))))
				}()
			}
		}
	}
	// The elections write through Guard and Update (GuardSQL is Guard's
	// statement through another driver).
	for di, d := range doors(t, pool, db, store, "election") {
		if d.name == "GuardSQL" {
			continue
		}
		h := &pgHistory{kind: "election epochs", door: d, monotonic: true, start: start}
		histories = append(histories, h)
		for n := range pgWorkers {
			calls := &acquireCalls{h: h}
			c := sen.Client(t)
			c.AddHook(calls)
			e, err := election.New(goredisadapter.New(c), election.Config{
				Name: fmt.Sprintf("pg%d", di), NodeID: fmt.Sprintf("e%dn%d", di, n),
				TTL: electionTTL, RenewInterval: electionRenew, RetryInterval: electionRenew,
			})
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(100+di), uint64(n)))
				spawn := func(f func()) {
					wg.Add(1) // this goroutine is counted, so Add may race stop's Wait
					go func() { defer wg.Done(); f() }()
				}
				err := e.Run(runCtx, func(ctx context.Context, term election.Term) error {
					h.lead(runCtx, ctx, term, calls, fmt.Sprintf("e%dn%d", di, n), rng, spawn)
					return nil // resign: the next term goes to whoever wins
				})
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Errorf("election Run: %v", err)
				}
			}()
		}
	}
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			cancel()
			wg.Wait()
		}
	}
	defer stop()

	// Every history is under way before the first fault and makes progress
	// between faults, so that every failover cuts into running histories.
	progress := func(within time.Duration) {
		want := make([]int64, len(histories))
		for i, h := range histories {
			want[i] = h.writeN.Load() + 10
		}
		deadline := time.Now().Add(within)
		for i := 0; i < len(histories); {
			if histories[i].writeN.Load() >= want[i] {
				i++
				continue
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s through %s made no progress in %v after the last failover (%d writes)",
					histories[i].kind, histories[i].door.name, within, histories[i].writeN.Load())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	writes := func(kind string) int64 {
		var n int64
		for _, h := range histories {
			if h.kind == kind {
				n += h.writeN.Load()
			}
		}
		return n
	}
	enough := func(n int) bool {
		if n < pgFailovers {
			return false
		}
		for _, h := range histories {
			if h.monotonic && writes(h.kind) < pgMinWrites {
				return false
			}
		}
		return true
	}
	faults := []func(testing.TB) redistest.Failover{sen.Failover, sen.KillPrimary, sen.FreezePrimary}
	names := []string{"SENTINEL FAILOVER", "SIGKILL", "SIGSTOP"}
	kinds := map[string]int{}
	var took []time.Duration
	for n := 0; !enough(n); n++ {
		progress(20 * redistest.SentinelFailoverTimeout)
		fo := faults[n%len(faults)](t)
		kinds[names[n%len(names)]]++
		took = append(took, fo.Took)
	}
	progress(20 * redistest.SentinelFailoverTimeout)
	stop()

	slices.Sort(took)
	t.Logf("%d failovers %v in %v; fault to agreed new primary: median %v, max %v",
		len(took), kinds, time.Since(start).Round(time.Second), took[len(took)/2].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
	totals := map[string]pgFigures{}
	var order []string
	for _, h := range histories {
		f := h.analyse()
		t.Logf("%s through %s: %v; %d calls with no outcome (timeouts during faults, or cut short by the run's end)", h.kind, h.door.name, f, h.unknown.Load())
		if _, ok := totals[h.kind]; !ok {
			order = append(order, h.kind)
		}
		totals[h.kind] = totals[h.kind].add(f)
		if f.accepted == 0 {
			t.Errorf("%s through %s: no write was accepted", h.kind, h.door.name)
		}
		if h.monotonic && (f.stale != 0 || f.reissued != 0) {
			t.Errorf("%s through %s: %d stale writes accepted and %d tokens reissued, want 0 and 0", h.kind, h.door.name, f.stale, f.reissued)
		}
		// What PostgreSQL committed through a guard is the accepted writes
		// (and perhaps some whose outcome never came), their tokens never
		// going back in commit order, whatever the lock did.
		if h.door.committed != nil {
			tokens, err := h.door.committed(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(tokens) < f.accepted || int64(len(tokens)) > int64(f.accepted)+h.unknown.Load() {
				t.Errorf("%s through %s: %d writes committed, %d accepted and %d with no outcome", h.kind, h.door.name, len(tokens), f.accepted, h.unknown.Load())
			}
			for i := 1; i < len(tokens); i++ {
				if tokens[i] < tokens[i-1] {
					t.Errorf("%s through %s: committed token %d after %d", h.kind, h.door.name, tokens[i], tokens[i-1])
					break
				}
			}
		}
	}
	for _, kind := range order {
		t.Logf("%s, all doors: %v", kind, totals[kind])
	}
	for _, h := range histories {
		if h.monotonic && writes(h.kind) < pgMinWrites {
			t.Errorf("%s: %d writes, want at least %d", h.kind, writes(h.kind), pgMinWrites)
		}
	}
}

// pgHistory is what the holders (or the leaders) of one resource did.
type pgHistory struct {
	kind      string
	door      door
	monotonic bool
	start     time.Time

	mu       sync.Mutex
	holdings []pgHolding
	writes   []pgWrite
	writeN   atomic.Int64
	unknown  atomic.Int64 // acquires and writes whose outcome never came
}

type pgHolding struct {
	token     int64
	sent, got time.Duration // the acquire's call and reply, since the start
}

type pgWrite struct {
	holder     int
	sent, done time.Duration
	accepted   bool
	inLease    bool // sent before the holder's lease deadline (within its term)
}

func (h *pgHistory) since() time.Duration { return time.Since(h.start) }

func (h *pgHistory) hold(token int64, sent, got time.Duration) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holdings = append(h.holdings, pgHolding{token: token, sent: sent, got: got})
	return len(h.holdings) - 1
}

// write makes one fenced write for holder id and records its outcome.
func (h *pgHistory) write(ctx context.Context, id int, token int64, value string, inLease bool) {
	w := pgWrite{holder: id, sent: h.since(), inLease: inLease}
	wctx, cancel := context.WithTimeout(ctx, pgOpTimeout)
	err := h.door.write(wctx, token, value)
	cancel()
	w.done = h.since()
	switch {
	case err == nil:
		w.accepted = true
	case errors.Is(err, pgfence.ErrStale):
	default:
		// No outcome: a timeout during a fault, or the run's end cutting
		// the write short, when PostgreSQL may have committed it all the
		// same (seen once in a run: one commit more than the writes told
		// accepted, with none counted here).
		h.unknown.Add(1)
		return
	}
	h.mu.Lock()
	h.writes = append(h.writes, w)
	h.mu.Unlock()
	h.writeN.Add(1)
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// holder takes the lock again and again until ctx ends, and writes under it.
func (h *pgHistory) holder(ctx context.Context, l *lock.Locker, who string, rng *rand.Rand) {
	const name = "history"
	for seq := 0; ctx.Err() == nil; seq++ {
		ttl := time.Duration(50+rng.IntN(150)) * time.Millisecond
		sent := h.since()
		actx, cancel := context.WithTimeout(ctx, pgOpTimeout)
		lease, err := l.Acquire(actx, name, ttl)
		cancel()
		var held *lock.HeldError
		switch {
		case errors.As(err, &held):
			sleepCtx(ctx, min(held.TTL, 10*time.Millisecond)+time.Millisecond)
			continue
		case err != nil:
			if ctx.Err() == nil {
				h.unknown.Add(1)
			}
			sleepCtx(ctx, 10*time.Millisecond)
			continue
		}
		id := h.hold(lease.Token, sent, h.since())
		deadline := lease.Deadline(ttl / 5)
		writes := 1 + rng.IntN(8)
		// One holder in ten pauses past its lease (a GC pause, a slow
		// disk) before its last write: the stale writer fencing is for.
		overrun := rng.IntN(10) == 0
		for i := range writes {
			if i == writes-1 && overrun {
				if !sleepCtx(ctx, time.Until(lease.Deadline(0))+time.Duration(rng.IntN(int(ttl)))) {
					return
				}
			} else if time.Now().After(deadline) {
				break // a careful holder stops writing at its deadline
			}
			h.write(ctx, id, lease.Token, fmt.Sprintf("%s/%d/%d", who, seq, i), time.Now().Before(deadline))
		}
		if !overrun && rng.IntN(6) != 0 { // else the lease expires
			rctx, cancel := context.WithTimeout(ctx, pgOpTimeout)
			_, _ = l.Release(rctx, lease)
			cancel()
		}
	}
}

// lead is one term's work: a few writes under the term's epoch while the
// term lasts. One term in four then writes once more, a random time up to
// two TTLs after the term ended, as a leader that learns late that it no
// longer leads (a pause, a partition): the stale leader's write. ctx is
// the run's, termCtx the term's; later runs that last write on a goroutine
// of its own, started by spawn, after fn has returned.
func (h *pgHistory) lead(ctx, termCtx context.Context, term election.Term, calls *acquireCalls, who string, rng *rand.Rand, spawn func(func())) {
	c, ok := calls.find(term.Epoch)
	if !ok {
		// Each term's epoch is the reply of an acquire this node's client
		// made; without it the term cannot be ordered.
		h.unknown.Add(1)
		return
	}
	id := h.hold(term.Epoch, c.sent, c.got)
	for i := range 1 + rng.IntN(12) {
		if termCtx.Err() != nil {
			break
		}
		h.write(ctx, id, term.Epoch, fmt.Sprintf("%s/%d/%d", who, term.Epoch, i), true)
		sleepCtx(termCtx, time.Duration(rng.IntN(10))*time.Millisecond)
	}
	if rng.IntN(4) == 0 {
		pause := time.Duration(rng.Int64N(int64(2 * electionTTL)))
		spawn(func() {
			// fn has returned (or the term was lost): the term is over.
			if sleepCtx(ctx, pause) {
				h.write(ctx, id, term.Epoch, fmt.Sprintf("%s/%d late", who, term.Epoch), false)
			}
		})
	}
}

// acquireCalls records, on one elector's go-redis client, when each script
// call that answered a token (lock's acquire: every other script of lock
// answers 0, 1 or an array) was sent and when its reply came, go-redis'
// retries included: that is when the term with that epoch was acquired.
// goredisadapter sends every script call in a pipeline, even alone, so the
// pipeline hook sees them.
type acquireCalls struct {
	h     *pgHistory
	mu    sync.Mutex
	calls []acquireCall
}

type acquireCall struct {
	token     int64
	sent, got time.Duration
}

func (a *acquireCalls) DialHook(next redis.DialHook) redis.DialHook { return next }

func (a *acquireCalls) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (a *acquireCalls) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		sent := a.h.since()
		err := next(ctx, cmds)
		got := a.h.since()
		for _, cmd := range cmds {
			if name := cmd.Name(); name != "evalsha" && name != "eval" {
				continue
			}
			if c, ok := cmd.(*redis.Cmd); ok {
				if token, ok := c.Val().(int64); ok && token > 1 {
					a.mu.Lock()
					a.calls = append(a.calls, acquireCall{token: token, sent: sent, got: got})
					a.mu.Unlock()
				}
			}
		}
		return err
	}
}

// find returns the latest call that answered token.
func (a *acquireCalls) find(token int64) (acquireCall, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for i := len(a.calls) - 1; i >= 0; i-- {
		if a.calls[i].token == token {
			return a.calls[i], true
		}
	}
	return acquireCall{}, false
}

// pgFigures are what a history shows.
type pgFigures struct {
	holders, accepted, refused, refusedInLease int
	stale, reissued                            int
}

func (f pgFigures) add(g pgFigures) pgFigures {
	return pgFigures{f.holders + g.holders, f.accepted + g.accepted, f.refused + g.refused,
		f.refusedInLease + g.refusedInLease, f.stale + g.stale, f.reissued + g.reissued}
}

func (f pgFigures) String() string {
	return fmt.Sprintf("%d holders, %d writes accepted, %d refused (%d of them within the writer's lease), "+
		"%d stale writes accepted, %d tokens reissued (a later holder given a token not above an earlier one's)",
		f.holders, f.accepted, f.refused, f.refusedInLease, f.stale, f.reissued)
}

// analyse counts stale writes as package fence's failover histories do: a
// write by X accepted although it was sent after a write (accepted or
// refused) of a holder Y whose acquire was sent after X's acquire returned.
// With tokens that follow acquisition order it cannot happen: Y's attempt
// was either accepted (the mark is at least Y's token, above X's) or
// refused by a mark above Y's token. Both orders are real-time facts
// measured by one clock, so only certain staleness is counted.
func (h *pgHistory) analyse() pgFigures {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := pgFigures{holders: len(h.holdings)}
	type mark struct{ done, acquired time.Duration }
	var marks []mark
	for _, w := range h.writes {
		marks = append(marks, mark{w.done, h.holdings[w.holder].sent})
		if w.accepted {
			f.accepted++
		} else {
			f.refused++
			if w.inLease {
				f.refusedInLease++
			}
		}
	}
	sort.Slice(marks, func(i, j int) bool { return marks[i].done < marks[j].done })
	// latest[i]: the latest acquire among the writers of marks[:i+1].
	latest := make([]time.Duration, len(marks))
	for i, m := range marks {
		latest[i] = m.acquired
		if i > 0 {
			latest[i] = max(latest[i], latest[i-1])
		}
	}
	for _, w := range h.writes {
		if !w.accepted {
			continue
		}
		i := sort.Search(len(marks), func(i int) bool { return marks[i].done >= w.sent }) - 1
		if i >= 0 && latest[i] > h.holdings[w.holder].got {
			f.stale++
		}
	}
	// Reissue: Y acquired strictly after X returned, yet tY <= tX.
	byGot := slices.Clone(h.holdings)
	sort.Slice(byGot, func(i, j int) bool { return byGot[i].got < byGot[j].got })
	byCall := slices.Clone(h.holdings)
	sort.Slice(byCall, func(i, j int) bool { return byCall[i].sent < byCall[j].sent })
	var highest int64
	j := 0
	for _, y := range byCall {
		for j < len(byGot) && byGot[j].got < y.sent {
			highest = max(highest, byGot[j].token)
			j++
		}
		if y.token <= highest {
			f.reissued++
		}
	}
	return f
}

// The history's figures count only certain staleness. This checks the
// counting on hand-made histories, with no server: a write accepted after
// a later holder's write is stale, one whose send overlapped it is not.
func TestPostgresStaleCountSeesAWriteAcceptedAfterALaterHoldersWriteAndNothingElse(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	h := &pgHistory{}
	x := h.hold(7, ms(0), ms(1))   // X: acquired first
	y := h.hold(7, ms(10), ms(11)) // Y: strictly later, its token reissued
	h.writes = append(h.writes,
		pgWrite{holder: y, sent: ms(12), done: ms(13), accepted: true},
		pgWrite{holder: x, sent: ms(14), done: ms(15), accepted: true}, // X after Y wrote: stale
		pgWrite{holder: x, sent: ms(12), done: ms(16), accepted: true}) // sent before Y's write ended: not certain
	if f := h.analyse(); f.stale != 1 || f.reissued != 1 || f.accepted != 3 {
		t.Fatalf("figures %+v, want 1 stale, 1 reissued, 3 accepted", f)
	}
	// A later holder's refused write still makes an earlier holder's later
	// accepted write stale; overlapping acquires are not ordered.
	h = &pgHistory{}
	x = h.hold(8, ms(0), ms(5))
	y = h.hold(3, ms(4), ms(6)) // sent before X's acquire returned: not later
	z := h.hold(2, ms(20), ms(21))
	h.writes = append(h.writes,
		pgWrite{holder: y, sent: ms(7), done: ms(8), accepted: true},
		pgWrite{holder: x, sent: ms(9), done: ms(10), accepted: true},
		pgWrite{holder: z, sent: ms(22), done: ms(23), inLease: true},
		pgWrite{holder: x, sent: ms(24), done: ms(25), accepted: true})
	if f := h.analyse(); f.stale != 1 || f.reissued != 1 || f.refused != 1 || f.refusedInLease != 1 {
		t.Fatalf("figures %+v, want 1 stale (X after Z), 1 reissued (Z), 1 refused in lease", f)
	}
}

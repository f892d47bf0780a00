// Package pgfence makes PostgreSQL rows and transactions refuse writes from
// stale lock holders, using the fencing tokens of package lock (or any
// counter that only grows).
//
// Three tools, each one statement that compares and writes atomically:
//
//   - Store.Update is a fenced single-row write:
//     UPDATE … SET value = $v, fence_token = $t WHERE id = $id AND fence_token <= $t.
//     A refusal (*StaleError, matching ErrStale) is told apart from a
//     missing row (ErrNotFound) inside the same statement, with no race.
//   - Table.Update is the same on a table of yours: Store.Table names the
//     table, its id column and a token column you add; every name is
//     quoted, never interpolated.
//   - Store.Guard fences a whole transaction. Called first inside the
//     caller's transaction, it advances the resource's high-water row
//     (INSERT … ON CONFLICT DO UPDATE … WHERE stored <= new) or refuses, so
//     any set of writes in that transaction commits only under a token
//     that is not stale. On refusal it rolls the transaction back.
//
// Each works with pgx (Guard on a pgx.Tx, Update on a pool, connection or
// transaction) and with database/sql through pgx's stdlib driver
// (GuardSQL on a *sql.Tx, Table.UpdateSQL on a *sql.DB, *sql.Conn or
// *sql.Tx): two thin doors onto one implementation.
//
// Equal tokens are accepted: the current holder may write many times.
// WithHook receives every verdict and WithLogger logs the refusals; by
// default nothing is observed or logged.
//
// # Tables
//
// DDL holds the two CREATE TABLE statements (pgfence_rows for Update,
// pgfence_marks for Guard); put it in your migrations, or call
// Store.CreateTables. WithRowsTable and WithMarksTable choose other names,
// and Store.DDL gives the statements for them. A call on a database
// without the tables fails with ErrNoTable, whose message says so.
//
// # Isolation levels and serialization failures
//
// All three are correct under READ COMMITTED, REPEATABLE READ and
// SERIALIZABLE (the tests race 50 writers at each level and check the
// committed history, not just the final value). Under READ COMMITTED an
// overlapping writer of the same row or resource is waited for, then
// compared against. Under REPEATABLE READ and SERIALIZABLE PostgreSQL aborts
// the later one instead with SQLSTATE 40001 (serialization failure); a
// deadlock (40P01) can occur at any level when the caller's statements take
// locks in different orders. Such an error is not a fencing verdict: it
// says nothing about the token. The transaction is aborted; roll it back
// and run it again from BEGIN, guard first. This package's statements
// return it wrapped in ErrSerialization; IsSerializationFailure also
// recognises it from the caller's own statements in the same transaction.
//
// # What is not guaranteed
//
// Fencing orders writes; it does not detect staleness. A stale holder that
// writes before the new holder has written anything is accepted, because
// the database has not yet seen a higher token. Tokens are only as good as
// their counter: if the lock's counter is lost, tokens are reissued and a
// genuinely stale write is accepted. Only writes that go through Update,
// or through a transaction that called Guard, are fenced; a plain UPDATE
// elsewhere overwrites fenced rows without a word. A row's token and a
// resource's mark are separate: fence one resource with one of the two,
// and with the tokens of one lock name.
package pgfence

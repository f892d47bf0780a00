package pgfence

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
)

// Errors returned by this package. Match them with errors.Is: the errors
// returned wrap them with the id and, for database failures, the driver's
// error (reach it with errors.As and *pgconn.PgError). When a call's context
// ends, the error also matches context.Canceled or context.DeadlineExceeded.
var (
	// ErrNilDB is returned, without a round trip, for a nil database handle.
	ErrNilDB = errors.New("pgfence: nil database")
	// ErrInvalidOption is returned by New for an option with a bad value.
	ErrInvalidOption = errors.New("pgfence: invalid option")
	// ErrInvalidToken is returned, without a round trip, for a token < 1.
	ErrInvalidToken = errors.New("pgfence: invalid token")
	// ErrInvalidID is returned, without a round trip, for an empty row id or
	// resource name.
	ErrInvalidID = errors.New("pgfence: invalid id")
	// ErrStale is matched by the *StaleError returned when a token is lower
	// than the highest one accepted. The caller has been superseded and
	// should stop.
	ErrStale = errors.New("pgfence: token lower than the highest accepted")
	// ErrNotFound is returned by Update and Get when no row has the id. It
	// was named ErrNoRow before; fence.ErrNotFound is its sibling.
	ErrNotFound = errors.New("pgfence: not found")
	// ErrNoTable is returned when a table a statement uses does not exist
	// (SQLSTATE 42P01). The error says how to create it: for this package's
	// tables, Store.CreateTables, or DDL (Store.DDL for configured names) in
	// your migrations.
	ErrNoTable = errors.New("pgfence: table missing")
	// ErrInvalidTable is returned, without a round trip, by Store.Table
	// and Table.Update for a bad table or column name.
	ErrInvalidTable = errors.New("pgfence: invalid table")
	// ErrExists is returned by Insert when a row already has the id.
	ErrExists = errors.New("pgfence: row already exists")
	// ErrSerialization wraps a serialization failure (SQLSTATE 40001) or a
	// deadlock (40P01) raised by one of this package's statements. It is not
	// a fencing verdict: the transaction could not be ordered against a
	// concurrent one and has been aborted. Roll it back and run the whole
	// transaction again, from BEGIN, guard first. See IsSerializationFailure.
	ErrSerialization = errors.New("pgfence: serialization failure, retry the whole transaction")
)

// StaleError is the error a refused write returns. It carries the token the
// write carried and the highest token already accepted for the row or
// resource.
type StaleError struct {
	ID      string // the row id (Update) or resource name (Guard)
	Token   int64  // the token the write carried
	Highest int64  // the highest token accepted before it: > Token (0 if it could not be read)
}

func (e *StaleError) Error() string {
	return fmt.Sprintf("%s: %q: token %d, highest accepted %d", ErrStale, e.ID, e.Token, e.Highest)
}

// Is makes errors.Is(err, ErrStale) true.
func (e *StaleError) Is(target error) bool { return target == ErrStale }

// IsSerializationFailure reports whether err means "retry the whole
// transaction": ErrSerialization from this package, or a serialization
// failure (40001) or deadlock (40P01) raised by any statement of the
// caller's own in the same transaction. Under REPEATABLE READ and
// SERIALIZABLE these are expected whenever writers of one resource overlap;
// the fence still holds, and the retry gets a fresh snapshot and a fresh
// verdict.
func IsSerializationFailure(err error) bool {
	if errors.Is(err, ErrSerialization) {
		return true
	}
	var pg *pgconn.PgError
	return errors.As(err, &pg) && (pg.Code == "40001" || pg.Code == "40P01")
}

// undefinedTable is the SQLSTATE of a statement on a table that does not
// exist.
const undefinedTable = "42P01"

// noTableHint tells a caller whose tables are missing how to create them.
const noTableHint = "create the tables with Store.CreateTables, or put pgfence.DDL (Store.DDL for configured names) in your migrations"

// wrap adds context to a driver error, and ErrSerialization or ErrNoTable
// when it is one.
func wrap(op, id string, err error) error { return wrapHint(op, id, noTableHint, err) }

// wrapHint is wrap with the advice ErrNoTable gives.
func wrapHint(op, id, hint string, err error) error {
	var pg *pgconn.PgError
	if errors.As(err, &pg) && pg.Code == undefinedTable {
		return fmt.Errorf("%w: %s %q: %s: %w", ErrNoTable, op, id, hint, err)
	}
	if IsSerializationFailure(err) {
		return fmt.Errorf("pgfence: %s %q: %w: %w", op, id, ErrSerialization, err)
	}
	return fmt.Errorf("pgfence: %s %q: %w", op, id, err)
}

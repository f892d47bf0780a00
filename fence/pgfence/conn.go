package pgfence

import (
	"context"
	"database/sql"
	"errors"
	"reflect"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DB is what this package needs of a pgx connection. *pgxpool.Pool,
// *pgx.Conn and pgx.Tx satisfy it, so the row operations run on their own
// or inside the caller's transaction.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// SQLDB is what this package needs of a database/sql handle: *sql.DB,
// *sql.Conn and *sql.Tx satisfy it. Open the database with pgx's stdlib
// driver (github.com/jackc/pgx/v5/stdlib, part of pgx): its errors are the
// *pgconn.PgError that IsSerializationFailure and ErrNoTable recognise.
// With another driver the fence holds all the same, but those errors come
// back unclassified.
type SQLDB interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// querier is the one thing the statements need of a connection, whichever
// door it came through: a query that returns at most one row.
type querier interface {
	queryRow(ctx context.Context, sql string, args ...any) row
}

type row interface{ Scan(dest ...any) error }

// pgxDoor and sqlDoor are the two thin doors: pgx and database/sql.
type (
	pgxDoor struct{ db DB }
	sqlDoor struct{ db SQLDB }
)

func (d pgxDoor) queryRow(ctx context.Context, sql string, args ...any) row {
	return d.db.QueryRow(ctx, sql, args...)
}

func (d sqlDoor) queryRow(ctx context.Context, sql string, args ...any) row {
	return d.db.QueryRowContext(ctx, sql, args...)
}

// isNoRows reports the "no row" of either door.
func isNoRows(err error) bool {
	return errors.Is(err, pgx.ErrNoRows) || errors.Is(err, sql.ErrNoRows)
}

// isNil catches a typed nil pointer in the interface too (a nil *pgx.Conn,
// *pgxpool.Pool or *sql.Tx), which would otherwise panic on the first call.
func isNil(db any) bool {
	if db == nil {
		return true
	}
	v := reflect.ValueOf(db)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

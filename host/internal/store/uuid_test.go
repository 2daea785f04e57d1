package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// TestUUIDsTravelAsBinary: the host's pools read uuid.UUID in binary, not through
// uuid.UUID's Scan, and read what they did before: NULL is uuid.Nil in a
// uuid.UUID and nil in a *uuid.UUID, arrays and untyped reads hold uuid.UUID.
func TestUUIDsTravelAsBinary(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t) // its pool is prepared by store.AfterConnect
	ctx := context.Background()
	a, b := uuid.New(), uuid.New()

	conn, err := pool.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	var u uuid.UUID
	plan := conn.Conn().TypeMap().PlanScan(2950, pgx.BinaryFormatCode, &u)
	require.Contains(t, fmtType(plan), "scanUUID", "a direct plan, not the sql.Scanner")

	var got, null uuid.UUID
	var nullPtr, somePtr *uuid.UUID
	var list []uuid.UUID
	var untyped any
	null = a // overwritten by the NULL
	require.NoError(t, pool.QueryRow(ctx, `SELECT $1::uuid, NULL::uuid, NULL::uuid, $1::uuid, ARRAY[$1::uuid, $2::uuid], $2::uuid`, a, b).
		Scan(&got, &null, &nullPtr, &somePtr, &list, &untyped))
	require.Equal(t, a, got)
	require.Equal(t, uuid.Nil, null)
	require.Nil(t, nullPtr)
	require.Equal(t, a, *somePtr)
	require.Equal(t, []uuid.UUID{a, b}, list)
	require.Equal(t, b, untyped)

	var text string
	require.NoError(t, pool.QueryRow(ctx, `SELECT $1::uuid::text`, a).Scan(&text))
	require.Equal(t, a.String(), text, "parameters arrive intact")
	var many int
	require.NoError(t, pool.QueryRow(ctx, `SELECT cardinality($1::uuid[])`, []uuid.UUID{a, b, a}).Scan(&many))
	require.Equal(t, 3, many)
}

func fmtType(v any) string { return fmt.Sprintf("%T", v) }

package store

import (
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
	pgxuuid "github.com/vgarvardt/pgx-google-uuid/v5"
)

// registerUUID makes pgx send and read uuid.UUID in PostgreSQL's binary form.
// pgx-google-uuid covers parameters. For reads, pgx asks the uuid codec for a
// plan before it looks for a sql.Scanner, and only after a sql.Scanner for the
// package's wrapper: without uuidCodec every uuid read went through uuid.UUID's
// Scan, as text parsed again (40% of reading a due card).
func registerUUID(m *pgtype.Map) {
	pgxuuid.Register(m)
	m.RegisterType(&pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}})
}

// uuidCodec is pgx-google-uuid's codec with a direct plan for *uuid.UUID.
type uuidCodec struct{ pgxuuid.UUIDCodec }

func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	if _, ok := target.(*uuid.UUID); ok {
		if next := c.UUIDCodec.PlanScan(m, oid, format, new(nullAsNil)); next != nil {
			return scanUUID{next}
		}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

type scanUUID struct{ next pgtype.ScanPlan }

func (p scanUUID) Scan(src []byte, dst any) error {
	return p.next.Scan(src, (*nullAsNil)(dst.(*uuid.UUID)))
}

// nullAsNil reads a uuid as uuid.UUID's Scan does: NULL is uuid.Nil.
type nullAsNil uuid.UUID

func (u *nullAsNil) ScanUUID(v pgtype.UUID) error {
	if !v.Valid {
		*u = nullAsNil{}
		return nil
	}
	*u = v.Bytes
	return nil
}

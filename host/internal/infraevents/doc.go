// Package infraevents ingests infrastructure log events shipped to POST
// /infra-events (SPEC "Endpoints", Events 5) and keeps them for a week. It owns the
// infra_events table: rows that belong to no user (docs/decisions.md, "system_events
// is per user; infrastructure events go to infra_events").
//
// The caller is a log-shipping sidecar, authenticated by the auth.InfraKey resolver
// (INFRA_INGEST_KEY in X-Infra-Ingest-Key, compared in constant time, from a source
// address inside INFRA_INGEST_ALLOWED_CIDRS). There is no replay or nonce
// protection: a captured request can be sent again, and its events are stored again
// (docs/operations.md, "Infrastructure events").
package infraevents

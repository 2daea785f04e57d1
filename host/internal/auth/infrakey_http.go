package auth

import (
	"net/http"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/httpx"
)

// HeaderInfraKey carries INFRA_INGEST_KEY on POST /infra-events (SPEC leaves the
// name open; docs/decisions.md, "Operations").
const HeaderInfraKey = "X-Infra-Ingest-Key"

// checkInfraKey is the InfraKey resolver. The source address is checked first,
// through the same X-Forwarded-For trust as the owner override, so an address
// outside INFRA_INGEST_ALLOWED_CIDRS (empty by default: everyone) learns nothing
// about the key. Then the key, compared in constant time; a host without one
// refuses every caller. The ops key is no substitute.
func (s *Service) checkInfraKey(r *http.Request) *httpx.Error {
	if !inPrefixes(ClientIP(r.Context()), s.cfg.InfraIngestAllowedCIDRs) {
		return httpx.Forbidden("source_not_allowed", "This address may not send infrastructure events (INFRA_INGEST_ALLOWED_CIDRS).")
	}
	given := r.Header.Get(HeaderInfraKey)
	if !s.cfg.InfraIngestKey.IsSet() {
		return httpx.Unauthorized("infra_key_not_configured", "INFRA_INGEST_KEY is not configured on this host, so it takes no infrastructure events.")
	}
	if given == "" {
		return httpx.Unauthorized("missing_infra_key", "Send the ingest key in "+HeaderInfraKey+".")
	}
	if !keysEqual(given, s.cfg.InfraIngestKey.Value()) {
		s.record(r, uuid.Nil, audit.ActionAPIKeyInvalid, map[string]any{"header": HeaderInfraKey})
		return httpx.Unauthorized("invalid_infra_key", "The "+HeaderInfraKey+" value is not valid.")
	}
	return nil
}

package app

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/users"
)

// TestOnboardingRefusesAForwardedClient: a loopback peer that forwards someone
// else's request (X-Forwarded-For: 203.0.113.5:4444, which does not parse) cannot
// create the first admin, whether loopback is a trusted proxy or not, and no
// account is created.
func TestOnboardingRefusesAForwardedClient(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		trusted string
	}{
		{"loopback trusted", "127.0.0.1,::1"},
		{"loopback not trusted", "dashboard"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, map[string]string{"TRUSTED_PROXY_HOSTS": tc.trusted})
			for _, xff := range []string{"203.0.113.5:4444", "203.0.113.5", "unix:/x", "garbage", ""} {
				rec := b.do(t, req{method: http.MethodPost, path: "/api/onboarding/admin", remote: loopbackAddr,
					body: map[string]string{"email": "root@example.org"}, headers: map[string]string{"X-Forwarded-For": xff}})
				require.Equal(t, http.StatusForbidden, rec.Code, "X-Forwarded-For %q: %s", xff, rec.Body.String())
				require.Equal(t, "onboarding_not_local", errorCode(t, rec))
			}
			n, err := users.Count(context.Background(), b.pool)
			require.NoError(t, err)
			require.Zero(t, n, "no account was created")

			// The same peer without forwarding, the machine itself, may.
			rec := b.do(t, req{method: http.MethodPost, path: "/api/onboarding/admin", remote: loopbackAddr,
				body: map[string]string{"email": "root@example.org"}})
			require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
		})
	}
}

// TestOnboardingThroughATrustedLoopbackProxy: a proxy on this machine that is
// trusted passes on a local browser as local and a remote one as remote.
func TestOnboardingThroughATrustedLoopbackProxy(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"TRUSTED_PROXY_HOSTS": "127.0.0.1"})
	body := map[string]string{"email": "root@example.org"}
	rec := b.do(t, req{method: http.MethodPost, path: "/api/onboarding/admin", remote: loopbackAddr, body: body,
		headers: map[string]string{"X-Forwarded-For": "127.0.0.1, 203.0.113.5"}})
	require.Equal(t, http.StatusForbidden, rec.Code, "a forged loopback entry left of the real client is not read")
	rec = b.do(t, req{method: http.MethodPost, path: "/api/onboarding/admin", remote: loopbackAddr, body: body,
		headers: map[string]string{"X-Forwarded-For": "127.0.0.1"}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
}

// TestOwnerOverrideRefusesUnparsableForwarding: behind a trusted proxy on the
// allowlist, an X-Forwarded-For hop that does not parse is the client, and it is
// not inside OWNER_OVERRIDE_ALLOWED_CIDRS (the proxy's own address is).
func TestOwnerOverrideRefusesUnparsableForwarding(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"TRUSTED_PROXY_HOSTS": "127.0.0.1,::1"})
	ann := b.user(t, "ann@example.org", "user")
	headers := func(xff string) map[string]string {
		return map[string]string{"X-API-Key": testOpsKey, "X-Owner-User-Id": ann.ID.String(), "X-Forwarded-For": xff}
	}
	code, _ := b.me(t, req{headers: headers("127.0.0.1"), remote: loopbackAddr})
	require.Equal(t, http.StatusOK, code, "control: a loopback client through the loopback proxy passes")
	for _, xff := range []string{"unix:/x", "[::1]:80", "127.0.0.1:80", "garbage", "", " , ", "203.0.113.5, , 127.0.0.1", "unix:/x, 127.0.0.1"} {
		code, body := b.me(t, req{headers: headers(xff), remote: loopbackAddr})
		require.Equal(t, http.StatusForbidden, code, "X-Forwarded-For %q: %v", xff, body)
	}
}

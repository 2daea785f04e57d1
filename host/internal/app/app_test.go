package app

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"io/fs"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/config"
	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/mail"
	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/host/internal/store"
	"github.com/lectern-research/lectern/host/internal/users"
	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/source"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

const (
	testOpsKey    = "4f9c2a7e1b8d3f6a0c5e9b2d7f1a4c8e3b6d0f9a"
	testConfigKey = "a7c1e9f3b5d2a8c4e6f0b1d9c3a5e7f2b4d6c8e0"
	remoteAddr    = "198.51.100.7:40000"
	loopbackAddr  = "127.0.0.1:40000"
)

// mailbox captures what the host sends.
type mailbox struct {
	mu   sync.Mutex
	msgs []mail.Message
	got  chan struct{}
}

func newMailbox() *mailbox { return &mailbox{got: make(chan struct{}, 100)} }

func (m *mailbox) Send(_ context.Context, msg mail.Message) error {
	m.mu.Lock()
	m.msgs = append(m.msgs, msg)
	m.mu.Unlock()
	m.got <- struct{}{}
	return nil
}

// next waits for the next message.
func (m *mailbox) next(t *testing.T) mail.Message {
	t.Helper()
	select {
	case <-m.got:
	case <-time.After(5 * time.Second):
		t.Fatal("no mail within 5 s")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.msgs[len(m.msgs)-1]
}

type testBundle struct {
	jobs *jobs.Service
	app  *App
	pool *pgxpool.Pool
	mail *mailbox
	logs *syncBuffer
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// setup builds the whole host on a fresh database. env overrides the defaults (the
// ops key and a config key set, mail captured); a value "<unset>" removes a default.
func setup(t testing.TB, env map[string]string) *testBundle {
	t.Helper()
	return setupWith(t, env, nil)
}

// setupWith is setup with a last say on the options.
func setupWith(t testing.TB, env map[string]string, adjust func(*Options)) *testBundle {
	t.Helper()
	vars := map[string]string{
		"SERVICE_API_KEY":    testOpsKey,
		"SERVICE_CONFIG_KEY": testConfigKey,
		"PUBLIC_BASE_URL":    "http://lectern.test",
		"LECTERN_DATA_DIR":   t.TempDir(),
	}
	for k, v := range env {
		if v == "<unset>" {
			delete(vars, k)
		} else {
			vars[k] = v
		}
	}
	cfg, err := config.Load(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
	require.NoError(t, err)
	pool := dbtest.NewDB(t)
	migs, err := store.EmbeddedMigrations()
	require.NoError(t, err)
	logs := &syncBuffer{}
	box := newMailbox()
	opts := Options{
		Config: cfg, Pool: pool, Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		Migrator: store.NewMigrator(pool, migs), Version: "test", Mail: box,
		Sources: func() []search.Named { return []search.Named{{Name: "arxiv", Searcher: staticSource{}}} },
	}
	if cfg.DevSMTPLogOnly {
		opts.Mail = nil
	}
	if adjust != nil {
		adjust(&opts)
	}
	// The queue is built but not started: the API reads and writes its rows,
	// no worker runs (the jobs package tests the workers).
	a, err := Build(context.Background(), opts)
	require.NoError(t, err)
	t.Cleanup(a.Close)
	return &testBundle{app: a, pool: pool, mail: box, logs: logs, jobs: a.Jobs}
}

// staticSource answers every search with one fixed public paper.
type staticSource struct{}

func (staticSource) Search(context.Context, *source.SearchRequest) (*source.Page, error) {
	return &source.Page{Papers: []paper.Paper{{Title: "A fixed search result from the static source",
		IDs: paper.IDs{ArXivID: "2401.00001v1"}, Published: paper.Date{Year: 2024, Precision: paper.PrecisionYear}}}}, nil
}

// upload is a multipart body with one file in the field "file".
type upload struct {
	name    string
	content []byte
}

// req describes one request.
type req struct {
	method, path string
	body         any
	cookie       string // session cookie value
	headers      map[string]string
	remote       string
}

func (b *testBundle) do(t testing.TB, r req) *httptest.ResponseRecorder {
	t.Helper()
	var body io.Reader
	contentType := "application/json"
	switch v := r.body.(type) {
	case nil:
	case upload:
		var buf bytes.Buffer
		mw := multipart.NewWriter(&buf)
		fw, err := mw.CreateFormFile("file", v.name)
		require.NoError(t, err)
		_, err = fw.Write(v.content)
		require.NoError(t, err)
		require.NoError(t, mw.Close())
		body, contentType = &buf, mw.FormDataContentType()
	case string: // a raw body, such as a BibTeX file
		body, contentType = strings.NewReader(v), "text/plain"
	default:
		raw, err := json.Marshal(v)
		require.NoError(t, err)
		body = bytes.NewReader(raw)
	}
	hr := httptest.NewRequest(r.method, r.path, body)
	if r.body != nil {
		hr.Header.Set("Content-Type", contentType)
	}
	hr.RemoteAddr = remoteAddr
	if r.remote != "" {
		hr.RemoteAddr = r.remote
	}
	if r.cookie != "" {
		hr.AddCookie(&http.Cookie{Name: "service_session", Value: r.cookie})
	}
	for k, v := range r.headers {
		hr.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	b.app.Handler.ServeHTTP(rec, hr)
	return rec
}

func errorCode(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var body struct{ Code string }
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &body), rec.Body.String())
	return body.Code
}

func sessionCookie(t *testing.T, rec *httptest.ResponseRecorder) *http.Cookie {
	t.Helper()
	for _, c := range rec.Result().Cookies() {
		if c.Name == "service_session" {
			return c
		}
	}
	t.Fatalf("no service_session cookie in %v", rec.Header())
	return nil
}

func (b *testBundle) user(t testing.TB, email, role string) users.User {
	t.Helper()
	u, err := users.Create(context.Background(), b.pool, email, role)
	require.NoError(t, err)
	return u
}

// signIn runs the whole magic-link flow and returns the session cookie value.
func (b *testBundle) signIn(t *testing.T, email string) string {
	t.Helper()
	rec := b.do(t, req{method: http.MethodPost, path: "/api/auth/magic-link", body: map[string]string{"email": email}})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	msg := b.mail.next(t)
	require.Equal(t, email, msg.To)
	link := msg.LogFields["magic_link"]
	require.Contains(t, msg.Body, link)
	u, err := url.Parse(link)
	require.NoError(t, err)
	rec = b.do(t, req{method: http.MethodGet, path: u.RequestURI()})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	return sessionCookie(t, rec).Value
}

func (b *testBundle) me(t *testing.T, r req) (int, map[string]any) {
	t.Helper()
	r.method, r.path = http.MethodGet, "/api/me"
	rec := b.do(t, r)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

func (b *testBundle) auditActions(t *testing.T) []string {
	t.Helper()
	rows, err := b.pool.Query(context.Background(), `SELECT action FROM audit_log ORDER BY id`)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var a string
		require.NoError(t, rows.Scan(&a))
		out = append(out, a)
	}
	return out
}

func TestMagicLinkSignIn(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ann := b.user(t, "ann@example.org", "user")

	rec := b.do(t, req{method: http.MethodPost, path: "/api/auth/magic-link", body: map[string]string{"email": "Ann@Example.org"}})
	require.Equal(t, http.StatusAccepted, rec.Code)
	msg := b.mail.next(t)
	require.Equal(t, "ann@example.org", msg.To)
	link, err := url.Parse(msg.LogFields["magic_link"])
	require.NoError(t, err)
	require.Equal(t, "lectern.test", link.Host)
	token := link.Query().Get("token")
	require.Len(t, token, 43)

	var stored int
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM magic_link_tokens WHERE token_hash = sha256($1::bytea)`, []byte(token)).Scan(&stored))
	require.Equal(t, 1, stored, "the token is stored as its SHA-256 digest")
	var plain int
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM magic_link_tokens WHERE encode(token_hash, 'escape') LIKE '%' || $1 || '%'`, token).Scan(&plain))
	require.Zero(t, plain, "never in plain")

	rec = b.do(t, req{method: http.MethodGet, path: link.RequestURI()})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	c := sessionCookie(t, rec)
	require.True(t, c.HttpOnly)
	require.Equal(t, http.SameSiteLaxMode, c.SameSite)
	require.False(t, c.Secure, "plain HTTP development")
	require.InDelta(t, (30 * 24 * time.Hour).Seconds(), float64(c.MaxAge), 5)

	code, me := b.me(t, req{cookie: c.Value})
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, ann.ID.String(), me["id"])
	require.Equal(t, "ann@example.org", me["email"])
	require.Equal(t, "user", me["role"])

	rec = b.do(t, req{method: http.MethodGet, path: link.RequestURI()})
	require.Equal(t, http.StatusBadRequest, rec.Code, "a link works once")
	require.Equal(t, "invalid_token", errorCode(t, rec))

	rec = b.do(t, req{method: http.MethodPost, path: "/api/auth/logout", cookie: c.Value})
	require.Equal(t, http.StatusNoContent, rec.Code)
	code, _ = b.me(t, req{cookie: c.Value})
	require.Equal(t, http.StatusUnauthorized, code, "logout revokes the session")

	actions := b.auditActions(t)
	require.Contains(t, actions, "auth.magic_link.request")
	require.Contains(t, actions, "auth.magic_link.verify")
	require.Contains(t, actions, "auth.magic_link.rejected")
}

func TestMagicLinkDoesNotTellWhoHasAnAccount(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	gone := b.user(t, "gone@example.org", "user")
	_, err := users.SoftDelete(context.Background(), b.pool, gone.ID)
	require.NoError(t, err)

	known := b.do(t, req{method: http.MethodPost, path: "/api/auth/magic-link", body: map[string]string{"email": "nobody@example.org"}})
	deleted := b.do(t, req{method: http.MethodPost, path: "/api/auth/magic-link", body: map[string]string{"email": "gone@example.org"}})
	require.Equal(t, http.StatusAccepted, known.Code)
	require.Equal(t, known.Body.String(), deleted.Body.String())

	var n int
	require.NoError(t, b.pool.QueryRow(context.Background(), `SELECT count(*) FROM magic_link_tokens`).Scan(&n))
	require.Zero(t, n, "no link for an unknown or deleted address")

	rec := b.do(t, req{method: http.MethodPost, path: "/api/auth/magic-link", body: map[string]string{"email": "not an address"}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
}

func TestMagicLinkExpires(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ann := b.user(t, "ann@example.org", "user")
	token := "expired-token-0123456789abcdefghij"
	_, err := b.pool.Exec(context.Background(), `
		INSERT INTO magic_link_tokens (token_hash, user_id, created_at, expires_at)
		VALUES (sha256($1::bytea), $2, now() - interval '20 minutes', now() - interval '5 minutes')`, []byte(token), ann.ID)
	require.NoError(t, err)
	rec := b.do(t, req{method: http.MethodGet, path: "/api/auth/verify?token=" + token})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	require.Equal(t, "invalid_token", errorCode(t, rec))
}

func TestMagicLinkGoesToTheLogWithDevSMTPLogOnly(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"DEV_SMTP_LOG_ONLY": "true"})
	b.user(t, "ann@example.org", "user")
	rec := b.do(t, req{method: http.MethodPost, path: "/api/auth/magic-link", body: map[string]string{"email": "ann@example.org"}})
	require.Equal(t, http.StatusAccepted, rec.Code)

	deadline := time.Now().Add(5 * time.Second)
	var link string
	for link == "" && time.Now().Before(deadline) {
		for _, line := range strings.Split(b.logs.String(), "\n") {
			var entry map[string]any
			if json.Unmarshal([]byte(line), &entry) == nil {
				if l, ok := entry["magic_link"].(string); ok {
					link = l
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.Regexp(t, `^http://lectern\.test/api/auth/verify\?token=[A-Za-z0-9_-]{43}$`, link)
	u, err := url.Parse(link)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, b.do(t, req{method: http.MethodGet, path: u.RequestURI()}).Code)
}

func TestVerifyRedirectsBrowsers(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ann := b.user(t, "ann@example.org", "user")
	require.NoError(t, b.app.Auth.SendSignInLink(context.Background(), ann, "sign_in"))
	link, err := url.Parse(b.mail.next(t).LogFields["magic_link"])
	require.NoError(t, err)
	rec := b.do(t, req{method: http.MethodGet, path: link.RequestURI(), headers: map[string]string{"Accept": "text/html,application/xhtml+xml"}})
	require.Equal(t, http.StatusSeeOther, rec.Code)
	require.Equal(t, "http://lectern.test/", rec.Header().Get("Location"))
	sessionCookie(t, rec)
}

// insertSession stores a session expiring at expires and returns its cookie value.
func (b *testBundle) insertSession(t testing.TB, userID uuid.UUID, expires time.Time) string {
	t.Helper()
	token := uuid.NewString() + uuid.NewString()
	_, err := b.pool.Exec(context.Background(), `
		INSERT INTO user_sessions (user_id, token_hash, expires_at) VALUES ($1, sha256($2::bytea), $3)`,
		userID, []byte(token), expires)
	require.NoError(t, err)
	return token
}

func (b *testBundle) sessionExpiry(t *testing.T, token string) time.Time {
	t.Helper()
	var exp time.Time
	require.NoError(t, b.pool.QueryRow(context.Background(),
		`SELECT expires_at FROM user_sessions WHERE token_hash = sha256($1::bytea)`, []byte(token)).Scan(&exp))
	return exp
}

func TestSessionGraceWindow(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ann := b.user(t, "ann@example.org", "user")
	now := time.Now()

	inGrace := b.insertSession(t, ann.ID, now.Add(-23*time.Hour))
	before := b.sessionExpiry(t, inGrace)
	code, me := b.me(t, req{cookie: inGrace})
	require.Equal(t, http.StatusOK, code, "23 h past expiry still resolves")
	require.Equal(t, ann.ID.String(), me["id"])
	require.True(t, before.Equal(b.sessionExpiry(t, inGrace)), "and its expiry is not renewed")

	pastGrace := b.insertSession(t, ann.ID, now.Add(-25*time.Hour))
	code, _ = b.me(t, req{cookie: pastGrace})
	require.Equal(t, http.StatusUnauthorized, code, "25 h past expiry does not")

	revoked := b.insertSession(t, ann.ID, now.Add(time.Hour))
	_, err := b.pool.Exec(context.Background(), `UPDATE user_sessions SET revoked_at = now() WHERE token_hash = sha256($1::bytea)`, []byte(revoked))
	require.NoError(t, err)
	code, _ = b.me(t, req{cookie: revoked})
	require.Equal(t, http.StatusUnauthorized, code, "a revoked session fails at once")

	bob := b.user(t, "bob@example.org", "user")
	bobInGrace := b.insertSession(t, bob.ID, now.Add(-time.Hour))
	bobLive := b.insertSession(t, bob.ID, now.Add(time.Hour))
	_, err = b.pool.Exec(context.Background(), `UPDATE users SET deleted_at = now() WHERE id = $1`, bob.ID)
	require.NoError(t, err)
	for _, tok := range []string{bobInGrace, bobLive} {
		code, _ = b.me(t, req{cookie: tok})
		require.Equal(t, http.StatusUnauthorized, code, "a deleted user's session fails, grace or not")
	}
}

func TestSessionRenewal(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ann := b.user(t, "ann@example.org", "user")

	fresh := b.insertSession(t, ann.ID, time.Now().Add(30*24*time.Hour-time.Hour))
	before := b.sessionExpiry(t, fresh)
	rec := b.do(t, req{method: http.MethodGet, path: "/api/me", cookie: fresh})
	require.Equal(t, http.StatusOK, rec.Code)
	require.True(t, before.Equal(b.sessionExpiry(t, fresh)), "renewed at most once a day")
	require.Empty(t, rec.Result().Cookies())

	aging := b.insertSession(t, ann.ID, time.Now().Add(10*24*time.Hour))
	rec = b.do(t, req{method: http.MethodGet, path: "/api/me", cookie: aging})
	require.Equal(t, http.StatusOK, rec.Code)
	require.WithinDuration(t, time.Now().Add(30*24*time.Hour), b.sessionExpiry(t, aging), time.Minute, "a used session rolls forward")
	require.Equal(t, aging, sessionCookie(t, rec).Value)
}

func TestOpsKeyAndOwnerOverrideOnMe(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ann := b.user(t, "ann@example.org", "user")
	gone := b.user(t, "gone@example.org", "user")
	_, err := users.SoftDelete(context.Background(), b.pool, gone.ID)
	require.NoError(t, err)

	cases := []struct {
		name    string
		headers map[string]string
		remote  string
		want    int
		wantID  string
	}{
		{"ops key alone", map[string]string{"X-API-Key": testOpsKey}, loopbackAddr, 401, ""},
		{"override of a live user from loopback", map[string]string{"X-API-Key": testOpsKey, "X-Owner-User-Id": ann.ID.String()}, loopbackAddr, 200, ann.ID.String()},
		{"override from IPv6 loopback", map[string]string{"X-API-Key": testOpsKey, "X-Owner-User-Id": ann.ID.String()}, "[::1]:40000", 200, ann.ID.String()},
		{"unknown user", map[string]string{"X-API-Key": testOpsKey, "X-Owner-User-Id": uuid.NewString()}, loopbackAddr, 403, ""},
		{"malformed user id", map[string]string{"X-API-Key": testOpsKey, "X-Owner-User-Id": "1 OR 1=1"}, loopbackAddr, 403, ""},
		{"deleted user", map[string]string{"X-API-Key": testOpsKey, "X-Owner-User-Id": gone.ID.String()}, loopbackAddr, 403, ""},
		{"wrong key", map[string]string{"X-API-Key": testOpsKey + "0", "X-Owner-User-Id": ann.ID.String()}, loopbackAddr, 403, ""},
		{"no key", map[string]string{"X-Owner-User-Id": ann.ID.String()}, loopbackAddr, 403, ""},
		{"source outside the allowlist", map[string]string{"X-API-Key": testOpsKey, "X-Owner-User-Id": ann.ID.String()}, remoteAddr, 403, ""},
		{"forwarded-for from an untrusted peer is ignored", map[string]string{"X-API-Key": testOpsKey, "X-Owner-User-Id": ann.ID.String(), "X-Forwarded-For": "127.0.0.1"}, remoteAddr, 403, ""},
		{"nothing", nil, loopbackAddr, 401, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			code, body := b.me(t, req{headers: tc.headers, remote: tc.remote})
			require.Equal(t, tc.want, code, body)
			if tc.wantID != "" {
				require.Equal(t, tc.wantID, body["id"])
			}
		})
	}
}

func TestOwnerOverrideBehindATrustedProxy(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"TRUSTED_PROXY_HOSTS": "10.9.0.0/24"})
	ann := b.user(t, "ann@example.org", "user")
	headers := func(xff string) map[string]string {
		return map[string]string{"X-API-Key": testOpsKey, "X-Owner-User-Id": ann.ID.String(), "X-Forwarded-For": xff}
	}
	code, _ := b.me(t, req{headers: headers("127.0.0.1"), remote: "10.9.0.5:1234"})
	require.Equal(t, http.StatusOK, code, "the proxy says the client is loopback")
	code, _ = b.me(t, req{headers: headers("198.51.100.20"), remote: "10.9.0.5:1234"})
	require.Equal(t, http.StatusForbidden, code, "the proxy says the client is remote")
	code, _ = b.me(t, req{headers: headers("127.0.0.1, 198.51.100.20"), remote: "10.9.0.5:1234"})
	require.Equal(t, http.StatusForbidden, code, "a client cannot forge the left of the chain")
}

func TestOnboardingWorksOnce(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	body := map[string]string{"email": "root@example.org"}
	needed := func() string {
		rec := b.do(t, req{method: http.MethodGet, path: "/api/onboarding"})
		require.Equal(t, http.StatusOK, rec.Code)
		return strings.TrimSpace(rec.Body.String())
	}
	require.Equal(t, `{"needed":true}`, needed(), "a fresh instance asks for onboarding")

	rec := b.do(t, req{method: http.MethodPost, path: "/api/onboarding/admin", body: body})
	require.Equal(t, http.StatusForbidden, rec.Code, "not from a remote address without the ops key")
	require.Equal(t, `{"needed":true}`, needed())

	rec = b.do(t, req{method: http.MethodPost, path: "/api/onboarding/admin", body: body, remote: loopbackAddr})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	c := sessionCookie(t, rec)
	code, me := b.me(t, req{cookie: c.Value})
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "admin", me["role"])

	require.Equal(t, `{"needed":false}`, needed())

	rec = b.do(t, req{method: http.MethodPost, path: "/api/onboarding/admin", body: map[string]string{"email": "second@example.org"}, remote: loopbackAddr})
	require.Equal(t, http.StatusConflict, rec.Code)
	require.Equal(t, "already_onboarded", errorCode(t, rec))
	rec = b.do(t, req{method: http.MethodPost, path: "/api/onboarding/admin", body: body, remote: remoteAddr, headers: map[string]string{"X-API-Key": testOpsKey}})
	require.Equal(t, http.StatusConflict, rec.Code)
}

func TestOnboardingRace(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	codes := make(chan int, 5)
	for i := range 5 {
		go func() {
			rec := b.do(t, req{method: http.MethodPost, path: "/api/onboarding/admin",
				body: map[string]string{"email": "admin" + string(rune('a'+i)) + "@example.org"}, remote: loopbackAddr})
			codes <- rec.Code
		}()
	}
	created := 0
	for range 5 {
		if <-codes == http.StatusCreated {
			created++
		}
	}
	require.Equal(t, 1, created, "exactly one of five simultaneous onboardings wins")
}

func TestAPIKeyLogin(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	post := func(key string) *httptest.ResponseRecorder {
		return b.do(t, req{method: http.MethodPost, path: "/api/auth/api-key-login", headers: map[string]string{"X-API-Key": key}})
	}
	require.Equal(t, http.StatusConflict, post(testOpsKey).Code, "no admin yet")

	root := b.user(t, "root@example.org", "admin")
	require.Equal(t, http.StatusUnauthorized, post("wrong-key-wrong-key-wrong-key-wrong").Code)
	rec := post(testOpsKey)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	code, me := b.me(t, req{cookie: sessionCookie(t, rec).Value})
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, root.ID.String(), me["id"])

	b.user(t, "ann@example.org", "user")
	rec = post(testOpsKey)
	require.Equal(t, http.StatusConflict, rec.Code, "with a second account the ops key is nobody's session")
	require.Equal(t, "not_single_user", errorCode(t, rec))
	require.Contains(t, b.auditActions(t), "auth.api_key.invalid")
}

func TestAdminAndAuditLog(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.user(t, "root@example.org", "admin")
	b.user(t, "ann@example.org", "user")
	admin := b.signIn(t, "root@example.org")
	ann := b.signIn(t, "ann@example.org")

	rec := b.do(t, req{method: http.MethodGet, path: "/api/admin/audit-log", cookie: ann})
	require.Equal(t, http.StatusForbidden, rec.Code, "a non-admin may not read the audit log")
	require.Equal(t, "admin_required", errorCode(t, rec))
	rec = b.do(t, req{method: http.MethodGet, path: "/api/admin/audit-log", headers: map[string]string{"X-API-Key": testOpsKey}})
	require.Equal(t, http.StatusUnauthorized, rec.Code, "the ops key is not an admin")

	// Make some more events, then page through all of them, two at a time.
	for range 3 {
		b.do(t, req{method: http.MethodGet, path: "/metrics", headers: map[string]string{"X-API-Key": "bad-key"}})
	}
	want := b.auditActions(t)
	require.GreaterOrEqual(t, len(want), 7)

	var seen []string
	var ids []float64
	cursor := ""
	for pages := 0; pages < 20; pages++ {
		path := "/api/admin/audit-log?limit=2"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		rec = b.do(t, req{method: http.MethodGet, path: path, cookie: admin})
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var page struct {
			Items []struct {
				ID     float64 `json:"id"`
				Action string  `json:"action"`
			} `json:"items"`
			NextCursor string `json:"next_cursor"`
		}
		require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &page))
		require.LessOrEqual(t, len(page.Items), 2)
		for _, it := range page.Items {
			if len(ids) > 0 {
				require.Less(t, it.ID, ids[len(ids)-1], "newest first, no repeats")
			}
			ids = append(ids, it.ID)
			seen = append([]string{it.Action}, seen...)
		}
		if page.NextCursor == "" {
			break
		}
		cursor = page.NextCursor
	}
	require.Equal(t, want[:len(seen)], seen, "every event, once, in order")

	rec = b.do(t, req{method: http.MethodGet, path: "/api/admin/audit-log?cursor=garbage", cookie: admin})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	rec = b.do(t, req{method: http.MethodGet, path: "/api/admin/audit-log?action_prefix=auth.api_key", cookie: admin})
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, 3, strings.Count(rec.Body.String(), `"auth.api_key.invalid"`))
}

func TestAdminManagesUsers(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	root := b.user(t, "root@example.org", "admin")
	admin := b.signIn(t, "root@example.org")

	rec := b.do(t, req{method: http.MethodPost, path: "/api/admin/users", cookie: admin, body: map[string]string{"email": "Cat@Example.org"}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	var invited struct {
		User       users.User `json:"user"`
		InviteSent bool       `json:"invite_sent"`
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &invited))
	require.True(t, invited.InviteSent)
	require.Equal(t, "cat@example.org", invited.User.Email)
	invite := b.mail.next(t)
	require.Equal(t, "cat@example.org", invite.To)
	require.Contains(t, invite.Body, "24 hours")

	rec = b.do(t, req{method: http.MethodPost, path: "/api/admin/users", cookie: admin, body: map[string]string{"email": "cat@example.org"}})
	require.Equal(t, http.StatusConflict, rec.Code)

	// The invited user signs in with the invitation link.
	link, err := url.Parse(invite.LogFields["magic_link"])
	require.NoError(t, err)
	rec = b.do(t, req{method: http.MethodGet, path: link.RequestURI()})
	require.Equal(t, http.StatusOK, rec.Code)
	cat := sessionCookie(t, rec).Value

	rec = b.do(t, req{method: http.MethodPatch, path: "/api/admin/users/" + root.ID.String() + "/role", cookie: admin, body: map[string]string{"role": "user"}})
	require.Equal(t, http.StatusConflict, rec.Code, "the last admin cannot be demoted")
	rec = b.do(t, req{method: http.MethodDelete, path: "/api/admin/users/" + root.ID.String(), cookie: admin})
	require.Equal(t, http.StatusConflict, rec.Code, "nor deleted")

	rec = b.do(t, req{method: http.MethodPatch, path: "/api/admin/users/" + invited.User.ID.String() + "/role", cookie: admin, body: map[string]string{"role": "superuser"}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)

	rec = b.do(t, req{method: http.MethodDelete, path: "/api/admin/users/" + invited.User.ID.String(), cookie: admin})
	require.Equal(t, http.StatusNoContent, rec.Code)
	code, _ := b.me(t, req{cookie: cat})
	require.Equal(t, http.StatusUnauthorized, code, "deleting a user revokes their sessions")
	rec = b.do(t, req{method: http.MethodDelete, path: "/api/admin/users/" + invited.User.ID.String(), cookie: admin})
	require.Equal(t, http.StatusNotFound, rec.Code)

	rec = b.do(t, req{method: http.MethodGet, path: "/api/admin/users", cookie: admin})
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), `"deleted_at"`)

	actions := b.auditActions(t)
	require.Contains(t, actions, "user.create")
	require.Contains(t, actions, "user.delete")
}

func TestPurgeHardDeletesAndScrubsTheAuditLog(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := context.Background()
	old := b.user(t, "old@example.org", "user")
	recent := b.user(t, "recent@example.org", "user")
	for _, u := range []users.User{old, recent} {
		b.app.Audit.Record(ctx, u.ID, "auth.magic_link.verify", "/api/auth/verify", map[string]any{"ip": "198.51.100.7", "kept": "yes"})
		_, err := users.SoftDelete(ctx, b.pool, u.ID)
		require.NoError(t, err)
	}
	_, err := b.pool.Exec(ctx, `UPDATE users SET deleted_at = now() - interval '31 days' WHERE id = $1`, old.ID)
	require.NoError(t, err)

	res, err := users.Purge(ctx, b.pool, time.Now(), users.Retention, papers.DeletePrivateOfUsersTx)
	require.NoError(t, err)
	require.Equal(t, 1, res.Users)
	require.EqualValues(t, 1, res.AuditScrubbed)

	_, err = users.ByID(ctx, b.pool, old.ID)
	require.ErrorIs(t, err, users.ErrNotFound)
	_, err = users.ByID(ctx, b.pool, recent.ID)
	require.NoError(t, err, "still within its 30 days")

	var owner *string
	var meta map[string]any
	var action string
	require.NoError(t, b.pool.QueryRow(ctx, `
		SELECT user_id, metadata, action FROM audit_log WHERE metadata->>'kept' = 'yes' ORDER BY id LIMIT 1`).Scan(&owner, &meta, &action))
	require.Nil(t, owner, "the purged user's id is gone from their entries")
	require.NotContains(t, meta, "ip", "and so is their address")
	require.Equal(t, "auth.magic_link.verify", action, "the action stays")

	var recentIP string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT metadata->>'ip' FROM audit_log WHERE user_id = $1`, recent.ID.String()).Scan(&recentIP))
	require.Equal(t, "198.51.100.7", recentIP)

	tag, err := b.pool.Exec(ctx, `UPDATE audit_log SET action = 'x'`)
	require.NoError(t, err)
	require.Zero(t, tag.RowsAffected(), "the log is append-only again after the purge")
}

func TestSettingsKeepSecretsSealed(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := context.Background()
	ann := b.user(t, "ann@example.org", "user")
	cookie := b.signIn(t, "ann@example.org")
	put := func(key string, value any) *httptest.ResponseRecorder {
		return b.do(t, req{method: http.MethodPut, path: "/api/settings/config/" + key, cookie: cookie, body: map[string]any{"value": value}})
	}

	rec := put("zotero.api_key", "zk-very-secret-value-1234")
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), "very-secret")
	require.Contains(t, rec.Body.String(), `"masked":"••••1234"`)

	var sealed []byte
	var keyID string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT encrypted_value, key_id FROM user_config WHERE user_id = $1 AND key = 'zotero.api_key'`, ann.ID).Scan(&sealed, &keyID))
	require.NotContains(t, string(sealed), "very-secret")
	require.NotEmpty(t, keyID)
	plain, err := b.app.Settings.Secret(ctx, ann.ID, "zotero.api_key")
	require.NoError(t, err)
	require.Equal(t, "zk-very-secret-value-1234", plain)

	rec = b.do(t, req{method: http.MethodGet, path: "/api/settings/config/zotero.api_key", cookie: cookie})
	require.Equal(t, http.StatusOK, rec.Code)
	require.NotContains(t, rec.Body.String(), "very-secret")

	require.Equal(t, http.StatusOK, put("reading.daily_goal", 3).Code)
	rec = b.do(t, req{method: http.MethodGet, path: "/api/settings/config", cookie: cookie})
	require.Contains(t, rec.Body.String(), `"value":3`)

	require.Equal(t, http.StatusForbidden, put("llm.providers.custom_compatible.api_key", "x").Code, "system keys are for admins")
	require.Equal(t, http.StatusUnprocessableEntity, put("Bad%20Key", "x").Code)
	require.Equal(t, http.StatusUnprocessableEntity, put("zotero.api_key", 42).Code, "a secret must be a string")
	rec = put("smtp.host", "127.0.0.1")
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, "a loopback SMTP relay is refused at save")
	require.Contains(t, rec.Body.String(), "loopback")

	rec = b.do(t, req{method: http.MethodDelete, path: "/api/settings/config/zotero.api_key", cookie: cookie})
	require.Equal(t, http.StatusNoContent, rec.Code)
	rec = b.do(t, req{method: http.MethodGet, path: "/api/settings/config/zotero.api_key", cookie: cookie})
	require.Equal(t, http.StatusNotFound, rec.Code)
}

func TestCrossSiteRequestsAreRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"CORS_ORIGINS": "https://app.lectern.test"})
	b.user(t, "ann@example.org", "user")
	cookie := b.signIn(t, "ann@example.org")
	put := func(headers map[string]string) int {
		return b.do(t, req{method: http.MethodPut, path: "/api/settings/config/reading.goal", cookie: cookie,
			body: map[string]any{"value": 1}, headers: headers}).Code
	}
	require.Equal(t, http.StatusForbidden, put(map[string]string{"Sec-Fetch-Site": "cross-site"}))
	require.Equal(t, http.StatusForbidden, put(map[string]string{"Origin": "https://evil.example"}))
	require.Equal(t, http.StatusOK, put(map[string]string{"Sec-Fetch-Site": "same-origin"}))
	require.Equal(t, http.StatusOK, put(map[string]string{"Origin": "https://app.lectern.test"}), "a CORS_ORIGINS origin is trusted")
	require.Equal(t, http.StatusOK, put(nil), "clients that are not browsers send neither header")

	rec := b.do(t, req{method: http.MethodGet, path: "/api/me", cookie: cookie})
	require.Equal(t, "no-store", rec.Header().Get("Cache-Control"))
	require.Equal(t, "nosniff", rec.Header().Get("X-Content-Type-Options"))
	require.Equal(t, "DENY", rec.Header().Get("X-Frame-Options"))
}

func TestSignInIsRateLimited(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	var last *httptest.ResponseRecorder
	for i := range 6 {
		last = b.do(t, req{method: http.MethodPost, path: "/api/auth/magic-link",
			body: map[string]string{"email": "someone" + string(rune('a'+i)) + "@example.org"}})
	}
	require.Equal(t, http.StatusTooManyRequests, last.Code)
	require.NotEmpty(t, last.Header().Get("Retry-After"))
	require.Equal(t, "rate_limited", errorCode(t, last))

	for range 3 {
		rec := b.do(t, req{method: http.MethodPost, path: "/api/auth/magic-link", remote: "198.51.100.99:1",
			body: map[string]string{"email": "target@example.org"}})
		require.Equal(t, http.StatusAccepted, rec.Code)
	}
	rec := b.do(t, req{method: http.MethodPost, path: "/api/auth/magic-link", remote: "198.51.100.98:1",
		body: map[string]string{"email": "target@example.org"}})
	require.Equal(t, http.StatusTooManyRequests, rec.Code, "one address cannot be flooded from many IPs")
}

func TestDevAuthBypassOnlyWithoutAnOpsKey(t *testing.T) {
	t.Parallel()
	b := setup(t, map[string]string{"DEV_AUTH_BYPASS": "true", "SERVICE_API_KEY": "<unset>"})
	root := b.user(t, "root@example.org", "admin")
	code, me := b.me(t, req{})
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, root.ID.String(), me["id"], "the single admin stands in")

	withKey := setup(t, map[string]string{"DEV_AUTH_BYPASS": "true"})
	withKey.user(t, "root@example.org", "admin")
	code, _ = withKey.me(t, req{})
	require.Equal(t, http.StatusUnauthorized, code, "a configured ops key switches the bypass off")
}

func TestPurgeFuncIsTheDailyIdentityPurge(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	ctx := context.Background()
	old := b.user(t, "old@example.org", "user")
	_, err := b.pool.Exec(ctx, `UPDATE users SET deleted_at = now() - interval '40 days' WHERE id = $1`, old.ID)
	require.NoError(t, err)
	_, err = b.pool.Exec(ctx, `INSERT INTO magic_link_tokens (token_hash, user_id, created_at, expires_at)
		VALUES (sha256('x'), (SELECT id FROM users WHERE email = 'old@example.org'), now() - interval '3 days', now() - interval '2 days')`)
	require.NoError(t, err)

	require.NoError(t, PurgeFunc(b.pool, b.app.Audit, slog.New(slog.DiscardHandler))(ctx))
	_, err = users.ByID(ctx, b.pool, old.ID)
	require.ErrorIs(t, err, users.ErrNotFound)
	require.Contains(t, b.auditActions(t), "user.purge")
}

func TestAdminLLMSettings(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	b := setup(t, map[string]string{"LECTERN_DATA_DIR": dataDir})
	ctx := context.Background()
	b.user(t, "admin@example.org", "admin")
	b.user(t, "bo@example.org", "user")
	admin := b.signIn(t, "admin@example.org")
	bo := b.signIn(t, "bo@example.org")
	put := func(cookie string, provider string, body map[string]any) *httptest.ResponseRecorder {
		return b.do(t, req{method: http.MethodPut, path: "/api/admin/llm/providers/" + provider, cookie: cookie, body: body})
	}
	const planted = "sk-planted-7f3a9c1e-secret-4821"

	require.Equal(t, http.StatusForbidden, put(bo, "openai", map[string]any{"api_key": planted}).Code)
	require.Equal(t, http.StatusForbidden, b.do(t, req{method: http.MethodGet, path: "/api/admin/llm", cookie: bo}).Code)

	rec := put(admin, "openai", map[string]any{"api_key": planted})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotContains(t, rec.Body.String(), "planted")
	require.Contains(t, rec.Body.String(), `"masked":"••••4821"`)
	require.Contains(t, rec.Body.String(), `"key_name":"llm.openai.api_key"`, "the three earlier providers keep their flat key names")

	rec = put(admin, "mistral", map[string]any{"api_key": "mk-other-0001"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), `"key_name":"llm.providers.mistral.api_key"`)

	var sealed []byte
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT encrypted_value FROM user_config WHERE user_id IS NULL AND key = 'llm.openai.api_key'`).Scan(&sealed))
	require.NotContains(t, string(sealed), "planted")

	for _, bad := range []struct{ url, rule string }{
		{"http://169.254.169.254/v1", "link-local"},
		{"http://[fe80::1]/v1", "link-local"},
		{"http://224.0.0.1/v1", "multicast"},
		{"https://user:pw@llm.example.org/v1", "credentials"},
		{"https://127.0.0.1/v1#frag", "fragment"},
		{"ftp://127.0.0.1/v1", "scheme"},
		{"http://93.184.216.34/v1", "plain http"},
		{"https://100.100.100.200/v1", "cloud metadata"},
		{"https://240.0.0.1/v1", "reserved"},
		{"http://0.0.0.0:8080/v1", "unspecified"},
	} {
		rec = put(admin, "custom_compatible", map[string]any{"base_url": bad.url})
		require.Equal(t, http.StatusUnprocessableEntity, rec.Code, bad.url)
		require.Contains(t, rec.Body.String(), bad.rule, bad.url)
	}
	require.Equal(t, http.StatusUnprocessableEntity, put(admin, "openai", map[string]any{"base_url": "http://127.0.0.1:8080/v1"}).Code,
		"only the custom endpoint has a base URL")

	rec = put(admin, "custom_compatible", map[string]any{"base_url": "http://127.0.0.1:8080/v1", "api_key": "ck-local-9999"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "127.0.0.1:8080", "the answer warns that prompts go to the custom endpoint")
	require.Contains(t, rec.Body.String(), "prompts")

	rec = b.do(t, req{method: http.MethodGet, path: "/api/admin/llm", cookie: admin})
	require.Equal(t, http.StatusOK, rec.Code)
	require.NotContains(t, rec.Body.String(), "planted")
	require.Contains(t, rec.Body.String(), `"name":"custom_compatible"`)
	for _, p := range []string{"groq", "openrouter", "google"} {
		require.Contains(t, rec.Body.String(), `"name":"`+p+`"`, "every provider is listed, key set or not")
	}

	// The plain key appears nowhere but in the sealed row: not in the logs, not in
	// any file under the data directory.
	require.NotContains(t, b.logs.String(), planted)
	requireInNoFile(t, dataDir, planted)
	require.Contains(t, b.auditActions(t), audit.ActionAdminConfigChange)
}

// requireInNoFile fails when any file under dir holds secret.
func requireInNoFile(t *testing.T, dir, secret string) {
	t.Helper()
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		require.NotContains(t, string(raw), secret, path)
		return nil
	}))
}

func TestUsersChangeTheirOwnProfile(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.user(t, "ann@example.org", "user")
	ann := b.signIn(t, "ann@example.org")
	patch := func(body map[string]any) *httptest.ResponseRecorder {
		return b.do(t, req{method: http.MethodPatch, path: "/api/me", cookie: ann, body: body})
	}
	rec := patch(map[string]any{"display_name": "  Ann Lee ", "timezone": "Europe/Berlin"})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	_, me := b.me(t, req{cookie: ann})
	require.Equal(t, "Ann Lee", me["display_name"])
	require.Equal(t, "Europe/Berlin", me["timezone"])

	rec = patch(map[string]any{"timezone": "Mars/Olympus_Mons"})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), `"field":"timezone"`)
	rec = patch(map[string]any{"display_name": strings.Repeat("a", 201)})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.Contains(t, rec.Body.String(), `"field":"display_name"`)
	_, me = b.me(t, req{cookie: ann})
	require.Equal(t, "Ann Lee", me["display_name"], "a refused change changes nothing")
	require.Equal(t, "Europe/Berlin", me["timezone"])

	rec = patch(map[string]any{"display_name": ""})
	require.Equal(t, http.StatusOK, rec.Code)
	_, me = b.me(t, req{cookie: ann})
	require.Nil(t, me["display_name"], "an empty name clears it")
	require.Equal(t, http.StatusUnauthorized, b.do(t, req{method: http.MethodPatch, path: "/api/me", body: map[string]any{"timezone": "UTC"}}).Code)
}

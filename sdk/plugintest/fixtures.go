package plugintest

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
)

// FixturesEnv names the environment variable that overrides where FixturesDir looks
// for recorded upstream answers.
const FixturesEnv = "LECTERN_FIXTURES"

// FixturesDir returns the folder sub of the shared recordings of upstream answers:
// $LECTERN_FIXTURES/sub when that variable is set, else ../shared/fixtures/sub next
// to the repository root (the nearest folder above the working directory that
// holds go.work). It skips the test, naming the folder, when the folder is absent
// or no go.work is found.
func FixturesDir(t testing.TB, sub string) string {
	t.Helper()
	dir, ok := fixturesDir(sub)
	if !ok {
		t.Skipf("fixtures folder %s is absent (set %s to the shared fixtures folder)", dir, FixturesEnv)
	}
	return dir
}

// fixturesDir is FixturesDir's lookup: the folder, and whether it exists.
func fixturesDir(sub string) (string, bool) {
	base := os.Getenv(FixturesEnv)
	if base == "" {
		dir, err := os.Getwd()
		if err != nil {
			return "../shared/fixtures/" + sub, false
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return "../shared/fixtures/" + sub + " (no go.work above the test directory)", false
			}
			dir = parent
		}
		base = filepath.Join(dir, "..", "shared", "fixtures")
	}
	dir := filepath.Join(base, sub)
	st, err := os.Stat(dir)
	return dir, err == nil && st.IsDir()
}

// ReadFixture returns the file name of the fixtures folder dir, failing the test
// when it cannot be read.
func ReadFixture(t testing.TB, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatalf("plugintest: read fixture: %v", err)
	}
	return b
}

// Scripted starts a fake upstream that answers its n-th request with steps[n] and
// every request after the steps with then. It returns the server, closed when the
// test ends, and the count of requests it received.
func Scripted(t testing.TB, then func(w http.ResponseWriter), steps ...func(w http.ResponseWriter)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if i := int(n.Add(1)) - 1; i < len(steps) {
			steps[i](w)
			return
		}
		then(w)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// Reply answers with status code, a Retry-After header when retryAfter is not
// empty, and body with its content type when body is not empty.
func Reply(code int, retryAfter, contentType, body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		if retryAfter != "" {
			w.Header().Set("Retry-After", retryAfter)
		}
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(code)
		_, _ = w.Write([]byte(body))
	}
}

// Recorder keeps a copy of every request a fake upstream receives. The zero value
// is ready to use; it is safe for concurrent use.
type Recorder struct {
	mu    sync.Mutex
	calls []*http.Request
}

// Record keeps a copy of r.
func (rec *Recorder) Record(r *http.Request) {
	c := r.Clone(r.Context())
	rec.mu.Lock()
	defer rec.mu.Unlock()
	rec.calls = append(rec.calls, c)
}

// Requests returns the requests recorded so far, in order.
func (rec *Recorder) Requests() []*http.Request {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]*http.Request(nil), rec.calls...)
}

// FastSettings are a source's settings for replay tests: base_url set, no pacing,
// millisecond backoff, short timeouts; extra adds or overrides entries.
func FastSettings(baseURL string, extra map[string]any) map[string]any {
	s := map[string]any{"base_url": baseURL, "rate_interval": "0s", "backoff_base": "1ms", "max_backoff": "2s", "timeout": "5s"}
	for k, v := range extra {
		s[k] = v
	}
	return s
}

// Canned starts a server answering every request with status, content type and
// body, closed when the test ends. The requests it receives are sent on the
// returned channel (the first 16; later ones are not kept).
func Canned(t testing.TB, status int, contentType string, body []byte) (*httptest.Server, <-chan *http.Request) {
	t.Helper()
	reqs := make(chan *http.Request, 16)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case reqs <- r:
		default:
		}
		w.Header().Set("Content-Type", contentType)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, reqs
}

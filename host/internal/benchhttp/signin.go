package benchhttp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// sessionCookie is the host's session cookie (auth.SessionCookie).
const sessionCookie = "service_session"

// userEmail is the address of generated user i (0-based), as Seed makes them.
func userEmail(i int) string { return fmt.Sprintf("bench%03d@example.org", i+1) }

// userAddr is the address user i signs in from: a documentation address
// (192.0.2.0/24, RFC 5737) passed in X-Forwarded-For, which the host honours from
// loopback (TRUSTED_PROXY_LOOPBACK). Each researcher signs in from their own
// machine; the load itself then comes from one address, 127.0.0.1.
func userAddr(i int) string { return fmt.Sprintf("192.0.2.%d", i+1) }

// signIn signs every generated user in the way a person does: asks for a sign-in
// link, reads it from the mail (the host's log: DEV_SMTP_LOG_ONLY) and opens it.
// It returns each user's session cookie value.
func (s *server) signIn(ctx context.Context, users int) ([]string, error) {
	for i := range users {
		body := fmt.Sprintf(`{"email":%q}`, userEmail(i))
		resp, err := s.do(ctx, http.MethodPost, "/api/auth/magic-link", userAddr(i), strings.NewReader(body))
		if err != nil {
			return nil, err
		}
		if resp.StatusCode != http.StatusAccepted {
			return nil, fmt.Errorf("sign-in link for %s: %s", userEmail(i), resp.Status)
		}
	}
	cookies := make([]string, users)
	for i := range users {
		link, err := s.waitForLink(ctx, userEmail(i))
		if err != nil {
			return nil, err
		}
		u, err := url.Parse(link)
		if err != nil {
			return nil, fmt.Errorf("sign-in link %q: %w", link, err)
		}
		resp, err := s.do(ctx, http.MethodGet, "/api/auth/verify?token="+url.QueryEscape(u.Query().Get("token")), userAddr(i), nil)
		if err != nil {
			return nil, err
		}
		for _, c := range resp.Cookies() {
			if c.Name == sessionCookie {
				cookies[i] = c.Value
			}
		}
		if resp.StatusCode != http.StatusOK || cookies[i] == "" {
			return nil, fmt.Errorf("open the sign-in link of %s: %s, session cookie set: %t", userEmail(i), resp.Status, cookies[i] != "")
		}
	}
	return cookies, nil
}

// do sends one request as the client at addr and reads the answer whole.
func (s *server) do(ctx context.Context, method, path, addr string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, s.base+path, body)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("X-Forwarded-For", addr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp, nil
}

// waitForLink reads the server's log, from this process's start, until the mail to
// email shows its sign-in link; the link is sent in the background, so it may
// take a moment.
func (s *server) waitForLink(ctx context.Context, email string) (string, error) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		link, err := s.lastLink(email)
		if err != nil || link != "" {
			return link, err
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return "", fmt.Errorf("no sign-in link for %s in %s within 30 s", email, s.logPath)
}

// lexicalIndexLoaded is app.LexicalIndexLoaded, the host's log message once its
// lexical index has loaded (the bench runs the binary and does not link the app).
const lexicalIndexLoaded = "lexical index loaded"

// waitWarm waits until the host has loaded its lexical index, which it does in
// the background after a start: measured before that, every route would share
// the machine with the load (10k papers' passages parsed into the index).
func (s *server) waitWarm(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		done, err := s.logged(lexicalIndexLoaded)
		if err != nil || done {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return fmt.Errorf("the host did not load its lexical index within %s; see %s", within, s.logPath)
}

// logged says whether the server has logged msg since it started.
func (s *server) logged(msg string) (bool, error) {
	f, err := os.Open(s.logPath)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if _, err := f.Seek(s.logStart, io.SeekStart); err != nil {
		return false, err
	}
	want := []byte(`"msg":` + strconv.Quote(msg))
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		if bytes.Contains(sc.Bytes(), want) {
			return true, nil
		}
	}
	return false, sc.Err()
}

// lastLink is the last sign-in link mailed to email since the server started, or "".
func (s *server) lastLink(email string) (string, error) {
	f, err := os.Open(s.logPath)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := f.Seek(s.logStart, io.SeekStart); err != nil {
		return "", err
	}
	var link string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.Contains(line, []byte(`"magic_link"`)) {
			continue
		}
		var entry struct {
			To   string `json:"to"`
			Link string `json:"magic_link"`
		}
		if json.Unmarshal(line, &entry) == nil && entry.To == email {
			link = entry.Link
		}
	}
	return link, sc.Err()
}

// firstSearches sends each user's first passage search, one at a time: the first
// loads the vector store's partition into the host's memory, which is start-up
// work, not load.
func (s *server) firstSearches(ctx context.Context, c *corpus, cookies []string) error {
	rng := rand.New(rand.NewPCG(1, 1))
	client := &http.Client{Timeout: 5 * time.Minute}
	for _, cookie := range cookies {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/api/search/chunks?limit=20&q="+url.QueryEscape(c.query(rng)), nil)
		if err != nil {
			return err
		}
		req.AddCookie(&http.Cookie{Name: sessionCookie, Value: cookie})
		resp, err := client.Do(req)
		if err != nil {
			return fmt.Errorf("first passage search: %w", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("first passage search: %s", resp.Status)
		}
	}
	return nil
}

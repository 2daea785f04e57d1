package main

import (
	"context"
	"log/slog"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/lectern-research/lectern/sdk/messenger"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/sourcehttp"
)

// version is the plugin's own version.
const version = "0.1.0"

// Defaults of the settings.
const (
	defaultBaseURL        = "https://api.telegram.org"
	defaultPollTimeout    = 30 * time.Second
	defaultRequestTimeout = 30 * time.Second
	defaultMaxRetries     = 3
	defaultBackoff        = time.Second
	defaultMaxRetryWait   = 30 * time.Second
)

// maxPollTimeout bounds poll_timeout: Telegram holds a long poll for at most
// about a minute, and longer would only hide a dead connection.
const maxPollTimeout = 60 * time.Second

// settingNames lists the known settings, for the message refusing an unknown one.
var settingNames = []string{"base_url", "poll_timeout", "request_timeout", "max_retries", "backoff_base", "max_retry_wait"}

// settings are the plugin's Configure settings. None of them is secret.
type settings struct {
	// baseURL is the Bot API root without a trailing slash; a call goes to
	// baseURL/bot<token>/<method>.
	baseURL string
	// pollTimeout is how long one getUpdates waits for an update (its timeout
	// parameter); 0 polls without waiting.
	pollTimeout time.Duration
	// requestTimeout bounds one request until its answer is read; a long poll gets
	// pollTimeout on top.
	requestTimeout time.Duration
	// maxRetries is how many times a failed request is retried after the first.
	maxRetries int
	// backoff is the wait before the first retry without a retry_after, doubled
	// for each further one up to maxRetryWait.
	backoff time.Duration
	// maxRetryWait caps one wait: a longer retry_after ends the call with a
	// RateLimited error that carries it.
	maxRetryWait time.Duration
}

func defaultSettings() settings {
	return settings{
		baseURL: defaultBaseURL, pollTimeout: defaultPollTimeout, requestTimeout: defaultRequestTimeout,
		maxRetries: defaultMaxRetries, backoff: defaultBackoff, maxRetryWait: defaultMaxRetryWait,
	}
}

// Telegram is the Telegram transport. Its settings (all optional):
//
//	base_url         the Bot API root (default https://api.telegram.org)
//	poll_timeout     how long one getUpdates long poll waits, 0 to 60s (default 30s)
//	request_timeout  bound of one request; a long poll gets poll_timeout on top (default 30s)
//	max_retries      retries after the first attempt (default 3); see client.go for which failures are retried
//	backoff_base     first retry wait without a retry_after, doubled per retry (default 1s)
//	max_retry_wait   cap of one wait; a longer retry_after is returned to the caller (default 30s)
//
// Credentials (per call, required): messenger.CredBotToken, the bot's token.
type Telegram struct {
	log  *slog.Logger
	http *http.Client

	mu  sync.RWMutex
	set settings
}

var (
	_ messenger.WithCommands  = (*Telegram)(nil)
	_ messenger.WithDownloads = (*Telegram)(nil)
)

// New returns the transport with its default settings.
func New(log *slog.Logger) *Telegram {
	t := http.DefaultTransport.(*http.Transport).Clone()
	// Redirects are never followed: the Bot API does not redirect, and a
	// redirect would carry the token in the URL to wherever it points.
	client := &http.Client{Transport: t, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &Telegram{log: log, http: client, set: defaultSettings()}
}

// Describe names the plugin.
func (t *Telegram) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{
		Name:        "telegram",
		Version:     version,
		Description: "Telegram Bot API: long-polled updates, messages with inline buttons, edits and the command menu.",
	}, nil
}

// Configure applies the settings; unknown keys and bad values are refused with a
// BadRequest and the previous settings stay.
func (t *Telegram) Configure(_ context.Context, req *protocol.ConfigureRequest) (*protocol.ConfigureResponse, error) {
	s := defaultSettings()
	for k, v := range req.Settings {
		var err error
		switch k {
		case "base_url":
			s.baseURL, err = baseURLSetting(k, v)
		case "poll_timeout":
			s.pollTimeout, err = sourcehttp.DurationSetting(k, v)
			if err == nil && s.pollTimeout > maxPollTimeout {
				err = protocol.BadRequest("setting %s must be at most %s, got %v", k, maxPollTimeout, v)
			}
		case "request_timeout":
			s.requestTimeout, err = sourcehttp.PositiveDurationSetting(k, v)
		case "max_retries":
			s.maxRetries, err = sourcehttp.IntSetting(k, v, 0, 10)
		case "backoff_base":
			s.backoff, err = sourcehttp.DurationSetting(k, v)
		case "max_retry_wait":
			s.maxRetryWait, err = sourcehttp.DurationSetting(k, v)
		default:
			err = protocol.BadRequest("unknown setting %q (known: %s)", k, strings.Join(settingNames, ", "))
		}
		if err != nil {
			return nil, err
		}
	}
	t.mu.Lock()
	t.set = s
	t.mu.Unlock()
	t.log.Info("configured", "base_url", s.baseURL, "poll_timeout", s.pollTimeout.String(), "max_retries", s.maxRetries)
	return &protocol.ConfigureResponse{}, nil
}

// baseURLSetting reads an absolute http(s) URL without user info, query or
// fragment, and drops its trailing slashes.
func baseURLSetting(k string, v any) (string, error) {
	u, err := sourcehttp.URLSetting(k, v)
	if err != nil {
		return "", err
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return "", protocol.BadRequest("setting %s must be a URL without user info, query or fragment", k)
	}
	return strings.TrimRight(u.String(), "/"), nil
}

// call is one request's settings and token. The token never goes into an error
// or a log line.
type call struct {
	s     settings
	token string
}

// tokenShape is what a Bot API token looks like ("123456:ABC-def_..."). Checking
// it keeps anything that could change the request's path out of the URL.
var tokenShape = regexp.MustCompile(`^[0-9]{1,20}:[A-Za-z0-9_-]{20,100}$`)

// call snapshots the settings and reads the token from the credentials. A token
// that is missing or malformed is refused without repeating it.
func (t *Telegram) call(creds map[string]string) (*call, error) {
	t.mu.RLock()
	s := t.set
	t.mu.RUnlock()
	token := strings.TrimSpace(creds[messenger.CredBotToken])
	switch {
	case token == "":
		return nil, protocol.Unauthorized("telegram: no bot token in the call's credentials; set messenger.bot_token")
	case !tokenShape.MatchString(token):
		return nil, protocol.Unauthorized("telegram: the bot token is malformed (expected the digits, a colon and the secret BotFather gave); check messenger.bot_token")
	}
	return &call{s: s, token: token}, nil
}

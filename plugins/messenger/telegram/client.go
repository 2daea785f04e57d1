package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/sourcehttp"
)

// Bounds of what the plugin reads.
const (
	// maxBody bounds one answer (a getUpdates batch of 100 updates is far less).
	maxBody = 8 << 20
	// maxDescription bounds the upstream description quoted in an error.
	maxDescription = 300
)

// apiResponse is the Bot API's envelope: {"ok":true,"result":…} or
// {"ok":false,"error_code":…,"description":…,"parameters":{…}}.
type apiResponse struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  *struct {
		RetryAfter      int   `json:"retry_after"`
		MigrateToChatID int64 `json:"migrate_to_chat_id"`
	} `json:"parameters"`
}

// request is one Bot API call.
type request struct {
	// method is the Bot API method ("sendMessage").
	method string
	// params is sent as the JSON body.
	params any
	// wait is added to the request timeout (a long poll's timeout).
	wait time.Duration
	// once marks a call that must not be repeated once Telegram may have acted on
	// it (sendMessage: a retry could post the message twice). It is retried only
	// after a 429, or when the connection failed before the request was sent.
	once bool
}

// do calls r.method with r.params and decodes the result into into (nil to
// ignore it). It retries rate limits after their retry_after, and 5xx answers
// and network failures after an exponential backoff, up to max_retries times;
// a retry_after longer than max_retry_wait ends the call at once with a
// RateLimited error carrying it. Every wait ends when ctx does, with ctx's error.
func (t *Telegram) do(ctx context.Context, c *call, r *request, into any) error {
	body, err := json.Marshal(r.params)
	if err != nil {
		return protocol.BadRequest("telegram %s: cannot encode the request: %v", r.method, err)
	}
	for attempt := 0; ; attempt++ {
		res, out := t.attempt(ctx, c, r, body)
		if ctxErr := ctx.Err(); ctxErr != nil {
			return ctxErr
		}
		fail, wait := out.err, out.wait
		if fail == nil {
			if into == nil || len(res.Result) == 0 {
				return nil
			}
			if err := json.Unmarshal(res.Result, into); err != nil {
				return protocol.Unavailable(err, "telegram %s: unreadable result: %v", r.method, err)
			}
			return nil
		}
		if !out.retry || attempt >= c.s.maxRetries || wait > c.s.maxRetryWait {
			return fail
		}
		if wait <= 0 {
			wait = sourcehttp.Backoff(c.s.backoff, c.s.maxRetryWait, attempt)
		}
		t.log.DebugContext(ctx, "retrying", "method", r.method, "retry", attempt+1, "wait", wait.String(), "error", fail.Error())
		if err := sourcehttp.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// outcome is how an attempt failed: err (nil when it did not), whether a retry
// may help and how long Telegram asked to wait first.
type outcome struct {
	err   error
	retry bool
	wait  time.Duration
}

// attempt sends r once and returns the accepted answer, or how it failed.
func (t *Telegram) attempt(ctx context.Context, c *call, r *request, body []byte) (*apiResponse, outcome) {
	actx, cancel := context.WithTimeout(ctx, c.s.requestTimeout+r.wait)
	defer cancel()
	req, err := http.NewRequestWithContext(actx, http.MethodPost, c.s.baseURL+"/bot"+c.token+"/"+r.method, bytes.NewReader(body))
	if err != nil {
		return nil, outcome{err: protocol.BadRequest("telegram %s: cannot build the request: %v", r.method, scrub(stripURL(err), c.token))}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "lectern-telegram/"+version)
	httpRes, err := t.http.Do(req)
	if err != nil {
		err = stripURL(err)
		retry := !r.once || notSent(err)
		if actx.Err() != nil && ctx.Err() == nil {
			return nil, outcome{err: protocol.Unavailable(nil, "telegram %s: no answer within %s", r.method, c.s.requestTimeout+r.wait), retry: retry}
		}
		return nil, outcome{err: protocol.Unavailable(nil, "telegram %s: request failed: %s", r.method, scrub(err, c.token)), retry: retry}
	}
	defer httpRes.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(httpRes.Body, maxBody))
	if err != nil {
		return nil, outcome{err: protocol.Unavailable(nil, "telegram %s: reading the answer failed: %s", r.method, scrub(stripURL(err), c.token)), retry: !r.once}
	}
	var env apiResponse
	if jerr := json.Unmarshal(raw, &env); jerr != nil {
		env = apiResponse{ErrorCode: httpRes.StatusCode, Description: http.StatusText(httpRes.StatusCode)}
		if httpRes.StatusCode < 300 {
			return nil, outcome{err: protocol.Unavailable(nil, "telegram %s: the answer is not the Bot API's JSON (HTTP %d)", r.method, httpRes.StatusCode), retry: !r.once}
		}
	}
	if env.OK && httpRes.StatusCode < 300 {
		return &env, outcome{}
	}
	if env.ErrorCode == 0 {
		env.ErrorCode = httpRes.StatusCode
	}
	out := apiError(r.method, &env, c.token)
	out.retry = out.retry && (!r.once || env.ErrorCode == http.StatusTooManyRequests)
	return nil, out
}

// apiError maps a refused call to a protocol error, says whether it is worth
// retrying and how long Telegram asked to wait. The description is quoted in
// words, without the token.
func apiError(method string, env *apiResponse, token string) outcome {
	desc := sanitize(env.Description, token)
	if desc == "" {
		desc = http.StatusText(env.ErrorCode)
	}
	code := env.ErrorCode
	var retryAfter time.Duration
	var migrateTo int64
	if p := env.Parameters; p != nil {
		retryAfter = retryAfterWait(p.RetryAfter)
		migrateTo = p.MigrateToChatID
	}
	switch {
	case code == http.StatusTooManyRequests:
		return outcome{err: protocol.RateLimited(retryAfter, "telegram %s: Telegram asks to slow down: %s", method, desc), retry: true, wait: retryAfter}
	case code == http.StatusUnauthorized || code == http.StatusNotFound:
		// The Bot API answers 401 for an unknown token and 404 for one it cannot
		// read; no method of ours is missing.
		return outcome{err: protocol.Unauthorized("telegram %s: Telegram refused the bot token (HTTP %d: %s); check messenger.bot_token", method, code, desc)}
	case code == http.StatusForbidden:
		return outcome{err: protocol.NotFound("telegram %s: the bot cannot reach this chat (%s)", method, desc)}
	case code == http.StatusConflict:
		return outcome{err: protocol.Unavailable(nil, "telegram %s: %s; only one Lectern may poll a bot, and the bot must have no webhook", method, desc)}
	case migrateTo != 0:
		return outcome{err: protocol.BadRequest("telegram %s: the group became a supergroup with chat id %d (%s)", method, migrateTo, desc)}
	case code == http.StatusBadRequest && notFoundDescription(desc):
		return outcome{err: protocol.NotFound("telegram %s: %s", method, desc)}
	case code >= 400 && code < 500:
		return outcome{err: protocol.BadRequest("telegram %s: Telegram refused the request (HTTP %d: %s)", method, code, desc)}
	case code >= 500:
		return outcome{err: protocol.Unavailable(nil, "telegram %s: Telegram failed (HTTP %d: %s)", method, code, desc), retry: true}
	}
	return outcome{err: protocol.Unavailable(nil, "telegram %s: unexpected answer (HTTP %d: %s)", method, code, desc)}
}

// maxRetryAfter bounds how a retry_after is read: longer than any max_retry_wait,
// so the call still ends at once as rate limited, and far from the overflow of
// time.Duration (a retry_after of 9223372037 seconds once read as a negative wait,
// which retried at once).
const maxRetryAfter = 24 * time.Hour

// retryAfterWait reads a retry_after in seconds as a wait: never negative, at most
// maxRetryAfter.
func retryAfterWait(seconds int) time.Duration {
	if seconds <= 0 {
		return 0
	}
	return time.Duration(min(seconds, int(maxRetryAfter/time.Second))) * time.Second
}

// notFoundPhrases are the Bad Request descriptions that mean the chat, message or
// button press no longer exists.
var notFoundPhrases = []string{
	"chat not found", "message to edit not found", "message not found",
	"query is too old", "query id is invalid", "user not found",
}

func notFoundDescription(desc string) bool {
	lower := strings.ToLower(desc)
	for _, p := range notFoundPhrases {
		if strings.Contains(lower, p) {
			return true
		}
	}
	return false
}

// notModified reports whether err is Telegram's refusal of an edit that changes
// nothing, which for Edit is success.
func notModified(err error) bool {
	return errors.Is(err, protocol.ErrBadRequest) && strings.Contains(strings.ToLower(err.Error()), "message is not modified")
}

// notSent reports whether a failed request surely never reached Telegram: the
// connection could not be made.
func notSent(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// botPath matches the token's place in a Bot API URL, for errors that quote one
// despite stripURL (a proxy's message, say).
var botPath = regexp.MustCompile(`bot[0-9]{1,20}:[A-Za-z0-9_-]+`)

var spaces = regexp.MustCompile(`\s+`)

// sanitize prepares an upstream description for an error: the token and anything
// that looks like one replaced, whitespace collapsed, length bounded.
func sanitize(msg, token string) string {
	if token != "" {
		msg = strings.ReplaceAll(msg, token, "[token]")
	}
	msg = botPath.ReplaceAllString(msg, "bot[token]")
	msg = strings.TrimSpace(spaces.ReplaceAllString(msg, " "))
	if r := []rune(msg); len(r) > maxDescription {
		msg = string(r[:maxDescription]) + "…"
	}
	return msg
}

// scrub renders err for an error message without the token.
func scrub(err error, token string) string { return sanitize(err.Error(), token) }

// stripURL drops the *url.Error wrapper, whose message holds the request URL and
// with it the token.
func stripURL(err error) error {
	var uerr *url.Error
	if errors.As(err, &uerr) {
		return uerr.Err
	}
	return err
}

package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/lectern-research/lectern/sdk/llm"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/sourcehttp"
)

// version is the plugin's own version.
const version = "0.1.0"

// Defaults of the settings.
const (
	defaultBaseURL    = "https://api.openai.com/v1"
	defaultTimeout    = 120 * time.Second
	defaultMaxRetries = 3
	defaultBackoff    = 500 * time.Millisecond
	defaultMaxBackoff = 20 * time.Second
)

// The values of the max_output_field setting.
const (
	// maxTokensAuto sends max_completion_tokens to api.openai.com and max_tokens to
	// every other endpoint.
	maxTokensAuto = "auto"
	// maxTokensField is the field every OpenAI-compatible server reads; OpenAI
	// deprecated it and refuses it for its reasoning models.
	maxTokensField = "max_tokens"
	// maxCompletionTokensField is OpenAI's current field; not every compatible
	// server reads it.
	maxCompletionTokensField = "max_completion_tokens"
)

// settingNames lists the known settings, for the message refusing an unknown one.
var settingNames = []string{
	"base_url", "timeout", "max_retries", "backoff_base", "max_backoff",
	"default_chat_model", "default_embedding_model", "embedding_dimensions", "max_output_field",
}

// settings are the plugin's Configure settings. None of them is secret.
type settings struct {
	// baseURL is the API root without a trailing slash.
	baseURL string
	// timeout bounds one HTTP attempt until its answer is read; for a streamed
	// answer it bounds the wait for each next piece of the stream.
	timeout time.Duration
	// maxRetries is how many times a failed attempt is retried (429, 408, 409,
	// 5xx, network failures), after the first.
	maxRetries int
	// backoff is the wait before the first retry, doubled for each further one.
	backoff time.Duration
	// maxBackoff caps one wait, and is the longest Retry-After a call waits
	// through; a longer one ends the call with a RateLimited error carrying it.
	maxBackoff time.Duration
	// chatModel and embedModel are used when a request names no model.
	chatModel, embedModel string
	// dims are extra or overriding embedding dimensions by model id. Never
	// written after Configure, so calls share it.
	dims map[string]int
	// maxOutputField is maxTokensAuto, maxTokensField or maxCompletionTokensField.
	maxOutputField string
}

func defaultSettings() settings {
	return settings{
		baseURL: defaultBaseURL, timeout: defaultTimeout, maxRetries: defaultMaxRetries,
		backoff: defaultBackoff, maxBackoff: defaultMaxBackoff, maxOutputField: maxTokensAuto,
	}
}

// OpenAI is the OpenAI-compatible LLM provider. Its settings (all optional):
//
//	base_url                 the API root (default https://api.openai.com/v1)
//	timeout                  bound of one HTTP attempt; for a stream, of the wait for its next piece (default 120s)
//	max_retries              retries after the first attempt on 408, 409, 429, 5xx and network failures (default 3)
//	backoff_base             first retry wait without a Retry-After, doubled per retry (default 500ms)
//	max_backoff              cap of one wait; a longer Retry-After is returned to the caller (default 20s)
//	default_chat_model       model of a chat request that names none
//	default_embedding_model  model of an embedding request that names none
//	embedding_dimensions     {model id = vector length}, for embedding models the plugin does not know
//	max_output_field         "auto" (default), "max_tokens" or "max_completion_tokens"
//
// Credentials (per call, optional): llm.CredAPIKey, sent as a bearer token,
// llm.CredBaseURL, which replaces base_url for that call, and
// llm.CredOperatorEndpoint, which marks that base URL as the operator's gateway.
//
// Every connection passes the model-endpoint egress rule (egress.go) unless the
// call's base URL is the operator's gateway.
type OpenAI struct {
	log  *slog.Logger
	http *http.Client

	mu  sync.RWMutex
	set settings
}

var _ llm.Provider = (*OpenAI)(nil)

// New returns the provider with its default settings.
func New(log *slog.Logger) *OpenAI {
	return &OpenAI{log: log, http: newHTTPClient(nil), set: defaultSettings()}
}

// Describe names the plugin.
func (o *OpenAI) Describe(context.Context, *protocol.DescribeRequest) (*protocol.DescribeResponse, error) {
	return &protocol.DescribeResponse{
		Name:    "openai",
		Version: version,
		Capabilities: []string{
			protocol.CapabilityStreaming, protocol.CapabilityJSONSchema, protocol.CapabilityEmbeddings,
		},
		Description: "OpenAI-compatible chat, embeddings and models: OpenAI, LiteLLM, Ollama, llama.cpp, vLLM and other compatible endpoints.",
	}, nil
}

// Configure applies the settings; unknown keys and bad values are refused with a
// BadRequest and the previous settings stay.
func (o *OpenAI) Configure(_ context.Context, req *protocol.ConfigureRequest) (*protocol.ConfigureResponse, error) {
	s := defaultSettings()
	for k, v := range req.Settings {
		var err error
		switch k {
		case "base_url":
			s.baseURL, err = baseURLSetting(k, v)
		case "timeout":
			s.timeout, err = sourcehttp.PositiveDurationSetting(k, v)
		case "max_retries":
			s.maxRetries, err = sourcehttp.IntSetting(k, v, 0, 10)
		case "backoff_base":
			s.backoff, err = sourcehttp.DurationSetting(k, v)
		case "max_backoff":
			s.maxBackoff, err = sourcehttp.DurationSetting(k, v)
		case "default_chat_model":
			s.chatModel, err = modelSetting(k, v)
		case "default_embedding_model":
			s.embedModel, err = modelSetting(k, v)
		case "embedding_dimensions":
			s.dims, err = dimensionsSetting(k, v)
		case "max_output_field":
			s.maxOutputField, err = maxOutputFieldSetting(k, v)
		default:
			err = protocol.BadRequest("unknown setting %q (known: %s)", k, strings.Join(settingNames, ", "))
		}
		if err != nil {
			return nil, err
		}
	}
	o.mu.Lock()
	o.set = s
	o.mu.Unlock()
	o.log.Info("configured", "base_url", s.baseURL, "timeout", s.timeout.String(), "max_retries", s.maxRetries,
		"default_chat_model", s.chatModel, "default_embedding_model", s.embedModel)
	return &protocol.ConfigureResponse{}, nil
}

// call is one request's settings and credentials. Its apiKey never goes into an
// error or a log line, and neither does baseURL when it came from the credentials.
type call struct {
	s       settings
	baseURL string
	apiKey  string
	// operator is true when baseURL is the operator's gateway, which the dialer
	// does not check (llm.CredOperatorEndpoint).
	operator bool
}

// call snapshots the settings and reads the credentials. A credential base URL
// that does not parse is refused without repeating it: it is the caller's secret
// as much as the key is.
func (o *OpenAI) call(creds map[string]string) (*call, error) {
	o.mu.RLock()
	s := o.set
	o.mu.RUnlock()
	c := &call{s: s, baseURL: s.baseURL, apiKey: strings.TrimSpace(creds[llm.CredAPIKey])}
	if raw := strings.TrimSpace(creds[llm.CredBaseURL]); raw != "" {
		base, err := cleanBaseURL(raw)
		if err != nil {
			return nil, protocol.BadRequest("credential %s is not an absolute http(s) URL without user info, query or fragment", llm.CredBaseURL)
		}
		c.baseURL = base
		c.operator = creds[llm.CredOperatorEndpoint] == "true"
	}
	return c, nil
}

// dialPolicy is the egress rule of the call's connections.
func (c *call) dialPolicy() dialPolicy {
	scheme := "https"
	if u, err := url.Parse(c.baseURL); err == nil {
		scheme = u.Scheme
	}
	return dialPolicy{scheme: scheme, operator: c.operator}
}

// host is the host name of the call's base URL, lowercase.
func (c *call) host() string {
	u, err := url.Parse(c.baseURL)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// outputField is the request field that carries ChatRequest.MaxTokens: OpenAI
// refuses max_tokens for its reasoning models and documents it as deprecated in
// favour of max_completion_tokens, while local runtimes (Ollama, llama.cpp) read
// only max_tokens. "auto" therefore picks by host.
func (c *call) outputField() string {
	switch c.s.maxOutputField {
	case maxTokensField, maxCompletionTokensField:
		return c.s.maxOutputField
	}
	if c.host() == "api.openai.com" {
		return maxCompletionTokensField
	}
	return maxTokensField
}

// honoursJSONSchema reports whether the endpoint is expected to honour
// response_format. Anthropic's OpenAI-compatible endpoint documents that it
// ignores it; Chat still checks that such an answer is JSON.
func (c *call) honoursJSONSchema() bool {
	return c.host() != "api.anthropic.com"
}

// baseURLSetting reads an absolute http(s) URL without user info, query or
// fragment, and drops its trailing slashes. The refusal repeats the value without
// its user info and query, in case a key was pasted there.
func baseURLSetting(k string, v any) (string, error) {
	raw, _ := v.(string)
	base, err := cleanBaseURL(raw)
	if err != nil {
		return "", protocol.BadRequest("setting %s must be an absolute http(s) URL without user info, query or fragment (keys go in the credentials), got %s", k, redactURL(v))
	}
	return base, nil
}

// errNotAPIRoot is returned by cleanBaseURL.
var errNotAPIRoot = errors.New("not an absolute http(s) URL without user info, query or fragment")

// cleanBaseURL checks an API root and drops its trailing slashes.
func cleanBaseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" ||
		u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.Opaque != "" {
		return "", errNotAPIRoot
	}
	return strings.TrimRight(raw, "/"), nil
}

// redactURL renders a refused base URL setting without its user info, query and
// fragment.
func redactURL(v any) string {
	raw, ok := v.(string)
	if !ok {
		return fmt.Sprintf("%v", v)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable)"
	}
	u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
	return strconv.Quote(u.String())
}

func modelSetting(k string, v any) (string, error) {
	s, ok := v.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", protocol.BadRequest("setting %s must be a non-empty model id, got %v", k, v)
	}
	return strings.TrimSpace(s), nil
}

// dimensionsSetting reads {model id = vector length}.
func dimensionsSetting(k string, v any) (map[string]int, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, protocol.BadRequest("setting %s must be a table of model id = vector length, got %v", k, v)
	}
	out := make(map[string]int, len(m))
	for id, d := range m {
		if strings.TrimSpace(id) == "" {
			return nil, protocol.BadRequest("setting %s has an empty model id", k)
		}
		n, err := sourcehttp.IntSetting(k+"."+id, d, 1, 1<<16)
		if err != nil {
			return nil, err
		}
		out[strings.TrimSpace(id)] = n
	}
	return out, nil
}

func maxOutputFieldSetting(k string, v any) (string, error) {
	allowed := []string{maxTokensAuto, maxTokensField, maxCompletionTokensField}
	s, ok := v.(string)
	if !ok || !slices.Contains(allowed, s) {
		return "", protocol.BadRequest("setting %s must be one of %s, got %v", k, strings.Join(allowed, ", "), v)
	}
	return s, nil
}

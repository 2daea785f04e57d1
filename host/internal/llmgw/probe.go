package llmgw

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/lectern-research/lectern/host/internal/netguard"
	"github.com/lectern-research/lectern/host/internal/userconfig"
)

// Testing a connection: an admin gives a provider's base URL (or uses the saved
// one) and the host asks it for GET /models, the list every OpenAI-compatible
// server answers (OpenAI, Ollama, llama.cpp, vLLM, LiteLLM). Who may make the host
// connect where:
//
//   - Only admins: the route is admin-only, and the llm.* settings are
//     deployment-wide keys no user can write.
//   - Only where a model endpoint may be saved (CheckBaseURL): https to public,
//     private or loopback addresses; plain http only to loopback or the
//     self-hosted gateway; never link-local, cloud metadata, carrier-grade NAT,
//     multicast, unspecified or reserved addresses.
//   - Checked again on every address dialed (the DNS answer may change between
//     check and use), through no proxy, and a redirect to another origin is not
//     followed: the same rule the LLM plugin applies to every call.
//   - What comes back to the admin is the list of model ids and a sentence:
//     never the endpoint's body or the network's own error text.

// Errors of Probe, for the API to answer 422.
var (
	// ErrNothingToTest is a probe of the builtin provider, which has no endpoint.
	ErrNothingToTest = errors.New("llmgw: the builtin provider runs inside Lectern and has no connection to test")
	// ErrFixedBaseURL is a base URL given for a provider whose base URL is fixed.
	ErrFixedBaseURL = errors.New("llmgw: only the custom and local endpoints take a base URL")
	// ErrBaseURLRefused is a base URL the model-endpoint rule refuses.
	ErrBaseURLRefused = errors.New("llmgw: the base URL is refused")
)

// Bounds of a probe.
const (
	probeTimeout   = 15 * time.Second
	probeMaxBody   = 4 << 20
	maxProbeModels = 500
)

// ProbeParams says what to test. An empty BaseURL or APIKey uses the saved one.
type ProbeParams struct {
	Provider string
	BaseURL  string
	APIKey   string
}

// ProbeResult is what testing a provider's connection found.
type ProbeResult struct {
	// OK is true when the endpoint answered with an OpenAI-compatible model list.
	OK bool `json:"ok"`
	// Endpoint is the host (and port) tested.
	Endpoint string `json:"endpoint"`
	// Models are the model ids the endpoint lists, sorted; empty unless OK.
	Models []string `json:"models"`
	// Message says what was found, or why the endpoint could not be used, in a
	// sentence for people.
	Message string `json:"message"`
}

// Probe asks the provider's endpoint for its models. It fails only for what the
// caller sent (an unknown provider, a refused base URL, nothing to test) or a
// setting that cannot be read; an endpoint that cannot be reached or answers
// something else is a result whose Message says why.
func (g *Gateway) Probe(ctx context.Context, pp ProbeParams) (ProbeResult, error) {
	if pp.Provider == Builtin {
		return ProbeResult{}, ErrNothingToTest
	}
	p, ok := LookupProvider(pp.Provider)
	if !ok {
		return ProbeResult{}, fmt.Errorf("%w: %q", ErrUnknownProvider, pp.Provider)
	}
	base := strings.TrimSpace(pp.BaseURL)
	switch {
	case base != "" && !p.SettableBaseURL():
		return ProbeResult{}, ErrFixedBaseURL
	case base == "" && p.SettableBaseURL():
		saved, err := g.savedBaseURL(ctx, p)
		if err != nil {
			return ProbeResult{}, err
		}
		base = saved
	case base == "":
		base = p.BaseURL
	}
	if err := g.CheckBaseURL(ctx, base); err != nil {
		return ProbeResult{}, fmt.Errorf("%w: %s", ErrBaseURLRefused, strings.TrimPrefix(err.Error(), "netguard: "))
	}
	key := strings.TrimSpace(pp.APIKey)
	if key == "" {
		saved, err := g.cfg.Settings.SystemSecret(ctx, KeyName(p.Name))
		if err != nil && !errors.Is(err, userconfig.ErrNotFound) {
			return ProbeResult{}, fmt.Errorf("llmgw: %w", err)
		}
		key = saved
	}
	u, _ := url.Parse(base) // CheckBaseURL parsed it
	res := ProbeResult{Endpoint: u.Host, Models: []string{}}
	models, why := g.listModels(ctx, u, key)
	if why != "" {
		res.Message = why
		return res, nil
	}
	res.OK, res.Models = true, models
	switch len(models) {
	case 0:
		res.Message = fmt.Sprintf("The endpoint at %s answered, but lists no models: load or pull a model in the runtime first.", u.Host)
	case 1:
		res.Message = fmt.Sprintf("The endpoint at %s answered and lists 1 model.", u.Host)
	default:
		res.Message = fmt.Sprintf("The endpoint at %s answered and lists %d models.", u.Host, len(models))
	}
	return res, nil
}

// listModels calls GET <base>/models and returns the ids listed, or a sentence
// saying why there are none to list.
func (g *Gateway) listModels(ctx context.Context, base *url.URL, key string) ([]string, string) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	where := base.Host
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base.String(), "/")+"/models", nil)
	if err != nil {
		return nil, fmt.Sprintf("The base URL %s cannot be called.", where)
	}
	req.Header.Set("Accept", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := g.probeClient(base).Do(req)
	if err != nil {
		g.cfg.Logger.InfoContext(ctx, "llm endpoint test failed", "endpoint", where, "error", err)
		return nil, unreachable(where, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, probeMaxBody))
	if err != nil {
		g.cfg.Logger.InfoContext(ctx, "llm endpoint test: reading the answer failed", "endpoint", where, "error", err)
		return nil, unreachable(where, err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
		return nil, fmt.Sprintf("The endpoint at %s refused the API key (HTTP %d): check the key, or leave it empty for a runtime that asks for none.", where, resp.StatusCode)
	case resp.StatusCode == http.StatusNotFound:
		return nil, fmt.Sprintf("The endpoint at %s has no model list at /models: check that the base URL is the API's root, such as %s.", where, LocalDefaultBaseURL)
	case resp.StatusCode/100 != 2:
		return nil, fmt.Sprintf("The endpoint at %s answered the model list request with HTTP %d; check that the runtime is healthy.", where, resp.StatusCode)
	}
	ids, ok := modelIDs(body)
	if !ok {
		return nil, fmt.Sprintf("The endpoint at %s answered, but not with an OpenAI-compatible model list: check that the base URL is the API's root, such as %s.", where, LocalDefaultBaseURL)
	}
	return ids, ""
}

// modelIDs reads an OpenAI-compatible model list, {"object": "list", "data":
// [{"id": ..., "object": "model"}]}: its valid ids, sorted and unique. ok is false
// when body is not such a list.
func modelIDs(body []byte) ([]string, bool) {
	var list struct {
		Data *[]struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &list); err != nil || list.Data == nil {
		return nil, false
	}
	ids := []string{}
	for _, m := range *list.Data {
		id := strings.TrimSpace(m.ID)
		if modelPattern.MatchString(id) && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
		if len(ids) == maxProbeModels {
			break
		}
	}
	slices.Sort(ids)
	return ids, true
}

// unreachable says why the endpoint at where could not be asked, in words.
func unreachable(where string, err error) string {
	if errors.Is(err, errProbeRedirect) {
		return fmt.Sprintf("The endpoint at %s redirected to another host, which Lectern does not follow: set the base URL to where it redirects.", where)
	}
	msg := fmt.Sprintf("Lectern could not reach the endpoint at %s: %s.", where, netguard.Reason(err))
	if netguard.Reason(err) == "the server refused the connection" {
		msg += " Is the model runtime running, and listening on that port?"
	}
	return msg
}

var errProbeRedirect = errors.New("llmgw: redirect to another origin")

// probeClient is the HTTP client of one probe: every address dialed passes the
// model-endpoint rule for base's scheme (unless base is the self-hosted gateway,
// which the operator configured), no proxy, and no redirect to another origin.
func (g *Gateway) probeClient(base *url.URL) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second}
	if !slices.ContainsFunc(g.cfg.GatewayHosts, func(h string) bool { return strings.EqualFold(h, base.Hostname()) }) {
		d.Control = netguard.DialControl(netguard.EndpointDialCheck(base.Scheme))
	}
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
		MaxIdleConns:          1,
		DisableKeepAlives:     true,
	}
	return &http.Client{Transport: t, Timeout: probeTimeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Scheme != via[0].URL.Scheme || req.URL.Host != via[0].URL.Host || len(via) > 3 {
			return errProbeRedirect
		}
		return nil
	}}
}

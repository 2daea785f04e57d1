package llmgw

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// register puts role's model on the gateway under Alias(role) with POST
// /model/new, after removing whatever was registered under that id before. The
// provider key travels in that request body only; the gateway keeps it encrypted
// under GATEWAY_SALT_KEY (store 2).
func (g *Gateway) register(ctx context.Context, role string, p Provider, model string, t target) error {
	g.unregister(ctx, role)
	params := map[string]any{"model": p.GatewayPrefix + "/" + model, "api_key": t.apiKey}
	if p.SettableBaseURL() {
		params["api_base"] = t.baseURL
	}
	mode := "chat"
	if role == RoleEmbed {
		mode = "embedding"
	}
	body := map[string]any{
		"model_name":     Alias(role),
		"litellm_params": params,
		"model_info":     map[string]any{"id": Alias(role), "mode": mode},
	}
	if err := g.post(ctx, "/model/new", body, t.apiKey); err != nil {
		return fmt.Errorf("%w: %v", ErrGateway, err)
	}
	g.cfg.Logger.InfoContext(ctx, "llm model registered with the gateway", "role", role, "provider", p.Name, "model", model)
	return nil
}

// unregister removes role's model from the gateway; a model that is not there is
// not an error.
func (g *Gateway) unregister(ctx context.Context, role string) {
	if err := g.post(ctx, "/model/delete", map[string]any{"id": Alias(role)}, ""); err != nil {
		g.cfg.Logger.DebugContext(ctx, "llm gateway model delete", "role", role, "error", err)
	}
}

// Sync registers every assigned cloud model with the gateway again, from store 1:
// after a gateway reset its database is empty, and the settings here are the
// source of truth. Serve calls it at start; a failure is logged per role.
func (g *Gateway) Sync(ctx context.Context) error {
	if !g.GatewayConfigured() {
		return nil
	}
	list, err := g.Assignments(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, a := range list {
		if a.Provider == Builtin {
			continue
		}
		p, ok := LookupProvider(a.Provider)
		if !ok {
			continue
		}
		t, err := g.target(ctx, p)
		if err == nil {
			err = g.register(ctx, a.Role, p, a.Model, t)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("role %s: %w", a.Role, err))
		}
	}
	return errors.Join(errs...)
}

// post sends one admin call to the gateway. Its error never carries the secret:
// the gateway's answer is cut short and scrubbed of it.
func (g *Gateway) post(ctx context.Context, path string, body any, secret string) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(g.cfg.GatewayURL, "/")+path, bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("gateway request: %s", strings.ReplaceAll(err.Error(), g.cfg.GatewayURL, "LLM_GATEWAY_URL"))
	}
	req.Header.Set("Content-Type", "application/json")
	if g.cfg.GatewayKey != "" {
		req.Header.Set("Authorization", "Bearer "+g.cfg.GatewayKey)
	}
	resp, err := g.cfg.HTTP.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			err = ue.Unwrap()
		}
		return fmt.Errorf("gateway %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 == 2 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	text := strings.TrimSpace(string(msg))
	for _, s := range []string{secret, g.cfg.GatewayKey} {
		if s != "" {
			text = strings.ReplaceAll(text, s, "[redacted]")
		}
	}
	return fmt.Errorf("gateway %s answered %d: %s", path, resp.StatusCode, text)
}

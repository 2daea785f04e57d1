package web

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

// Model providers as the admin meets them in onboarding and under Settings →
// Language models: a local runtime next to the cloud providers, and a "Test
// connection" button that asks an endpoint for its models before anything is
// saved (POST /api/admin/llm/providers/{provider}/test).

// localProvider is the provider name of a model runtime on this machine.
const localProvider = "local"

// localDefaultBaseURL is the base URL offered for a local runtime (Ollama's).
const localDefaultBaseURL = "http://127.0.0.1:11434/v1"

// providerChoice is a provider the onboarding wizard offers.
type providerChoice struct {
	Name, Label string
	// BaseURL is true when the provider takes a base URL (and needs no key).
	BaseURL bool
}

// onboardingProviders are the choices of the wizard's model step, the local
// runtime first: it needs no account and sends nothing off the machine.
var onboardingProviders = []providerChoice{
	{Name: localProvider, Label: "Local model (OpenAI-compatible)", BaseURL: true},
	{Name: "openai", Label: "OpenAI"},
	{Name: "anthropic", Label: "Anthropic"},
	{Name: "google", Label: "Google"},
	{Name: "custom_compatible", Label: "Custom OpenAI-compatible endpoint", BaseURL: true},
}

// takesBaseURL reports whether provider's base URL is a setting.
func takesBaseURL(provider string) bool {
	for _, p := range onboardingProviders {
		if p.Name == provider {
			return p.BaseURL
		}
	}
	return false
}

// onboardingRoles are the roles the wizard gives the model chosen after a test:
// the three whose work falls back to the builtin method when the model fails.
var onboardingRoles = []string{"answer", "summarize", "extract"}

// llmProbe is what testing a provider's connection found (llmgw.ProbeResult),
// and which provider was tested.
type llmProbe struct {
	Provider string   `json:"-"`
	OK       bool     `json:"ok"`
	Endpoint string   `json:"endpoint"`
	Models   []string `json:"models"`
	Message  string   `json:"message"`
}

// probe asks the API to test provider with the form's base URL and key (each
// only when filled in; the saved ones otherwise).
func (h *handler) probe(r *http.Request, s *session, provider string) (*llmProbe, error) {
	body := map[string]string{}
	if u := strings.TrimSpace(r.PostFormValue("base_url")); u != "" && takesBaseURL(provider) {
		body["base_url"] = u
	}
	if k := strings.TrimSpace(r.PostFormValue("api_key")); k != "" {
		body["api_key"] = k
	}
	p := &llmProbe{Provider: provider}
	if err := s.c.do(http.MethodPost, "/api/admin/llm/providers/"+pathEscape(provider)+"/test", body, p); err != nil {
		return nil, err
	}
	return p, nil
}

// llmProviderTest tests a provider's connection from the settings page and
// shows the page again with what was found: the models to choose from, or why
// there are none. Nothing is saved; the key typed is not put back in the page.
func (h *handler) llmProviderTest(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	provider := chi.URLParam(r, "provider")
	p, err := h.probe(r, s, provider)
	r.PostForm.Del("api_key")
	if err != nil {
		h.fail(w, r, s, v, err, h.llmPage, nil)
		return
	}
	v.Form, v.Data = r.PostForm, p
	h.llmPage(w, r, s, v)
}

// onboardingLLMTest tests the provider chosen in the wizard's model step and
// shows the step again with its models to choose from.
func (h *handler) onboardingLLMTest(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	v.Title = "Set up Lectern"
	provider := r.PostFormValue("provider")
	p, err := h.probe(r, s, provider)
	r.PostForm.Del("api_key")
	v.Form = r.PostForm
	if err != nil {
		h.logFailure(r, err)
		v.Err, v.Fields, v.status = humanError(err), fieldErrors(err, nil), statusOf(err)
		h.onboardingStep(w, r, v, "llm")
		return
	}
	v.Data = p
	h.onboardingStep(w, r, v, "llm")
}

// assignModel gives model to each of roles, with provider.
func (h *handler) assignModel(s *session, provider, model string, roles []string) error {
	for _, role := range roles {
		body := map[string]string{"provider": provider, "model": model}
		if err := s.c.do(http.MethodPut, "/api/admin/llm/roles/"+pathEscape(role), body, nil); err != nil {
			return err
		}
	}
	return nil
}

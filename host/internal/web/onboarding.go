package web

import (
	"net/http"
	"strings"
)

// onboardingData is the wizard's page data.
type onboardingData struct {
	// Step is account, llm or paper.
	Step  string
	Steps []string
	// Number is the step's position, from 1.
	Number int
	// Providers are the LLM providers the admin may configure, a local model
	// runtime first.
	Providers []providerChoice
	// DefaultBaseURL is offered for a local runtime.
	DefaultBaseURL string
	// Probe is the connection test just made, if any, with the models to choose
	// from.
	Probe *llmProbe
	// Done is true when the instance already has its admin.
	Done bool
}

var onboardingSteps = []string{"account", "llm", "paper"}

// onboardingNeeded asks the API whether the instance still needs its first admin.
// known is false when the API cannot tell (GET /api/onboarding is not served).
func (h *handler) onboardingNeeded(c *caller) (needed, known bool) {
	var st struct {
		Needed bool `json:"needed"`
	}
	if err := c.get("/api/onboarding", &st); err != nil {
		return false, false
	}
	return st.Needed, true
}

// home sends the browser where it belongs: the library when signed in, the
// onboarding wizard on a fresh instance, else sign-in.
func (h *handler) home(w http.ResponseWriter, r *http.Request) {
	c := h.api.caller(w, r)
	if c.session != "" && c.get("/api/me", &me{}) == nil {
		http.Redirect(w, r, landing(c), http.StatusSeeOther)
		return
	}
	if needed, _ := h.onboardingNeeded(c); needed {
		http.Redirect(w, r, "/onboarding", http.StatusSeeOther)
		return
	}
	http.Redirect(w, r, "/signin", http.StatusSeeOther)
}

// onboarding shows one step of the wizard: the first creates the admin and signs it
// in (SPEC "Authentication"); the next steps run with the session it got.
func (h *handler) onboarding(w http.ResponseWriter, r *http.Request) {
	c := h.api.caller(w, r)
	step := r.URL.Query().Get("step")
	v := &view{Title: "Set up Lectern"}
	if step == "llm" || step == "paper" {
		var m me
		if c.session == "" || c.get("/api/me", &m) != nil {
			http.Redirect(w, r, "/onboarding", http.StatusSeeOther)
			return
		}
		v.Me = &m
		h.onboardingStep(w, r, v, step)
		return
	}
	h.onboardingStep(w, r, v, "account")
}

func (h *handler) onboardingStep(w http.ResponseWriter, r *http.Request, v *view, step string) {
	d := &onboardingData{Step: step, Steps: onboardingSteps, Providers: onboardingProviders, DefaultBaseURL: localDefaultBaseURL}
	if p, ok := v.Data.(*llmProbe); ok {
		d.Probe = p
	}
	for i, s := range onboardingSteps {
		if s == step {
			d.Number = i + 1
		}
	}
	if step == "account" && v.Err == nil {
		if needed, known := h.onboardingNeeded(h.api.caller(w, r)); known && !needed {
			d.Done = true
		}
	}
	v.Data = d
	h.show(w, r, "onboarding", v)
}

// onboardingAdmin creates the first admin. The API signs the new account in; its
// session cookie is passed on to the browser, and the wizard goes on with it.
func (h *handler) onboardingAdmin(w http.ResponseWriter, r *http.Request) {
	c := h.api.caller(w, r)
	_ = r.ParseForm()
	email := strings.TrimSpace(r.PostFormValue("email"))
	if email == "" {
		h.onboardingStep(w, r, &view{Title: "Set up Lectern", Form: r.PostForm, status: http.StatusUnprocessableEntity,
			Fields: map[string]string{"email": "is required"},
			Err:    &uiError{What: "Enter your email address.", Do: "It becomes the admin account's sign-in address."}}, "account")
		return
	}
	if err := c.do(http.MethodPost, "/api/onboarding/admin", map[string]string{"email": email}, nil); err != nil {
		h.logFailure(r, err)
		h.onboardingStep(w, r, &view{Title: "Set up Lectern", Form: r.PostForm, Err: humanError(err),
			Fields: fieldErrors(err, nil), status: statusOf(err)}, "account")
		return
	}
	done(w, r, "/onboarding?step=llm", "Your admin account is ready and you are signed in.")
}

// onboardingLLM stores an LLM provider (optional step): a cloud provider's key,
// or a local runtime's base URL (its key optional). A model chosen after a
// connection test is given the answer, summarize and extract roles.
func (h *handler) onboardingLLM(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	v.Title = "Set up Lectern"
	provider := r.PostFormValue("provider")
	key := strings.TrimSpace(r.PostFormValue("api_key"))
	body := map[string]string{}
	if key != "" {
		body["api_key"] = key
	}
	if takesBaseURL(provider) {
		body["base_url"] = strings.TrimSpace(r.PostFormValue("base_url"))
		if body["base_url"] == "" && provider == localProvider {
			body["base_url"] = localDefaultBaseURL
		}
	}
	invalid := func(err error) {
		h.logFailure(r, err)
		r.PostForm.Del("api_key")
		v.Err, v.Form, v.Fields, v.status = humanError(err), r.PostForm, fieldErrors(err, nil), statusOf(err)
		h.onboardingStep(w, r, v, "llm")
	}
	if key == "" && !takesBaseURL(provider) {
		r.PostForm.Del("api_key")
		v.Err, v.Form, v.status = &uiError{What: "Enter the provider's API key.", Do: "A local model needs none: choose it to use a runtime on this machine."},
			r.PostForm, http.StatusUnprocessableEntity
		v.Fields = map[string]string{"api_key": "is required for a cloud provider"}
		h.onboardingStep(w, r, v, "llm")
		return
	}
	if err := s.c.do(http.MethodPut, "/api/admin/llm/providers/"+pathEscape(provider), body, nil); err != nil {
		invalid(err)
		return
	}
	model := strings.TrimSpace(r.PostFormValue("model"))
	if model == "" {
		done(w, r, "/onboarding?step=paper", "The language model provider is saved.")
		return
	}
	if err := h.assignModel(s, provider, model, onboardingRoles); err != nil {
		invalid(err)
		return
	}
	done(w, r, "/onboarding?step=paper", "The language model provider is saved: answers, summaries and extractions use "+model+
		", and the builtin method takes over whenever it fails.")
}

// onboardingUpload uploads the first paper and finishes the wizard on its page.
func (h *handler) onboardingUpload(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	v.Title = "Set up Lectern"
	res, err := h.upload(r, s)
	if err != nil {
		h.logFailure(r, err)
		v.Err, v.status = humanError(err), statusOf(err)
		h.onboardingStep(w, r, v, "paper")
		return
	}
	done(w, r, "/papers/"+res.PaperID+jobQuery(res.Job), "Lectern is set up. Your first paper is being read.")
}

package web

import (
	"net/http"
	"strings"
)

type signInData struct {
	Next string
	// Onboarding is true on a fresh instance without an admin yet.
	Onboarding bool
	// LinkFailed is true when the browser came with a sign-in link that no longer
	// works.
	LinkFailed bool
}

// verifyPath is the address of the sign-in link the API mails.
const verifyPath = "/api/auth/verify"

// isLinkVisit reports whether r is a browser opening a mailed sign-in link. Those
// the dashboard answers itself, with a page; API clients go to the API as before.
func isLinkVisit(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Path == verifyPath && strings.Contains(r.Header.Get("Accept"), "text/html")
}

// verifyLink turns a mailed sign-in link into a session through the API, and
// explains, with a form for a new link, when the link has expired or was used.
func (h *handler) verifyLink(w http.ResponseWriter, r *http.Request) {
	c := h.api.caller(w, r)
	err := c.get(verifyPath+q("token", r.URL.Query().Get("token")), &me{})
	if err == nil {
		done(w, r, "/library", "You are signed in.")
		return
	}
	if isCode(err, "invalid_token") && c.session != "" && c.get("/api/me", &me{}) == nil {
		// The link was used already, most likely by this browser a moment ago.
		done(w, r, "/library", "This sign-in link was used already; you are signed in.")
		return
	}
	h.logFailure(r, err)
	v := &view{Title: "Sign in", Err: humanError(err), status: statusOf(err)}
	if isCode(err, "invalid_token") {
		v.Title = "This sign-in link no longer works"
	}
	h.showSignIn(w, r, v)
}

// signIn shows the sign-in page: a link by email, or the API key on a single-user
// install.
func (h *handler) signIn(w http.ResponseWriter, r *http.Request) {
	h.showSignIn(w, r, &view{Title: "Sign in"})
}

func (h *handler) showSignIn(w http.ResponseWriter, r *http.Request, v *view) {
	next := r.URL.Query().Get("next")
	if r.Method == http.MethodPost {
		next = r.PostFormValue("next")
	}
	if !localPath(next) {
		next = ""
	}
	needed, _ := h.onboardingNeeded(h.api.caller(w, r))
	v.Data = &signInData{Next: next, Onboarding: needed, LinkFailed: r.URL.Path == verifyPath}
	h.show(w, r, "signin", v)
}

// signInLink asks the API to mail a sign-in link. The answer is the same whether or
// not the address has an account.
func (h *handler) signInLink(w http.ResponseWriter, r *http.Request) {
	c := h.api.caller(w, r)
	_ = r.ParseForm()
	email := strings.TrimSpace(r.PostFormValue("email"))
	if email == "" {
		h.showSignIn(w, r, &view{Title: "Sign in", Form: r.PostForm, status: http.StatusUnprocessableEntity,
			Fields: map[string]string{"email": "is required"},
			Err:    &uiError{What: "Enter your email address.", Do: "A sign-in link is sent to it."}})
		return
	}
	if err := c.do(http.MethodPost, "/api/auth/magic-link", map[string]string{"email": email}, nil); err != nil {
		h.logFailure(r, err)
		h.showSignIn(w, r, &view{Title: "Sign in", Form: r.PostForm, Err: humanError(err), Fields: fieldErrors(err, nil), status: statusOf(err)})
		return
	}
	h.show(w, r, "signin_sent", &view{Title: "Check your mail", Data: email})
}

// signInKey signs in with the ops key: the API allows it only on a single-user
// install.
func (h *handler) signInKey(w http.ResponseWriter, r *http.Request) {
	c := h.api.caller(w, r)
	_ = r.ParseForm()
	key := strings.TrimSpace(r.PostFormValue("api_key"))
	// The key is never put back into the form.
	form := r.PostForm
	form.Del("api_key")
	if key == "" {
		h.showSignIn(w, r, &view{Title: "Sign in", Form: form, status: http.StatusUnprocessableEntity,
			Fields: map[string]string{"api_key": "is required"},
			Err:    &uiError{What: "Paste the API key.", Do: "It is the value of SERVICE_API_KEY in the server's configuration."}})
		return
	}
	err := c.doHeaders(http.MethodPost, "/api/auth/api-key-login", nil, nil, http.Header{"X-Api-Key": {key}})
	if err != nil {
		h.logFailure(r, err)
		h.showSignIn(w, r, &view{Title: "Sign in", Form: form, Err: humanError(err), status: statusOf(err),
			Fields: map[string]string{"api_key": "was not accepted"}})
		return
	}
	next := r.PostFormValue("next")
	if !localPath(next) {
		next = "/library"
	}
	done(w, r, next, "You are signed in.")
}

// signOut ends the session.
func (h *handler) signOut(w http.ResponseWriter, r *http.Request, s *session, _ *view) {
	if err := s.c.do(http.MethodPost, "/api/auth/logout", nil, nil); err != nil && !isStatus(err, http.StatusUnauthorized) {
		h.actionFailed(w, r, err, "/library")
		return
	}
	// Clear the cookie even if the API could not.
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteLaxMode})
	done(w, r, "/signin", "You are signed out.")
}

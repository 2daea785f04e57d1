package web

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// session is one signed-in browser request: the API caller acting for it and the
// account it belongs to.
type session struct {
	c  *caller
	me *me
}

// pageFunc renders a page into v; POST handlers call the page that holds their form
// to show it again with an error.
type pageFunc func(w http.ResponseWriter, r *http.Request, s *session, v *view)

// access says who may open a dashboard route.
type access int

const (
	// public routes need no session (sign-in, onboarding, static files).
	public access = iota + 1
	// signedIn routes need a session; without one the browser is sent to sign in.
	signedIn
	// adminOnly routes need an admin's session; others see an explanation.
	adminOnly
)

// withSession resolves the browser's session through GET /api/me and runs page
// with it; without one the browser is sent to sign in and come back.
func (h *handler) withSession(level access, page pageFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c := h.api.caller(w, r)
		var m me
		if c.session == "" {
			h.toSignIn(w, r)
			return
		}
		if err := c.get("/api/me", &m); err != nil {
			if isStatus(err, http.StatusUnauthorized) {
				h.toSignIn(w, r)
				return
			}
			h.view.render(w, r, statusOf(err), "error", &view{Title: "Lectern is not available", Err: humanError(err)})
			return
		}
		s := &session{c: c, me: &m}
		if level == adminOnly && !m.IsAdmin() {
			h.view.render(w, r, http.StatusForbidden, "error", &view{Title: "Admins only", Me: &m,
				Err: &uiError{What: "This page is for admins.", Do: "Ask an admin of this Lectern if you need something changed here."}})
			return
		}
		// An upload's multipart body is forwarded to the API as it came; other forms
		// are read here.
		if r.Method == http.MethodPost && !strings.HasPrefix(r.Header.Get("Content-Type"), "multipart/") {
			_ = r.ParseForm()
		}
		page(w, r, s, &view{Me: &m})
	}
}

// toSignIn sends the browser to the sign-in page, to come back to this page after.
func (h *handler) toSignIn(w http.ResponseWriter, r *http.Request) {
	next := ""
	if r.Method == http.MethodGet && r.URL.Path != "/" {
		next = r.URL.RequestURI()
	}
	http.Redirect(w, r, "/signin"+q("next", next), http.StatusSeeOther)
}

// show renders page with status 200, or v's status when a failed form set one.
func (h *handler) show(w http.ResponseWriter, r *http.Request, name string, v *view) {
	status := v.status
	if status == 0 {
		status = http.StatusOK
	}
	h.view.render(w, r, status, name, v)
}

// fail shows again the page holding a rejected form, with the error, the fields the
// API named and everything that was typed. A lost session goes to sign in instead.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, s *session, v *view, err error, page pageFunc, rename map[string]string) {
	if errors.Is(err, context.Canceled) {
		return
	}
	if isStatus(err, http.StatusUnauthorized) && !isCode(err, "invalid_api_key") && !isCode(err, "missing_api_key") {
		h.toSignIn(w, r)
		return
	}
	h.logFailure(r, err)
	v.Err = humanError(err)
	v.Form = r.PostForm
	v.Fields = fieldErrors(err, rename)
	v.status = statusOf(err)
	page(w, r, s, v)
}

func (h *handler) logFailure(r *http.Request, err error) {
	var ae *apiError
	if errors.As(err, &ae) && ae.Status > 0 && ae.Status < 500 {
		return
	}
	h.log.WarnContext(r.Context(), "dashboard: API call failed", "path", r.URL.Path, "error", err)
}

// statusOf is the status a page shows an error with.
func statusOf(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		if ae.Status == 0 {
			return http.StatusBadGateway
		}
		return ae.Status
	}
	return http.StatusInternalServerError
}

// done redirects after a successful form (post/redirect/get) with a message.
func done(w http.ResponseWriter, r *http.Request, to, msg string) {
	if msg != "" {
		setFlash(w, msg)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}

// back is the local page a form asked to return to, else def.
func back(r *http.Request, def string) string {
	b := r.PostFormValue("back")
	if localPath(b) {
		return b
	}
	return def
}

// localPath reports whether p is a path on this site (not another host).
func localPath(p string) bool {
	if !strings.HasPrefix(p, "/") || strings.HasPrefix(p, "//") || strings.HasPrefix(p, "/\\") {
		return false
	}
	u, err := url.Parse(p)
	return err == nil && u.Host == "" && u.Scheme == ""
}

// actionFailed reports a failed button action (no typed input to keep) on the page
// the browser came from.
func (h *handler) actionFailed(w http.ResponseWriter, r *http.Request, err error, to string) {
	if isStatus(err, http.StatusUnauthorized) {
		h.toSignIn(w, r)
		return
	}
	h.logFailure(r, err)
	ue := humanError(err)
	setFlashError(w, ue)
	http.Redirect(w, r, to, http.StatusSeeOther)
}

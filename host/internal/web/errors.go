package web

import (
	"errors"
	"strings"
)

// uiError is an error as people read it: what went wrong and what to do about it.
// It never carries raw exception text.
type uiError struct {
	What string
	Do   string
	// RequestID is the API's request id, shown for errors the operator must look
	// up in the log.
	RequestID string
}

// message is the text of one known API error code.
type message struct{ what, do string }

// messages are the API error codes (docs/api-errors.md) people meet in the
// dashboard. An empty what keeps the API's own sentence, which is written for people.
var messages = map[string]message{
	"unreachable":             {"The dashboard cannot reach the Lectern API.", "Check that Lectern is running (lectern serve), then reload this page."},
	"api_unreachable":         {"The dashboard cannot reach the Lectern API.", "Check that Lectern is running (lectern serve), then reload this page."},
	"not_authenticated":       {"You are not signed in, or your session has ended.", "Sign in again."},
	"authentication_required": {"You are not signed in, or your session has ended.", "Sign in again."},
	"admin_required":          {"Only an admin can do this.", "Ask an admin of this Lectern to do it for you."},
	"not_found":               {"This was not found. It may have been deleted, or it is not yours.", "Go back and choose it again from the list."},
	"validation_error":        {"", "Correct the marked fields and send the form again."},
	"bad_request":             {"The request could not be read.", "Check what you entered and send the form again."},
	"rate_limited":            {"Too many attempts in a short time.", "Wait a minute, then try again."},
	"already_onboarded":       {"This Lectern already has its admin.", "Sign in instead: ask for a sign-in link, or use the API key on a single-user install."},
	"onboarding_not_local":    {"The first admin can only be created from the machine Lectern runs on.", "Open the dashboard on that machine (http://localhost:3001), or ask the operator to do it."},
	"not_single_user":         {"Signing in with the API key works only while Lectern has exactly one account, its admin.", "Ask for a sign-in link by email instead."},
	"invalid_token":           {"This sign-in link has expired or was used already.", "Each link works once and only for a short time. Enter your email address below to get a new one."},
	"invalid_api_key":         {"That API key is not valid.", "Copy SERVICE_API_KEY from the server's configuration and try again."},
	"missing_api_key":         {"No API key was given.", "Paste the value of SERVICE_API_KEY from the server's configuration."},
	"ops_key_not_configured":  {"This Lectern has no API key configured, so it cannot be used to sign in.", "Ask for a sign-in link by email, or have the operator set SERVICE_API_KEY."},
	"cross_origin_refused":    {"The request came from another site and was refused.", "Open the dashboard directly and send the form again."},
	"not_a_pdf":               {"The file is not a PDF.", "Choose a PDF file and upload it again."},
	"too_large":               {"The file is too large (the limit is 50 MB).", "Compress or split the PDF, then upload it again."},
	"insufficient_storage":    {"The server's disk is full, so the PDF was not kept.", "Try again later, or ask the operator to free space."},
	"pdf_unreadable":          {"", "Try another copy of the PDF."},
	"last_admin":              {"The last admin can be neither demoted nor deleted.", "Make another user an admin first."},
	"email_taken":             {"", "Use another address, or find the existing account in the list."},
	"already_exists":          {"", "Choose another name."},
	"card_not_active":         {"This card is not active, so it cannot be reviewed.", "Activate it on the paper page, or go on with the next card."},
	"job_finished":            {"The job has already finished.", "Nothing to cancel."},
	"job_kind_forbidden":      {"You may not start this kind of job.", "Ask an admin."},
	"system_key":              {"This setting is deployment-wide and only an admin can change it.", "Admins change it under Settings, Language models."},
	"unsupported_media_type":  {"The request was sent in a form the API does not accept.", "Reload the page and try again."},
	"unavailable":             {"", "Try again in a moment. If it keeps happening, the operator can look in the server log."},
	"review_out_of_order":     {"", "Reload the review page."},
	"job_already_active":      {"A run is already under way: your deck appears on this page when it is done.", "Wait for it; there is no need to start another."},
	"nothing_to_follow":       {"", "Pick a topic or an author first, on the first two steps of setting up your morning deck."},
}

// humanError turns an error of a page into text for people.
func humanError(err error) *uiError {
	var ae *apiError
	if !errors.As(err, &ae) {
		return &uiError{What: "Something went wrong in the dashboard.", Do: "Reload the page and try again. If it keeps happening, the operator can look in the server log."}
	}
	ue := &uiError{RequestID: ae.RequestID}
	m, known := messages[ae.Code]
	switch {
	case known:
		ue.What, ue.Do = m.what, m.do
		if ue.What == "" {
			ue.What = sentence(ae.Detail, "The request was refused.")
		}
	case ae.Status >= 500:
		ue.What = "Something went wrong on the server."
		ue.Do = "Try again. If it keeps happening, give the operator the request id below."
	case ae.Status == 404:
		m := messages["not_found"]
		ue.What, ue.Do = m.what, m.do
	default:
		ue.What = sentence(ae.Detail, "The request was refused.")
		ue.Do = "Check what you entered and try again."
	}
	if ae.Status > 0 && ae.Status < 500 {
		ue.RequestID = ""
	}
	return ue
}

// sentence returns s as a sentence, or def when s is empty.
func sentence(s, def string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return def
	}
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "?") && !strings.HasSuffix(s, "!") {
		s += "."
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// fieldErrors maps the API's rejected fields to the form's input names; rename maps
// an API field to an input name when they differ.
func fieldErrors(err error, rename map[string]string) map[string]string {
	var ae *apiError
	if !errors.As(err, &ae) || len(ae.Fields) == 0 {
		return nil
	}
	out := map[string]string{}
	for _, f := range ae.Fields {
		name := f.Field
		if r, ok := rename[name]; ok {
			name = r
		}
		out[name] = f.Message
	}
	return out
}

package web

import (
	"math"
	"net/http"
	"strconv"
	"strings"
)

// The weights editor (/today/weights): how much each signal counts in the deck's
// score, each from 0 to 1, saved through PUT /api/pulse/weights.

// weightRow is one signal of the editor.
type weightRow struct {
	pulseSignal
	// Value is what the input shows: what was typed into a rejected form, else the
	// stored weight.
	Value string
}

type weightsData struct{ Rows []weightRow }

// weightsPage shows the caller's weights as inputs from 0 to 1.
func (h *handler) weightsPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	d := &weightsData{}
	v.Title, v.Nav, v.Data = "Pulse weights", "today", d
	var weights map[string]float64
	if err := s.c.get("/api/pulse/weights", &weights); err != nil {
		if isStatus(err, http.StatusUnauthorized) {
			h.toSignIn(w, r)
			return
		}
		if v.Err == nil {
			v.Err = humanError(err)
		}
	}
	for _, sig := range pulseSignals {
		val, ok := weights[sig.Name]
		if !ok {
			val = sig.Default
		}
		row := weightRow{pulseSignal: sig, Value: formatWeight(val)}
		if typed, ok := v.Form[sig.Name]; ok && len(typed) > 0 {
			row.Value = typed[0]
		}
		d.Rows = append(d.Rows, row)
	}
	h.show(w, r, "pulse_weights", v)
}

// formatWeight shows a weight with at most two decimals: "0.2", "0.05", "1".
func formatWeight(f float64) string {
	return strconv.FormatFloat(math.Round(f*100)/100, 'f', -1, 64)
}

// weightsSave stores the weights of the form, or the defaults when it asks to
// reset. Each must be a number from 0 to 1: the form says which is not, rather
// than clamping what was typed.
func (h *handler) weightsSave(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	body := map[string]float64{}
	msg := "Your weights are saved. They rank the next deck; today's keeps its order."
	if r.PostFormValue("reset") != "" {
		for _, sig := range pulseSignals {
			body[sig.Name] = sig.Default
		}
		msg = "The weights are back to their defaults. They rank the next deck."
	} else {
		var err error
		if body, err = parseWeights(r); err != nil {
			h.fail(w, r, s, v, err, h.weightsPage, nil)
			return
		}
	}
	if err := s.c.do(http.MethodPut, "/api/pulse/weights", body, nil); err != nil {
		h.fail(w, r, s, v, err, h.weightsPage, nil)
		return
	}
	done(w, r, "/today/weights", msg)
}

// parseWeights reads each signal's weight from the form: the required ones must
// be there, an optional one left empty keeps its value.
func parseWeights(r *http.Request) (map[string]float64, error) {
	out := map[string]float64{}
	var fields []fieldError
	for _, sig := range pulseSignals {
		raw := strings.TrimSpace(strings.ReplaceAll(r.PostFormValue(sig.Name), ",", "."))
		if raw == "" && !sig.Required {
			continue
		}
		f, err := strconv.ParseFloat(raw, 64)
		if err != nil || math.IsNaN(f) || f < 0 || f > 1 {
			fields = append(fields, fieldError{Field: sig.Name, Message: "must be a number from 0 to 1, such as 0.25"})
			continue
		}
		out[sig.Name] = f
	}
	if len(fields) > 0 {
		return nil, &apiError{Status: http.StatusUnprocessableEntity, Code: "validation_error",
			Detail: "Some weights are not numbers from 0 to 1, so nothing was saved.", Fields: fields}
	}
	return out, nil
}

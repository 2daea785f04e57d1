package infraevents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"

	"github.com/lectern-research/lectern/host/internal/httpx"
)

// API serves POST /infra-events. The route's resolver (auth.InfraKey) has checked
// the key and the source address before Ingest runs.
type API struct {
	store *Store
	log   *slog.Logger
}

// NewAPI returns the handler over store.
func NewAPI(store *Store, log *slog.Logger) *API { return &API{store: store, log: log} }

// Accepted is the answer to an ingest: how many events were stored.
type Accepted struct {
	Accepted int `json:"accepted"`
}

// Ingest stores one event (a JSON object) or a batch (a JSON array of at most
// MaxBatch events), all or none, and answers 202.
func (a *API) Ingest(w http.ResponseWriter, r *http.Request) {
	var raw json.RawMessage
	if !httpx.DecodeJSON(w, r, &raw, MaxBody) {
		return
	}
	events, apiErr := decode(raw)
	if apiErr != nil {
		httpx.Err(w, r, apiErr)
		return
	}
	if err := a.store.Insert(r.Context(), events); err != nil {
		httpx.Err(w, r, httpx.Unavailable("The events could not be stored; send them again.", err))
		return
	}
	httpx.JSON(w, http.StatusAccepted, Accepted{Accepted: len(events)})
}

// decode reads an event or a batch of events and normalizes each.
func decode(raw json.RawMessage) ([]Event, *httpx.Error) {
	raw = bytes.TrimSpace(raw)
	var in []Event
	if len(raw) > 0 && raw[0] == '[' {
		if err := strictDecode(raw, &in); err != nil {
			return nil, httpx.DecodeError(err, &in)
		}
	} else {
		var one Event
		if err := strictDecode(raw, &one); err != nil {
			return nil, httpx.DecodeError(err, &one)
		}
		in = []Event{one}
	}
	switch {
	case len(in) == 0:
		return nil, httpx.Invalid("The batch is empty; send at least one event.")
	case len(in) > MaxBatch:
		return nil, &httpx.Error{Status: http.StatusRequestEntityTooLarge, Code: "too_many_events",
			Detail: fmt.Sprintf("A request may carry at most %d events; this one has %d. Send them in smaller batches.", MaxBatch, len(in))}
	}
	out := make([]Event, 0, len(in))
	for i, e := range in {
		n, err := Normalize(i, e)
		var inv *InvalidError
		if errors.As(err, &inv) {
			field := fmt.Sprintf("events[%d].%s", inv.Index, inv.Field)
			return nil, httpx.Invalid("Event "+fmt.Sprint(inv.Index)+": the "+inv.Field+" "+inv.Rule+".",
				httpx.FieldError{Field: field, Message: inv.Rule})
		}
		out = append(out, n)
	}
	return out, nil
}

func strictDecode(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("infraevents: trailing data after the JSON value")
	}
	return nil
}

package web

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/lectern-research/lectern/host/internal/sse"
)

// answer is a RAG answer collected from the API's stream, for a browser without
// JavaScript (with it, app.js reads the stream itself).
type answer struct {
	Question  string
	Text      string
	Citations []citation
	Method    string
	Model     string
	Answered  bool
	// Fallback, when set, says why the builtin method answered although a model
	// is assigned to answers.
	Fallback *fallback
	// Err is set when the stream reported an error.
	Err *uiError
}

// fallback is the API's account of an assigned model that failed, so that the
// builtin method answered instead (rag.Fallback): the role, the provider and
// endpoint it failed at, why, and the whole sentence to show.
type fallback struct {
	Role     string `json:"role"`
	Provider string `json:"provider"`
	Endpoint string `json:"endpoint"`
	Model    string `json:"model"`
	Reason   string `json:"reason"`
	Message  string `json:"message"`
}

// Text is the note shown under the answer: the API's sentence, which names the
// role, the provider and endpoint and why.
func (f *fallback) Text() string {
	return sentence(f.Message, "The model assigned to answers failed, so the builtin extractive method answered.")
}

type askData struct {
	Scope    string
	Projects []project
	Answer   *answer
}

// ask sends a question to POST /api/rag/ask and reads the whole streamed answer.
func (h *handler) ask(s *session, body map[string]any) (*answer, error) {
	resp, err := s.c.stream(http.MethodPost, "/api/rag/ask", body)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	a := &answer{}
	var text strings.Builder
	rd := sse.NewReader(resp.Body)
	for {
		ev, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		switch ev.Name {
		case "token":
			var t struct {
				Text string `json:"text"`
			}
			if json.Unmarshal(ev.Data, &t) == nil {
				text.WriteString(t.Text)
			}
		case "reset":
			// The assigned model failed after its text began; the builtin
			// method's answer follows.
			text.Reset()
		case "citations":
			var c struct {
				Citations []citation `json:"citations"`
			}
			if json.Unmarshal(ev.Data, &c) == nil {
				a.Citations = c.Citations
			}
		case "error":
			var e struct {
				Message string `json:"message"`
				Code    string `json:"code"`
			}
			_ = json.Unmarshal(ev.Data, &e)
			a.Err = humanError(&apiError{Status: http.StatusBadGateway, Code: e.Code, Detail: e.Message})
			if e.Message != "" && a.Err.What == "Something went wrong on the server." {
				a.Err.What = sentence(e.Message, a.Err.What)
			}
		case sse.DoneEvent:
			var d struct {
				Model    string    `json:"model"`
				Method   string    `json:"method"`
				Answered bool      `json:"answered"`
				Fallback *fallback `json:"fallback"`
			}
			_ = json.Unmarshal(ev.Data, &d)
			a.Model, a.Method, a.Answered, a.Fallback = d.Model, d.Method, d.Answered, d.Fallback
			a.Text = text.String()
			return a, nil
		}
	}
	a.Text = text.String()
	return a, nil
}

// askPage is the question box over the library, the corpus or a project.
func (h *handler) askPage(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	d := &askData{Scope: r.URL.Query().Get("scope")}
	if v.Form != nil {
		d.Scope = v.Form.Get("scope")
	}
	if d.Scope == "" {
		d.Scope = "library"
	}
	if a, ok := v.Data.(*answer); ok {
		d.Answer = a
	}
	var ps struct {
		Items []project `json:"items"`
	}
	_ = s.c.get("/api/projects", &ps)
	d.Projects = ps.Items
	v.Title, v.Nav, v.Data = "Ask", "ask", d
	h.show(w, r, "answer", v)
}

// askPost answers a question without JavaScript.
func (h *handler) askPost(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	question := strings.TrimSpace(r.PostFormValue("question"))
	scope := r.PostFormValue("scope")
	body := map[string]any{"question": question, "scope": scope}
	if scope == "project" {
		body["project_id"] = r.PostFormValue("project_id")
	}
	v.Form = r.PostForm
	if question == "" {
		v.Err, v.Fields, v.status = &uiError{What: "Type a question first.", Do: "Ask about anything in your papers."},
			map[string]string{"question": "is required"}, http.StatusUnprocessableEntity
		h.askPage(w, r, s, v)
		return
	}
	a, err := h.ask(s, body)
	if err != nil {
		h.fail(w, r, s, v, err, h.askPage, map[string]string{"project_id": "scope"})
		return
	}
	a.Question = question
	v.Data = a
	h.askPage(w, r, s, v)
}

// paperAsk answers a question about one paper without JavaScript, on its page.
func (h *handler) paperAsk(w http.ResponseWriter, r *http.Request, s *session, v *view) {
	id := chi.URLParam(r, "id")
	question := strings.TrimSpace(r.PostFormValue("question"))
	v.Form = r.PostForm
	if question == "" {
		v.Err, v.Fields, v.status = &uiError{What: "Type a question first.", Do: "Ask about anything in this paper."},
			map[string]string{"question": "is required"}, http.StatusUnprocessableEntity
		h.paperPage(w, r, s, v)
		return
	}
	a, err := h.ask(s, map[string]any{"question": question, "scope": "papers", "paper_ids": []string{id}})
	if err != nil {
		h.fail(w, r, s, v, err, h.paperPage, nil)
		return
	}
	a.Question = question
	h.paperPageWithAnswer(w, r, s, v, a)
}

func (h *handler) paperPageWithAnswer(w http.ResponseWriter, r *http.Request, s *session, v *view, a *answer) {
	v.answer = a
	h.paperPage(w, r, s, v)
}

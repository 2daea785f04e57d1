package llm

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// The host and every LLM plugin share one prompt layout, so that a model that
// needs no prompt at all (the builtin extractive plugin) can read the same request
// a real model reads:
//
//   - the first line of the system message is "Task: <task>" (one of the Task
//     constants), followed by natural-language instructions;
//   - the last user message carries the request in fenced parts: an optional
//     <question> element and a <documents> element whose <document> children hold
//     the paper text.
//
// Paper text is untrusted input. It only ever travels inside <document> elements,
// XML-escaped, so that nothing in a paper can close the fence and pose as an
// instruction; the system message tells the model that everything inside
// <documents> is data to quote, never instructions to follow.

// Tasks a request can ask for.
const (
	TaskAnswer    = "answer"    // answer the question from the documents, citing [S1]-style ids
	TaskSummarize = "summarize" // a Summary of the documents (JSON)
	TaskExtract   = "extract"   // an Extraction with verbatim quotes (JSON)
	TaskCards     = "cards"     // CardDrafts from key sentences (JSON)
	TaskRelevance = "relevance" // a Relevance judgement of the documents to the question (JSON)
)

// Document is one fenced piece of paper text.
type Document struct {
	// ID is what an answer cites, e.g. "S1". Required.
	ID string `xml:"id,attr"`
	// PaperID, Title, Page and Section say where the text comes from.
	PaperID string `xml:"paper_id,attr,omitempty"`
	Title   string `xml:"title,attr,omitempty"`
	Page    int    `xml:"page,attr,omitempty"`
	Section string `xml:"section,attr,omitempty"`
	// Text is the paper text, verbatim.
	Text string `xml:",chardata"`
}

type documents struct {
	XMLName xml.Name   `xml:"documents"`
	Docs    []Document `xml:"document"`
}

// FormatRequest renders the user message of a request: the question (when any) and
// the documents, each escaped so that its text cannot leave its element. Control
// characters other than tab and line breaks (a form feed between pages) become
// line breaks.
func FormatRequest(question string, docs []Document) string {
	var b strings.Builder
	if question != "" {
		b.WriteString("<question>\n")
		_ = xml.EscapeText(&b, []byte(question))
		b.WriteString("\n</question>\n")
	}
	b.WriteString("<documents>\n")
	for _, d := range docs {
		b.WriteString(`<document id="`)
		_ = xml.EscapeText(&b, []byte(d.ID))
		b.WriteString(`"`)
		attr := func(name, v string) {
			if v == "" {
				return
			}
			b.WriteString(" " + name + `="`)
			_ = xml.EscapeText(&b, []byte(v))
			b.WriteString(`"`)
		}
		attr("paper_id", d.PaperID)
		attr("title", d.Title)
		if d.Page > 0 {
			attr("page", strconv.Itoa(d.Page))
		}
		attr("section", d.Section)
		b.WriteString(">\n")
		_ = xml.EscapeText(&b, []byte(controlsToSpace(d.Text)))
		b.WriteString("\n</document>\n")
	}
	b.WriteString("</documents>")
	return b.String()
}

// controlsToSpace turns the control characters XML cannot carry (a PDF's form
// feed between pages among them) into line breaks, which read the same; left in,
// the escaper would turn them into U+FFFD.
func controlsToSpace(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\t' && r != '\n' && r != '\r' {
			return '\n'
		}
		return r
	}, s)
}

// ErrNoDocuments is returned by ParseRequest when the message has no <documents>.
var ErrNoDocuments = errors.New("llm: request has no <documents> element")

// ParseRequest reads back what FormatRequest wrote: the question and the documents,
// unescaped, with the newline FormatRequest adds around each text removed.
func ParseRequest(msg string) (question string, docs []Document, err error) {
	if q, ok := element(msg, "question"); ok {
		var s struct {
			Text string `xml:",chardata"`
		}
		if err := xml.Unmarshal([]byte("<q>"+q+"</q>"), &s); err != nil {
			return "", nil, fmt.Errorf("llm: question: %w", err)
		}
		question = strings.TrimSpace(s.Text)
	}
	start := strings.Index(msg, "<documents>")
	end := strings.LastIndex(msg, "</documents>")
	if start < 0 || end < start {
		return question, nil, ErrNoDocuments
	}
	var ds documents
	if err := xml.Unmarshal([]byte(msg[start:end+len("</documents>")]), &ds); err != nil {
		return question, nil, fmt.Errorf("llm: documents: %w", err)
	}
	for i := range ds.Docs {
		ds.Docs[i].Text = strings.TrimSuffix(strings.TrimPrefix(ds.Docs[i].Text, "\n"), "\n")
	}
	return question, ds.Docs, nil
}

func element(msg, name string) (string, bool) {
	open, closing := "<"+name+">", "</"+name+">"
	i := strings.Index(msg, open)
	if i < 0 {
		return "", false
	}
	j := strings.Index(msg[i:], closing)
	if j < 0 {
		return "", false
	}
	return msg[i+len(open) : i+j], true
}

// TaskOf returns the task named on the first line of the first system message
// ("Task: answer"), or "" when there is none.
func TaskOf(msgs []Message) string {
	for _, m := range msgs {
		if m.Role != RoleSystem {
			continue
		}
		line, _, _ := strings.Cut(m.Content, "\n")
		if t, ok := strings.CutPrefix(strings.TrimSpace(line), "Task:"); ok {
			return strings.TrimSpace(t)
		}
		return ""
	}
	return ""
}

// LastUser returns the content of the last user message.
func LastUser(msgs []Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == RoleUser {
			return msgs[i].Content
		}
	}
	return ""
}

// Summary is the JSON answer of TaskSummarize.
type Summary struct {
	// TLDR is one sentence.
	TLDR string `json:"tldr"`
	// Summary is a paragraph or a few.
	Summary string `json:"summary"`
	// KeyFindings are short findings, each with a verbatim supporting quote.
	KeyFindings []Finding `json:"key_findings"`
}

// Finding is a statement with the verbatim quote that supports it.
type Finding struct {
	Text  string `json:"text"`
	Quote string `json:"quote"`
}

// Extraction item types.
const (
	ItemClaim      = "claim"
	ItemMethod     = "method"
	ItemDataset    = "dataset"
	ItemResult     = "result"
	ItemLimitation = "limitation"
)

// Extraction is the JSON answer of TaskExtract.
type Extraction struct {
	Items []ExtractionItem `json:"items"`
}

// ExtractionItem is one extracted item with its verbatim supporting quote.
type ExtractionItem struct {
	// Type is one of the Item constants.
	Type string `json:"type"`
	// Content states the item in a sentence.
	Content string `json:"content"`
	// Quote is copied verbatim from the document.
	Quote string `json:"quote"`
	// Confidence, from 0 to 1, is how sure the provider is of Type. The host shows
	// an item below LabelConfidenceFloor as unlabelled rather than risk a wrong
	// label. Nil (a provider that does not say) is taken as sure.
	Confidence *float64 `json:"confidence,omitempty"`
}

// LabelConfidenceFloor is the Confidence under which an extraction item's Type is
// not shown: a researcher is better served by "unlabelled" than by a wrong label.
const LabelConfidenceFloor = 0.5

// CardDrafts is the JSON answer of TaskCards.
type CardDrafts struct {
	Cards []CardDraft `json:"cards"`
}

// CardDraft is one flashcard draft; Quote is the sentence it was made from.
type CardDraft struct {
	Front string `json:"front"`
	Back  string `json:"back"`
	Quote string `json:"quote"`
}

// Relevance is the JSON answer of TaskRelevance: scores from 1 to 10.
type Relevance struct {
	Relevance int    `json:"relevance"`
	Novelty   int    `json:"novelty"`
	Reason    string `json:"reason"`
}

// Schema returns the JSON Schema of a task's JSON answer, for ChatRequest's
// ResponseSchema; nil for TaskAnswer, whose answer is prose.
func Schema(task string) *JSONSchema {
	str := map[string]any{"type": "string"}
	obj := func(props map[string]any) map[string]any {
		req := make([]string, 0, len(props))
		for k := range props {
			req = append(req, k)
		}
		slices.Sort(req)
		return map[string]any{"type": "object", "properties": props, "required": req, "additionalProperties": false}
	}
	arr := func(items any) map[string]any { return map[string]any{"type": "array", "items": items} }
	var s map[string]any
	switch task {
	case TaskSummarize:
		s = obj(map[string]any{"tldr": str, "summary": str, "key_findings": arr(obj(map[string]any{"text": str, "quote": str}))})
	case TaskExtract:
		kinds := map[string]any{"type": "string", "enum": []string{ItemClaim, ItemMethod, ItemDataset, ItemResult, ItemLimitation}}
		conf := map[string]any{"type": "number", "minimum": 0, "maximum": 1}
		s = obj(map[string]any{"items": arr(obj(map[string]any{"type": kinds, "content": str, "quote": str, "confidence": conf}))})
	case TaskCards:
		s = obj(map[string]any{"cards": arr(obj(map[string]any{"front": str, "back": str, "quote": str}))})
	case TaskRelevance:
		n := map[string]any{"type": "integer", "minimum": 1, "maximum": 10}
		s = obj(map[string]any{"relevance": n, "novelty": n, "reason": str})
	default:
		return nil
	}
	b, _ := json.Marshal(s)
	return &JSONSchema{Name: "lectern_" + task, Schema: b, Strict: true}
}

// Metadata keys and values every provider sets on its last chunk and embed answer.
const (
	// MetaMethod says how the output was made: MethodGenerative or
	// MethodExtractive (chat), MethodLexical or MethodNeural (embeddings).
	MetaMethod       = "method"
	MethodExtractive = "extractive"
	MethodGenerative = "generative"
	MethodLexical    = "lexical"
	MethodNeural     = "neural"
)

// Credential keys the host sends per call.
const (
	// CredAPIKey is the upstream API key (or the gateway's key).
	CredAPIKey = "api_key"
	// CredBaseURL is the OpenAI-compatible base URL to call, already checked by the
	// host (SPEC rule 4).
	CredBaseURL = "base_url"
	// CredOperatorEndpoint is "true" when CredBaseURL is the operator's own
	// self-hosted gateway (LLM_GATEWAY_URL), which the host does not check. Every
	// other base URL is dialed only where netguard.EndpointAddr allows, on each
	// connection (DNS may change after the host's check).
	CredOperatorEndpoint = "operator_endpoint"
)

// JSONBody returns the JSON document of a JSON task's answer: the text without
// surrounding white space or a Markdown code fence (```json ... ```), which some
// models add although a response schema asked for bare JSON.
func JSONBody(text string) []byte {
	t := strings.TrimSpace(text)
	if rest, ok := strings.CutPrefix(t, "```"); ok {
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:] // the fence's info string ("json")
			if body, ok := strings.CutSuffix(strings.TrimSpace(rest), "```"); ok {
				t = strings.TrimSpace(body)
			}
		}
	}
	return []byte(t)
}

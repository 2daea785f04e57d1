package web

import (
	"encoding/json"
	"time"
	"unicode/utf8"
)

// The shapes below are the dashboard's reading of the API's JSON answers
// (/api/openapi.json): only the fields the pages show. The dashboard is an HTTP
// client of the API, so it keeps its own copies instead of importing the API's
// packages.

type me struct {
	ID          string `json:"id"`
	Email       string `json:"email"`
	Role        string `json:"role"`
	DisplayName string `json:"display_name"`
	Timezone    string `json:"timezone"`
}

// IsAdmin reports whether the account is an admin.
func (m *me) IsAdmin() bool { return m != nil && m.Role == "admin" }

// Name is how the account is greeted.
func (m *me) Name() string {
	if m.DisplayName != "" {
		return m.DisplayName
	}
	return m.Email
}

type author struct {
	Name        string `json:"name"`
	Affiliation string `json:"affiliation"`
}

type overlay struct {
	InLibrary bool   `json:"in_library"`
	State     string `json:"state"`
	Starred   bool   `json:"starred"`
	Rating    *int   `json:"rating"`
	Notes     string `json:"notes"`
}

type paper struct {
	ID              string         `json:"id"`
	DOI             string         `json:"doi"`
	ArxivID         string         `json:"arxiv_id"`
	Title           string         `json:"title"`
	Authors         []author       `json:"authors"`
	Abstract        string         `json:"abstract"`
	PublicationDate string         `json:"publication_date"`
	Venue           string         `json:"venue"`
	URL             string         `json:"url"`
	PDFURL          string         `json:"pdf_url"`
	Source          string         `json:"source"`
	CitationCount   *int           `json:"citation_count"`
	Metadata        map[string]any `json:"metadata"`
	DiscoveredAt    time.Time      `json:"discovered_at"`
	Overlay         overlay        `json:"overlay"`
	// Provenance names each field's origin ("pdf" or a source); Unverified lists
	// the fields read from the PDF and not yet checked against a source.
	Provenance map[string]string `json:"provenance"`
	Unverified []string          `json:"unverified"`
	// Sources and Score are set on search results.
	Sources []string `json:"sources"`
}

// UploadState is the state of an uploaded PDF's reading: pending, ready, or "".
func (p paper) UploadState() string {
	up, _ := p.Metadata["upload"].(map[string]any)
	s, _ := up["state"].(string)
	return s
}

// FromPDF reports whether the field's value was read from the PDF and not yet
// checked against a source.
func (p paper) FromPDF(field string) bool { return p.Provenance[field] == "pdf" }

// CheckedBy is the source that gave the field's value, or "" when none did.
func (p paper) CheckedBy(field string) string {
	if s := p.Provenance[field]; s != "pdf" {
		return s
	}
	return ""
}

// Checked says how the paper's last check against the sources ended, in words;
// "" when it was never checked.
func (p paper) Checked() string {
	e, _ := p.Metadata["enrichment"].(map[string]any)
	switch e["outcome"] {
	case "found":
		return "Checked against the sources."
	case "not_found":
		return "No source knows this paper."
	case "unreachable":
		return "The sources could not be reached; Lectern tries again later."
	case "no_sources":
		return "No paper source is running on this host."
	}
	return ""
}

// Year is the paper's publication year, or "".
func (p paper) Year() string {
	if len(p.PublicationDate) >= 4 {
		return p.PublicationDate[:4]
	}
	return ""
}

type paperPage struct {
	Items      []paper `json:"items"`
	NextCursor string  `json:"next_cursor"`
}

type jobProgress struct {
	Seq     int64  `json:"seq"`
	Current int64  `json:"current"`
	Total   int64  `json:"total"`
	Message string `json:"message"`
}

type jobError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type job struct {
	ID              int64           `json:"id"`
	Kind            string          `json:"kind"`
	State           string          `json:"state"`
	CancelRequested bool            `json:"cancel_requested"`
	Progress        *jobProgress    `json:"progress"`
	Args            json.RawMessage `json:"args"`
	Result          json.RawMessage `json:"result"`
	Error           *jobError       `json:"error"`
	CreatedAt       time.Time       `json:"created_at"`
	FinishedAt      *time.Time      `json:"finished_at"`
}

// Active reports whether the job has not finished.
func (j job) Active() bool {
	return j.State == "queued" || j.State == "running" || j.State == "retrying"
}

// Value and Max are the job's progress bar.
func (j job) Value() int64 {
	if j.State == "succeeded" {
		return j.Max()
	}
	if j.Progress == nil {
		return 0
	}
	return j.Progress.Current
}

// Max is the progress bar's maximum: the reported total, else 1.
func (j job) Max() int64 {
	if j.Progress != nil && j.Progress.Total > 0 {
		return j.Progress.Total
	}
	return 1
}

// Message is what the job is doing, for people.
func (j job) Message() string {
	switch {
	case j.Error != nil:
		return j.Error.Message
	case j.State == "succeeded":
		return "Finished."
	case j.State == "queued":
		return "Waiting to start."
	case j.Progress != nil && j.Progress.Message != "":
		return j.Progress.Message
	}
	return "Working."
}

// Label names the job's kind for people.
func (j job) Label() string {
	if l, ok := jobLabels[j.Kind]; ok {
		return l
	}
	return j.Kind
}

// PaperID is the paper the job works on, if its arguments name one.
func (j job) PaperID() string {
	var a struct {
		PaperID string `json:"paper_id"`
	}
	_ = json.Unmarshal(j.Args, &a)
	return a.PaperID
}

var jobLabels = map[string]string{
	"ingest.pdf":             "Reading a PDF",
	"cards.generate":         "Drafting cards",
	"fsrs.optimize":          "Fitting review parameters",
	"pulse.train_classifier": "Training Pulse",
	"data.purge":             "Daily purge",
	"summary.generate":       "Summarizing the paper",
	"extract.paper":          "Extracting claims and checking quotes",
	"embeddings.reembed":     "Re-embedding passages",
}

// jobAnswer reads an answer that is a job envelope, bare or as {"job": envelope}.
type jobAnswer struct {
	job
	Wrapped *job `json:"job"`
}

// envelope returns the job, wherever the answer put it.
func (a jobAnswer) envelope() job {
	if a.Wrapped != nil {
		return *a.Wrapped
	}
	return a.job
}

type jobPage struct {
	Jobs       []job  `json:"jobs"`
	NextCursor string `json:"next_cursor"`
}

// uploadResult is the answer to an upload or a link to read: the paper (a new one,
// one the user already had, or their private version of a shared paper), its
// reading job when one runs (zero otherwise) and a sentence saying which.
type uploadResult struct {
	PaperID string `json:"paper_id"`
	Job     job    `json:"job"`
	Message string `json:"message"`
}

type nextInterval struct {
	Rating   int    `json:"rating"`
	Label    string `json:"label"`
	Interval string `json:"interval"`
}

type card struct {
	ID         string         `json:"id"`
	DeckID     string         `json:"deck_id"`
	PaperID    string         `json:"paper_id"`
	PageNumber *int           `json:"page_number"`
	CardType   string         `json:"card_type"`
	Front      string         `json:"front"`
	Back       string         `json:"back"`
	Status     string         `json:"status"`
	State      string         `json:"state"`
	Reps       int            `json:"reps"`
	Next       []nextInterval `json:"next"`
	// Tags, Lapses, DueAt and Source are read by the card browser and editor.
	Tags   []string    `json:"tags"`
	Lapses int         `json:"lapses"`
	DueAt  time.Time   `json:"due_at"`
	Source *cardSource `json:"source"`
}

type deck struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Cards int    `json:"cards"`
	Due   int    `json:"due"`
}

type dayCount struct {
	Date     string `json:"date"`
	Reviews  int    `json:"reviews"`
	Due      int    `json:"due"`
	Mature   int    `json:"mature"`
	Recalled int    `json:"recalled"`
}

type analytics struct {
	Days          int            `json:"days"`
	Timezone      string         `json:"timezone"`
	ReviewsPerDay []dayCount     `json:"reviews_per_day"`
	TrueRetention float64        `json:"true_retention"`
	MatureReviews int            `json:"mature_reviews"`
	DueForecast   []dayCount     `json:"due_forecast"`
	StreakDays    int            `json:"streak_days"`
	TotalReviews  int            `json:"total_reviews"`
	CardsByState  map[string]int `json:"cards_by_state"`
}

type project struct {
	ID               string `json:"id"`
	Name             string `json:"name"`
	Description      string `json:"description"`
	Status           string `json:"status"`
	Deadline         string `json:"deadline"`
	OpenTasks        int    `json:"open_tasks"`
	Papers           int    `json:"papers"`
	NextMilestoneDue string `json:"next_milestone_due"`
}

type task struct {
	ID       string `json:"id"`
	Title    string `json:"title"`
	Status   string `json:"status"`
	Priority int    `json:"priority"`
	DueAt    string `json:"due_at"`
}

type milestone struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	DueDate     string `json:"due_date"`
	CompletedAt string `json:"completed_at"`
}

type sourceReport struct {
	Name       string `json:"name"`
	Status     string `json:"status"`
	Results    int    `json:"results"`
	DurationMS int    `json:"duration_ms"`
	// Error is the source's own failure text, which may be a raw network error;
	// the page shows Note instead.
	Error string `json:"error"`
}

// sourceNotes say for people why a source gave no results, by its status.
var sourceNotes = map[string]string{
	"failed":          "The source could not be reached; try again later.",
	"timeout":         "The source did not answer in time; try again later.",
	"rate_limited":    "The source asked Lectern to slow down; try again in a minute.",
	"skipped_backoff": "Skipped for now after repeated failures; Lectern tries it again in a while.",
	"unknown_source":  "No such source is running.",
}

// Note is why the source gave no results, in a sentence; "" when it answered.
func (s sourceReport) Note() string { return sourceNotes[s.Status] }

type searchResponse struct {
	Query   string         `json:"query"`
	Results []paper        `json:"results"`
	Sources []sourceReport `json:"sources"`
	Partial bool           `json:"partial"`
}

type passage struct {
	ChunkID   string `json:"chunk_id"`
	PaperID   string `json:"paper_id"`
	Title     string `json:"title"`
	Section   string `json:"section"`
	PageStart int    `json:"page_start"`
	PageEnd   int    `json:"page_end"`
	Snippet   string `json:"snippet"`
	// Highlights are the matched words in Snippet, [start, end) byte offsets.
	Highlights [][2]int `json:"highlights"`
}

// snippetPart is a piece of a passage's snippet; Mark says it is a matched word.
type snippetPart struct {
	Text string
	Mark bool
}

// Parts cuts the snippet at its highlights, for the template to wrap the matched
// words in <mark> and escape every piece as text. A highlight out of order, out
// of range or splitting a character is ignored.
func (p passage) Parts() []snippetPart {
	var out []snippetPart
	at := 0
	for _, h := range p.Highlights {
		start, end := h[0], h[1]
		if start < at || end <= start || end > len(p.Snippet) ||
			!utf8.RuneStart(p.Snippet[start]) || (end < len(p.Snippet) && !utf8.RuneStart(p.Snippet[end])) {
			continue
		}
		if start > at {
			out = append(out, snippetPart{Text: p.Snippet[at:start]})
		}
		out = append(out, snippetPart{Text: p.Snippet[start:end], Mark: true})
		at = end
	}
	if at < len(p.Snippet) {
		out = append(out, snippetPart{Text: p.Snippet[at:]})
	}
	return out
}

type configEntry struct {
	Key      string          `json:"key"`
	Secret   bool            `json:"secret"`
	Value    json.RawMessage `json:"value"`
	Masked   string          `json:"masked"`
	Readable bool            `json:"readable"`
}

// Shown is the entry's value as the settings page shows it.
func (c configEntry) Shown() string {
	if c.Secret {
		return c.Masked
	}
	var s string
	if json.Unmarshal(c.Value, &s) == nil {
		return s
	}
	return string(c.Value)
}

type user struct {
	ID          string     `json:"id"`
	Email       string     `json:"email"`
	DisplayName string     `json:"display_name"`
	Role        string     `json:"role"`
	CreatedAt   time.Time  `json:"created_at"`
	LastLoginAt *time.Time `json:"last_login_at"`
	DeletedAt   *time.Time `json:"deleted_at"`
}

type auditEntry struct {
	ID        int64          `json:"id"`
	UserID    string         `json:"user_id"`
	Action    string         `json:"action"`
	Resource  string         `json:"resource"`
	Timestamp time.Time      `json:"timestamp"`
	Metadata  map[string]any `json:"metadata"`
}

type auditPage struct {
	Items      []auditEntry `json:"items"`
	NextCursor string       `json:"next_cursor"`
}

type pluginInfo struct {
	Name     string `json:"name"`
	Kind     string `json:"kind"`
	Version  string `json:"version"`
	State    string `json:"state"`
	Enabled  bool   `json:"enabled"`
	Restarts int    `json:"restarts"`
	// LastError is the plugin host's own text, for the log; the page says only that
	// and when a failure happened.
	LastError   string     `json:"last_error"`
	LastErrorAt *time.Time `json:"last_error_at"`
}

type llmProvider struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	// BaseURLSettable is true for the custom endpoint and a local model runtime:
	// their base URL is a setting, and their key is optional.
	BaseURLSettable bool   `json:"base_url_settable"`
	DefaultBaseURL  string `json:"default_base_url"`
	KeyName         string `json:"key_name"`
	APIKey          *struct {
		Set    bool   `json:"set"`
		Masked string `json:"masked"`
	} `json:"api_key"`
	BaseURL string `json:"base_url"`
}

type llmRole struct {
	Role     string `json:"role"`
	Provider string `json:"provider"`
	Model    string `json:"model"`
	// Default is true while nothing is assigned and the builtin provider serves it.
	Default bool `json:"default"`
}

type llmSettings struct {
	Providers []llmProvider `json:"providers"`
	Warnings  []string      `json:"warnings"`
	Roles     []llmRole     `json:"roles"`
}

// citation is one source of a RAG answer; Marker is what the answer's text cites,
// such as "S1".
type citation struct {
	// Verified is false when a sentence citing the passage is not found in it
	// verbatim (a paraphrase): the source is shown marked unverified.
	Verified bool `json:"verified"`

	// Number is what the reader sees: sources numbered from 1 in the order the
	// answer cites them.
	Number  int      `json:"number"`
	Marker  string   `json:"marker"`
	ChunkID string   `json:"chunk_id"`
	PaperID string   `json:"paper_id"`
	Title   string   `json:"title"`
	Authors []string `json:"authors"`
	Page    int      `json:"page"`
	Section string   `json:"section"`
	// Start and End are the cited words' rune offsets in the passage; equal when
	// they were not found.
	Start int `json:"start"`
	End   int `json:"end"`
}

type keyFinding struct {
	Text     string `json:"text"`
	Quote    string `json:"quote"`
	Verified bool   `json:"verified"`
	// Page is where the quote was found in the paper, nil when nowhere.
	Page *int `json:"page"`
}

type summary struct {
	// Fallback, when set, says why the builtin method made this summary.
	Fallback *fallback `json:"fallback"`

	TLDR        string       `json:"tldr"`
	Summary     string       `json:"summary"`
	KeyFindings []keyFinding `json:"key_findings"`
	Model       string       `json:"model"`
	Method      string       `json:"method"`
	Confidence  any          `json:"confidence"`
}

type extractionItem struct {
	Type               string  `json:"type"`
	Content            string  `json:"content"`
	Quote              string  `json:"quote"`
	VerificationStatus string  `json:"verification_status"`
	Similarity         float64 `json:"similarity"`
	// Page is where the quote was found in the paper, nil when nowhere.
	Page *int `json:"page"`
	// Labelled is false when the extractor was not sure of Type: the item is
	// shown unlabelled.
	Labelled bool `json:"labelled"`
}

type extractions struct {
	// Fallback, when set, says why the builtin method extracted these items.
	Fallback *fallback `json:"fallback"`

	Items []extractionItem `json:"items"`
	Model string           `json:"model"`
}

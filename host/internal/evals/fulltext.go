package evals

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
)

// fullTextFS holds the full-text set and the papers written for it (typeset from
// data/fulltext/*.ms by data/fulltext/make-pdfs.sh). The fixture PDFs it also names
// are third-party and are read at run time from the fixtures folder.
//
//go:embed data/fulltext.json data/fulltext/*.pdf
var fullTextFS embed.FS

// Set names accepted by `lectern eval rag --set`.
const (
	SetWritten  = "written"
	SetFullText = "fulltext"
)

// Question kinds of the full-text set. KindUnanswerable marks a question no paper
// of the set answers; every other kind is answerable.
const (
	KindNumber         = "number"
	KindDefinition     = "definition"
	KindRecommendation = "recommendation"
	KindMethod         = "method"
	KindDataset        = "dataset"
	KindResult         = "result"
	KindUnanswerable   = "unanswerable"
)

var questionKinds = []string{KindNumber, KindDefinition, KindRecommendation, KindMethod, KindDataset, KindResult, KindUnanswerable}

// FullTextSet is a question set over whole PDFs: the papers to ingest and the
// questions asked about them, each answerable one with gold evidence and pages.
type FullTextSet struct {
	About     string             `json:"about"`
	Papers    []FullTextPaper    `json:"papers"`
	Questions []FullTextQuestion `json:"questions"`
}

// FullTextPaper is one PDF of the set: a shared fixture (Fixture, a path under
// the fixtures folder, pinned by SHA256 because the gold pages were read from that
// file), or one of the set's own (Own, a path under data/ in the binary, or
// beside a --dataset file).
type FullTextPaper struct {
	ID      string `json:"id"`
	Fixture string `json:"fixture,omitempty"`
	SHA256  string `json:"sha256,omitempty"`
	Own     string `json:"own,omitempty"`
}

// FullTextQuestion is one question. For an answerable one, Evidence holds short
// verbatim phrases of Paper, any of which a correct quoted sentence contains,
// and Pages the 1-based pages where they stand.
type FullTextQuestion struct {
	Question string   `json:"question"`
	Kind     string   `json:"kind"`
	Paper    string   `json:"paper,omitempty"`
	Evidence []string `json:"evidence,omitempty"`
	Pages    []int    `json:"pages,omitempty"`
	// Slice marks the questions of the CI slice (FullTextSet.Slice).
	Slice bool `json:"slice,omitempty"`
}

// Answerable says whether some paper of the set answers q.
func (q FullTextQuestion) Answerable() bool { return q.Kind != KindUnanswerable }

// fullTextSource is where a set's own PDFs are read from: the binary for the
// built-in set, the folder of a --dataset file otherwise.
type fullTextSource struct {
	own fs.FS
	// fixtures is the shared fixtures folder; "" when not given.
	fixtures string
}

// LoadFullText reads a full-text set from path, or the built-in one when path is
// "". The set's own PDFs are read relative to path's folder.
func LoadFullText(path string) (*FullTextSet, error) {
	var raw []byte
	var err error
	if path == "" {
		raw, err = fullTextFS.ReadFile("data/fulltext.json")
	} else {
		raw, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("evals: load full-text set: %w", err)
	}
	var set FullTextSet
	if err := json.Unmarshal(raw, &set); err != nil {
		return nil, fmt.Errorf("evals: %s: %w", filepath.Base(path), err)
	}
	if err := set.validate(); err != nil {
		return nil, err
	}
	return &set, nil
}

// validate checks that every question names a known paper and kind, and that an
// answerable one has evidence and pages.
func (s *FullTextSet) validate() error {
	if len(s.Papers) == 0 || len(s.Questions) == 0 {
		return errors.New("evals: the full-text set has no papers or no questions")
	}
	ids := map[string]bool{}
	for _, p := range s.Papers {
		if p.ID == "" || ids[p.ID] || (p.Fixture == "") == (p.Own == "") {
			return fmt.Errorf("evals: paper %q: each paper needs a unique id and either fixture or own", p.ID)
		}
		ids[p.ID] = true
	}
	for i, q := range s.Questions {
		switch {
		case q.Question == "" || !slices.Contains(questionKinds, q.Kind):
			return fmt.Errorf("evals: question %d: needs a question and a kind (one of %v)", i+1, questionKinds)
		case q.Answerable() && (!ids[q.Paper] || len(q.Evidence) == 0 || len(q.Pages) == 0):
			return fmt.Errorf("evals: question %d (%q): an answerable question needs a known paper, evidence and pages", i+1, q.Question)
		case !q.Answerable() && (q.Paper != "" || len(q.Evidence) > 0):
			return fmt.Errorf("evals: question %d (%q): an unanswerable question has no paper or evidence", i+1, q.Question)
		}
	}
	return nil
}

// Slice returns the CI slice of s: the questions marked slice and only the papers
// they name, so a test ingests a few PDFs instead of all.
func (s *FullTextSet) Slice() *FullTextSet {
	out := &FullTextSet{About: s.About}
	want := map[string]bool{}
	for _, q := range s.Questions {
		if q.Slice {
			out.Questions = append(out.Questions, q)
			want[q.Paper] = true
		}
	}
	for _, p := range s.Papers {
		if want[p.ID] {
			out.Papers = append(out.Papers, p)
		}
	}
	return out
}

// ErrNoFixtures is a set that names fixture PDFs run without the fixtures folder.
var ErrNoFixtures = errors.New("the full-text set reads the shared fixture PDFs: pass --fixtures DIR or set LECTERN_FIXTURES to the fixtures folder (the one holding pdfs/)")

// readPaper returns the bytes of p's PDF, checking a fixture against its pinned
// digest: gold pages read from one file are wrong for another.
func (src fullTextSource) readPaper(p FullTextPaper) ([]byte, error) {
	if p.Own != "" {
		b, err := fs.ReadFile(src.own, p.Own)
		if err != nil {
			return nil, fmt.Errorf("evals: paper %s: %w", p.ID, err)
		}
		return b, nil
	}
	if src.fixtures == "" {
		return nil, ErrNoFixtures
	}
	b, err := os.ReadFile(filepath.Join(src.fixtures, filepath.FromSlash(p.Fixture)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("evals: paper %s: %s is not in the fixtures folder %s; point --fixtures or LECTERN_FIXTURES at the shared fixtures", p.ID, p.Fixture, src.fixtures)
	}
	if err != nil {
		return nil, fmt.Errorf("evals: paper %s: %w", p.ID, err)
	}
	if sum := sha256.Sum256(b); p.SHA256 != "" && hex.EncodeToString(sum[:]) != p.SHA256 {
		return nil, fmt.Errorf("evals: paper %s: %s is not the file the set was written for (its SHA-256 differs); use the shared fixtures the set names", p.ID, p.Fixture)
	}
	return b, nil
}

// fileName is the name p's PDF is uploaded under.
func (p FullTextPaper) fileName() string {
	if p.Own != "" {
		return path.Base(p.Own)
	}
	return path.Base(p.Fixture)
}

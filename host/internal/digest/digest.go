// Package digest makes the Weekly Summary: a reflection on the papers a user acted
// on in the past days (starred, started, finished, up-voted), grouped by the
// topics they follow, with a synthesis of each topic that has two papers or more.
// It never lists a paper the user only saw: Pulse suggests, the Weekly Summary
// reflects (SPEC Pulse 3).
package digest

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/pulse"
	"github.com/lectern-research/lectern/host/internal/pulse/score"
	"github.com/lectern-research/lectern/host/internal/rag"
)

const (
	// DefaultDays is the window of a summary, MaxDays the longest.
	DefaultDays, MaxDays = 7, 30
	// maxPapers bounds the papers a summary reads.
	maxPapers = 200
	// listed is how many papers a topic lists; contextPapers how many its synthesis reads.
	listed, contextPapers = 5, 10
	// topicFloor is the cosine a paper needs with a topic to be filed under it.
	topicFloor = 0.15
	// otherTopic files what matches none of the user's topics.
	otherTopic = "Other papers"
)

// Service makes Weekly Summaries.
type Service struct {
	Papers *papers.Store
	Pulse  *pulse.Store
	Embed  pulse.Embed
	// Synthesize is the summarize role (rag.Service.Synthesize).
	Synthesize func(ctx context.Context, topic string, docs []rag.ThemeDoc) (rag.Synthesis, error)
	Now        func() time.Time
}

// Weekly is a Weekly Summary.
type Weekly struct {
	Days   int     `json:"days"`
	Since  string  `json:"since"`
	Topics []Topic `json:"topics"`
	// PaperCount is how many papers the user acted on in the window.
	PaperCount int `json:"paper_count"`
	// Message says why the summary is empty, when it is.
	Message string `json:"message,omitempty"`
}

// Topic is one group of the summary.
type Topic struct {
	Name       string           `json:"name"`
	PaperCount int              `json:"paper_count"`
	Papers     []papers.Engaged `json:"papers"`
	// Synthesis is there for a topic with two papers or more.
	Synthesis *rag.Synthesis `json:"synthesis,omitempty"`
}

// Weekly makes userID's summary of the last days days (1-30).
func (s *Service) Weekly(ctx context.Context, userID uuid.UUID, days int) (Weekly, error) {
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	since := now.AddDate(0, 0, -days)
	out := Weekly{Days: days, Since: since.UTC().Format(time.RFC3339), Topics: []Topic{}}
	engaged, err := s.Papers.EngagedSince(ctx, userID, since, maxPapers)
	if err != nil {
		return out, err
	}
	out.PaperCount = len(engaged)
	if len(engaged) == 0 {
		out.Message = fmt.Sprintf("You did not star, start, finish or up-vote a paper in the last %d days, so there is nothing to reflect on yet.", days)
		return out, nil
	}
	groups, err := s.group(ctx, userID, engaged)
	if err != nil {
		return out, err
	}
	for _, g := range groups {
		t := Topic{Name: g.name, PaperCount: len(g.papers), Papers: g.papers[:min(listed, len(g.papers))]}
		if len(g.papers) >= 2 {
			docs := make([]rag.ThemeDoc, 0, contextPapers)
			for _, p := range g.papers[:min(contextPapers, len(g.papers))] {
				docs = append(docs, rag.ThemeDoc{Title: p.Title, Abstract: p.Abstract})
			}
			syn, err := s.Synthesize(ctx, g.name, docs)
			if err != nil {
				return out, fmt.Errorf("digest: synthesise %q: %w", g.name, err)
			}
			t.Synthesis = &syn
		}
		out.Topics = append(out.Topics, t)
	}
	return out, nil
}

type group struct {
	name   string
	papers []papers.Engaged
}

// group files each paper under the user's topic it is most like, or under
// otherTopic; groups with more papers first, otherTopic last.
func (s *Service) group(ctx context.Context, userID uuid.UUID, engaged []papers.Engaged) ([]group, error) {
	topics, err := s.Pulse.Topics(ctx, userID)
	if err != nil {
		return nil, err
	}
	if len(topics) == 0 {
		return []group{{name: "This week", papers: engaged}}, nil
	}
	texts := make([]string, 0, len(engaged)+len(topics))
	for _, p := range engaged {
		texts = append(texts, p.Title+"\n"+p.Abstract)
	}
	for _, t := range topics {
		texts = append(texts, t.Name+"\n"+t.Query)
	}
	vecs, err := s.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("digest: embed: %w", err)
	}
	byName := map[string]*group{}
	var order []*group
	for i, p := range engaged {
		best, name := topicFloor, otherTopic
		for j, t := range topics {
			if c := score.Cosine(vecs[i], vecs[len(engaged)+j]); c >= best {
				best, name = c, t.Name
			}
		}
		g, ok := byName[name]
		if !ok {
			g = &group{name: name}
			byName[name] = g
			order = append(order, g)
		}
		g.papers = append(g.papers, p)
	}
	slices.SortStableFunc(order, func(a, b *group) int {
		if (a.name == otherTopic) != (b.name == otherTopic) {
			if a.name == otherTopic {
				return 1
			}
			return -1
		}
		return cmp.Compare(len(b.papers), len(a.papers))
	})
	out := make([]group, len(order))
	for i, g := range order {
		out[i] = *g
	}
	return out, nil
}

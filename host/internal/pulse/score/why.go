package score

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Facts are what the words of a card's "why" name: the topic it matched best,
// the tracked author it is by, when it was published.
type Facts struct {
	Topic     string
	Author    string
	Published *time.Time
}

// minShare is the smallest contribution (weight × signal) a reason needs to be
// worth saying.
const minShare = 0.02

// Why says in one line why a paper is in the deck: the two signals that added
// most to its score, in words.
func Why(w Weights, signals map[string]float64, f Facts, now time.Time) string {
	type part struct {
		name  string
		share float64
	}
	var parts []part
	for k, v := range w {
		if share := v * clamp01(signals[k]); share >= minShare {
			parts = append(parts, part{k, share})
		}
	}
	slices.SortFunc(parts, func(a, b part) int {
		if c := cmp.Compare(b.share, a.share); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	var said []string
	for _, p := range parts {
		if len(said) == 2 {
			break
		}
		if s := reason(p.name, signals[p.name], f, now); s != "" {
			said = append(said, s)
		}
	}
	if len(said) == 0 {
		return "A new paper in the areas you follow."
	}
	out := strings.Join(said, "; ")
	return strings.ToUpper(out[:1]) + out[1:] + "."
}

func reason(signal string, v float64, f Facts, now time.Time) string {
	switch signal {
	case Embedding:
		return "close to the papers in your library"
	case Topic:
		if f.Topic != "" {
			return fmt.Sprintf("matches your topic %q", f.Topic)
		}
		return "matches one of your topics"
	case Recency:
		if f.Published == nil {
			return ""
		}
		switch days := int(now.Sub(*f.Published).Hours() / 24); {
		case days <= 0:
			return "published today"
		case days == 1:
			return "published yesterday"
		default:
			return fmt.Sprintf("published %d days ago", days)
		}
	case AuthorBonus:
		if f.Author != "" {
			return "by " + f.Author + ", whom you follow"
		}
		return "by an author you follow"
	case LLMRelevance:
		if v >= 0.7 {
			return "judged highly relevant to your interests"
		}
		return "judged relevant to your interests"
	case LLMNovelty:
		return "judged to bring something new to what you read"
	case Classifier:
		return "like the papers you rated up"
	case CitationPageRank, CitationAdamicAdar:
		return "connected by citations to papers you starred"
	case CitationCount:
		return "often cited"
	}
	return ""
}

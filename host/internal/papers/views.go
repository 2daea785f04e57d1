package papers

import (
	"fmt"
	"sort"
	"strings"
)

// This file is the one place the feed's view surfaces, scopes, visibility and the
// recommender's exclusion are defined (SPEC "Pulse" 5, ownership rules 4 and 7;
// docs/feed.md). Every query that filters papers for a user builds its WHERE clause
// from these fragments. In them, p is papers, s is the caller's paper_user_state row
// (LEFT JOINed, so it may be NULL) and $1 is the caller's user id.

// stateExpr is a paper's state for the caller: inbox when no state row exists.
const stateExpr = `coalesce(s.state, 'inbox')`

// views maps each of the ten view surfaces to its canonical predicate. A view that
// no paper without a state row can be in (every one but inbox, active and
// all_non_trash) tests s's columns directly rather than through coalesce(): the
// answer is the same (NULL is not true), and the planner can then see that the
// state row must exist and start from the state rows when they are the fewer
// (a user's starred papers out of a library of thousands).
var views = map[string]string{
	"inbox":         stateExpr + ` = 'inbox'`,
	"library":       `s.state IN ('to_read', 'reading', 'done')`,
	"reading_list":  `s.state = 'to_read'`,
	"reading":       `s.state = 'reading'`,
	"done":          `s.state = 'done'`,
	"starred":       `s.starred AND s.state <> 'trash'`,
	"trash":         `s.state = 'trash'`,
	"active":        stateExpr + ` IN ('inbox', 'to_read', 'reading')`,
	"kept":          `s.state IN ('to_read', 'reading', 'done')`,
	"all_non_trash": stateExpr + ` <> 'trash'`,
}

// DefaultView is the view of a feed request that names none.
const DefaultView = "all_non_trash"

// Scopes of the feed.
const (
	// ScopeLibrary (the default) shows papers in the caller's user_library.
	ScopeLibrary = "library"
	// ScopeCorpus shows every paper the caller may see ("All discovered"), with the
	// caller's own overlays.
	ScopeCorpus = "corpus"
)

// ViewNames lists the valid view names, sorted.
func ViewNames() []string {
	out := make([]string, 0, len(views))
	for v := range views {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

// ViewError names an unknown view or scope and the valid ones.
type ViewError struct {
	Field string
	Value string
	Valid []string
}

func (e *ViewError) Error() string {
	return fmt.Sprintf("unknown %s %q; valid: %s", e.Field, e.Value, strings.Join(e.Valid, ", "))
}

// viewPredicate returns the predicate of view in scope. In corpus scope the Library
// surface is all_non_trash (SPEC ownership rule 7).
func viewPredicate(view, scope string) (string, error) {
	if scope != ScopeLibrary && scope != ScopeCorpus {
		return "", &ViewError{Field: "scope", Value: scope, Valid: []string{ScopeCorpus, ScopeLibrary}}
	}
	if scope == ScopeCorpus && view == "library" {
		view = "all_non_trash"
	}
	pred, ok := views[view]
	if !ok {
		return "", &ViewError{Field: "view", Value: view, Valid: ViewNames()}
	}
	if lib, ok := libraryViews[view]; ok && scope == ScopeLibrary {
		return lib, nil
	}
	return pred, nil
}

// libraryViews are the views in library scope, where ul is the caller's library
// row, each said as whether a state row of the paper admits it or rules it out:
// the same answer as views', in a form the planner can run as a semi- or anti-join
// while it walks the library in the page's order. With views' predicates it read
// and sorted a whole library for a page (an inbox page of 2,000 papers: 1.5 ms
// against 0.3; a reading page of 10,000: 5.3 ms).
var libraryViews = map[string]string{
	"inbox":         stateRowRulesOut(`x.state <> 'inbox'`),
	"library":       stateRowAdmits(`x.state IN ('to_read', 'reading', 'done')`),
	"reading_list":  stateRowAdmits(`x.state = 'to_read'`),
	"reading":       stateRowAdmits(`x.state = 'reading'`),
	"done":          stateRowAdmits(`x.state = 'done'`),
	"starred":       stateRowAdmits(`x.starred AND x.state <> 'trash'`),
	"trash":         stateRowAdmits(`x.state = 'trash'`),
	"active":        stateRowRulesOut(`x.state IN ('done', 'trash')`),
	"kept":          stateRowAdmits(`x.state IN ('to_read', 'reading', 'done')`),
	"all_non_trash": stateRowRulesOut(`x.state = 'trash'`),
}

// stateRowAdmits says that the caller's state row x of the library row's paper
// exists and satisfies cond: a semi-join, which the planner may start from the
// few state rows a view like reading admits.
func stateRowAdmits(cond string) string {
	return `EXISTS (SELECT 1 FROM paper_user_state x WHERE x.user_id = $1 AND x.paper_id = ul.paper_id AND ` + cond + `)`
}

// stateRowRulesOut says that the caller's state row x of the library row's paper
// does not satisfy cond, or there is none. It is a lookup of the state row for
// each library row, as the page walks the library in order and most rows pass:
// written NOT EXISTS, the planner made it an anti-join that compared every
// library row with every trashed paper of the user (0.63 ms a page for 144
// trashed papers, against 0.13; TestLibraryViewsThatRuleOutLookUpEachRow).
func stateRowRulesOut(cond string) string {
	return `NOT coalesce((SELECT ` + cond + ` FROM paper_user_state x WHERE x.user_id = $1 AND x.paper_id = ul.paper_id), false)`
}

// visiblePredicate says whether the caller may see paper p: it is public, or came
// from an instance-level feed (discovered_by NULL, SPEC rule 4), or is in the caller's
// library. A paper's discoverer gains nothing from that alone. Other packages never
// see this fragment: they call Visible, VisibleIDs and the Visible... reads.
//
// Only a private paper needs the library row, and a library row says whether its
// paper is public (user_library.paper_public, migration 0025): the test reads the
// caller's few private library rows rather than their whole library.
const visiblePredicate = `(` + publicPredicate + ` OR EXISTS (
	SELECT 1 FROM user_library vl WHERE vl.user_id = $1 AND vl.paper_id = p.id AND NOT vl.paper_public))`

// publicPredicate is the part of visiblePredicate that holds for every user: the
// paper is public or came from an instance-level feed.
const publicPredicate = `(p.visibility = 'public' OR p.discovered_by IS NULL)`

// ExclusionPredicate is the one canonical exclusion of Pulse and the recommender: a
// paper the caller finished or trashed, or gave negative feedback in the last 60
// days, is never suggested. Use it with p, s and $1 bound as above.
const ExclusionPredicate = `(` + stateExpr + ` NOT IN ('trash', 'done') AND NOT EXISTS (
	SELECT 1 FROM recommendation_feedback f
	 WHERE f.user_id = $1 AND f.paper_id = p.id AND f.signal = 'negative'
	   AND f.created_at > now() - interval '60 days'))`

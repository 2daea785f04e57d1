package bm25

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnsupported is returned for a tsquery this index cannot evaluate: a prefix or
// weight-restricted lexeme, or more than MaxTerms distinct lexemes. The caller
// ranks such a query in PostgreSQL instead.
var ErrUnsupported = errors.New("bm25: query not supported by the index")

// MaxTerms is the most distinct lexemes a query may hold (one bit each).
const MaxTerms = 64

// Query is a parsed tsquery: which lexemes it names and how they combine.
type Query struct {
	root *node
	// Terms are the distinct lexemes; a term's index is its bit in a match mask.
	Terms []string
	// scored[i] says whether Terms[i] occurs outside any negation, so that its
	// presence adds to a passage's score.
	scored []bool
	// Phrase says the query holds a phrase (<->, <N>): the index knows no
	// positions, so it treats a phrase as all of its words and the caller checks
	// the passages that match only that way (Verify).
	Phrase bool
	// matchesNone says a passage holding none of the terms matches (!a).
	matchesNone bool
	// required has the bits of the terms every matching passage holds
	// (node.required).
	required uint64
}

type nodeKind int

const (
	nodeTerm nodeKind = iota
	nodeAnd
	nodeOr
	nodeNot
	nodePhrase
)

type node struct {
	kind     nodeKind
	term     int // nodeTerm: index into Query.Terms
	children []*node
	// operand is, for nodeNot, the text of what it negates in the parsed tsquery.
	operand string
}

// ParseQuery reads PostgreSQL's text form of a tsquery, as websearch_to_tsquery
// returns it ('forget' & ( 'curv' | !'review' ) & 'spac' <-> 'repetit'). An empty
// text is the empty query, which matches nothing. Operators bind as in
// PostgreSQL: ! before <-> before & before |.
func ParseQuery(s string) (*Query, error) {
	q := &Query{}
	if strings.TrimSpace(s) == "" {
		return q, nil
	}
	p := &queryParser{s: s, q: q, index: map[string]int{}}
	root, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.skip(); p.i != len(s) {
		return nil, fmt.Errorf("bm25: tsquery: unexpected %q at byte %d", s[p.i:], p.i)
	}
	if len(q.Terms) > MaxTerms {
		return nil, fmt.Errorf("%w: %d distinct lexemes", ErrUnsupported, len(q.Terms))
	}
	q.root = root
	q.scored = make([]bool, len(q.Terms))
	markScored(root, q.scored, false)
	q.matchesNone = root.upper(0)
	q.required = root.required()
	return q, nil
}

// required returns the bits of the terms a passage must hold to match n, even
// read loosely (upper): a term's own; any child's of an AND or a phrase; those
// of every alternative of an OR; none under a negation.
func (n *node) required() uint64 {
	switch n.kind {
	case nodeTerm:
		return 1 << n.term
	case nodeNot:
		return 0
	case nodeOr:
		all := ^uint64(0)
		for _, c := range n.children {
			all &= c.required()
		}
		return all
	default: // and, phrase
		var any uint64
		for _, c := range n.children {
			any |= c.required()
		}
		return any
	}
}

func markScored(n *node, scored []bool, negated bool) {
	switch n.kind {
	case nodeTerm:
		if !negated {
			scored[n.term] = true
		}
	case nodeNot:
		markScored(n.children[0], scored, !negated)
	default:
		for _, c := range n.children {
			markScored(c, scored, negated)
		}
	}
}

// Excluded returns, as tsquery text, what the query rules out whatever else a
// passage holds: the operands of the negations among its top-level conjuncts
// ('heart' & !'rehabilit' & !( 'side' <-> 'effect' ) gives ( 'rehabilit' ) | (
// 'side' <-> 'effect' )), or "" when it rules nothing out that way. A passage
// matching it cannot match the query; a ranking that cannot read the query (the
// vector ranking) drops such passages. A double negation affirms, and a negation
// under | or inside a phrase rules nothing out alone, so neither counts.
func (q *Query) Excluded() string {
	if q.root == nil {
		return ""
	}
	top := []*node{q.root}
	if q.root.kind == nodeAnd {
		top = q.root.children
	}
	var parts []string
	for _, n := range top {
		if n.kind == nodeNot && n.children[0].kind != nodeNot {
			parts = append(parts, "( "+n.operand+" )")
		}
	}
	return strings.Join(parts, " | ")
}

// Empty says the query has no lexemes (all its words were stop words): it
// matches nothing, as in PostgreSQL.
func (q *Query) Empty() bool { return q.root == nil }

// upper says whether a passage holding exactly the terms of mask may match: true
// for every passage that matches, and for some that hold a phrase's words
// elsewhere than side by side.
func (n *node) upper(mask uint64) bool {
	switch n.kind {
	case nodeTerm:
		return mask&(1<<n.term) != 0
	case nodeNot:
		return !n.children[0].lower(mask)
	case nodeOr:
		for _, c := range n.children {
			if c.upper(mask) {
				return true
			}
		}
		return false
	default: // and, phrase
		for _, c := range n.children {
			if !c.upper(mask) {
				return false
			}
		}
		return true
	}
}

// lower says whether a passage holding exactly the terms of mask surely matches,
// whatever the positions of its words.
func (n *node) lower(mask uint64) bool {
	switch n.kind {
	case nodeTerm:
		return mask&(1<<n.term) != 0
	case nodeNot:
		return !n.children[0].upper(mask)
	case nodeOr:
		for _, c := range n.children {
			if c.lower(mask) {
				return true
			}
		}
		return false
	case nodePhrase:
		return false
	default: // and
		for _, c := range n.children {
			if !c.lower(mask) {
				return false
			}
		}
		return true
	}
}

type queryParser struct {
	s     string
	i     int
	q     *Query
	index map[string]int
}

func (p *queryParser) skip() {
	for p.i < len(p.s) && p.s[p.i] == ' ' {
		p.i++
	}
}

// or := and ('|' and)*
func (p *queryParser) or() (*node, error) {
	return p.binary(nodeOr, "|", p.and)
}

// and := phrase ('&' phrase)*
func (p *queryParser) and() (*node, error) {
	return p.binary(nodeAnd, "&", p.phrase)
}

func (p *queryParser) binary(kind nodeKind, op string, operand func() (*node, error)) (*node, error) {
	first, err := operand()
	if err != nil {
		return nil, err
	}
	n := first
	for {
		p.skip()
		if !strings.HasPrefix(p.s[p.i:], op) {
			return n, nil
		}
		p.i += len(op)
		next, err := operand()
		if err != nil {
			return nil, err
		}
		if n == first {
			n = &node{kind: kind, children: []*node{first}}
		}
		n.children = append(n.children, next)
	}
}

// phrase := unary ('<' (digits | '-') '>' unary)*
func (p *queryParser) phrase() (*node, error) {
	first, err := p.unary()
	if err != nil {
		return nil, err
	}
	n := first
	for {
		p.skip()
		if p.i >= len(p.s) || p.s[p.i] != '<' {
			return n, nil
		}
		end := strings.IndexByte(p.s[p.i:], '>')
		if end < 0 {
			return nil, fmt.Errorf("bm25: tsquery: unterminated phrase operator at byte %d", p.i)
		}
		p.i += end + 1
		next, err := p.unary()
		if err != nil {
			return nil, err
		}
		if n == first {
			n = &node{kind: nodePhrase, children: []*node{first}}
		}
		n.children = append(n.children, next)
		p.q.Phrase = true
	}
}

// unary := '!' unary | '(' or ')' | lexeme
func (p *queryParser) unary() (*node, error) {
	p.skip()
	if p.i >= len(p.s) {
		return nil, fmt.Errorf("bm25: tsquery: %q ends early", p.s)
	}
	switch p.s[p.i] {
	case '!':
		p.i++
		p.skip()
		start := p.i
		child, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &node{kind: nodeNot, children: []*node{child}, operand: p.s[start:p.i]}, nil
	case '(':
		p.i++
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		if p.skip(); p.i >= len(p.s) || p.s[p.i] != ')' {
			return nil, fmt.Errorf("bm25: tsquery: unclosed parenthesis in %q", p.s)
		}
		p.i++
		return n, nil
	}
	lexeme, next, err := quoted(p.s, p.i)
	if err != nil {
		return nil, fmt.Errorf("bm25: tsquery: %w", err)
	}
	p.i = next
	if p.i < len(p.s) && p.s[p.i] == ':' {
		return nil, fmt.Errorf("%w: %q restricts a lexeme by prefix or weight", ErrUnsupported, p.s)
	}
	t, ok := p.index[lexeme]
	if !ok {
		t = len(p.q.Terms)
		p.index[lexeme] = t
		p.q.Terms = append(p.q.Terms, lexeme)
	}
	return &node{kind: nodeTerm, term: t}, nil
}

// match says whether a passage holding a set of a query's terms matches it.
type match uint8

const (
	matchUnknown match = iota // not worked out yet (matcher's table)
	matchNo
	matchUnsure // only if the query's phrases hold
	matchSure
)

// matcher answers match for the masks of one query quickly: any mask at all for
// a query that ORs its terms, a table filled as masks come for up to
// matcherTableTerms terms, the query's tree otherwise.
type matcher struct {
	q     *Query
	anyOf bool
	table []match
}

const matcherTableTerms = 16

func newMatcher(q *Query) *matcher {
	m := &matcher{q: q, anyOf: q.root.kind == nodeTerm}
	if q.root.kind == nodeOr {
		m.anyOf = true
		for _, c := range q.root.children {
			m.anyOf = m.anyOf && c.kind == nodeTerm
		}
	}
	if !m.anyOf && len(q.Terms) <= matcherTableTerms {
		m.table = make([]match, 1<<len(q.Terms))
	}
	return m
}

func (m *matcher) match(mask uint64) match {
	switch {
	case m.anyOf:
		if mask != 0 {
			return matchSure
		}
		return matchNo
	case m.table != nil:
		if r := m.table[mask]; r != matchUnknown {
			return r
		}
		r := m.eval(mask)
		m.table[mask] = r
		return r
	}
	return m.eval(mask)
}

func (m *matcher) eval(mask uint64) match {
	switch {
	case m.q.root.lower(mask):
		return matchSure
	case m.q.root.upper(mask):
		return matchUnsure
	}
	return matchNo
}

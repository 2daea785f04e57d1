// Package source is the paper-source plugin kind: the Source interface an author
// implements, its request and response types, and the gRPC glue the serve package
// and the host use.
//
// A source answers searches over one bibliographic database (arXiv, OpenAlex, ...)
// in the paper.Paper form. Paging calls take a Cursor (empty for the first page) and
// return a Page whose NextCursor is empty on the last page. PageSize is always
// between 1 and MaxPageSize when it reaches the implementation (0 becomes
// DefaultPageSize).
//
// Credentials, when a source needs them (an API key), arrive in each request's
// Credentials map; never read them from the environment or a file, never log them.
//
// This package follows semantic versioning with the sdk module.
package source

import (
	"context"
	"time"

	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// Page sizes.
const (
	// DefaultPageSize is the page size a request with PageSize 0 gets.
	DefaultPageSize = 25
	// MaxPageSize is the largest page size; larger requests are clamped.
	MaxPageSize = 100
)

// Source is a paper source. Every method must return when ctx is done (with
// ctx.Err()), and fail with the typed errors of package protocol: BadRequest for a
// request that cannot succeed, NotFound, RateLimited with the upstream's retry-after,
// Unauthorized for rejected credentials, Unavailable when the upstream is down.
type Source interface {
	protocol.Plugin

	// Search runs a free-text query with optional filters. An empty query with no
	// filter is a BadRequest.
	Search(ctx context.Context, req *SearchRequest) (*Page, error)
	// Get returns the paper named by any of req.IDs, or a NotFound error. Empty
	// IDs are a BadRequest.
	Get(ctx context.Context, req *GetRequest) (*GetResponse, error)
	// Recent lists papers on the given topics or in the given categories published
	// or updated since req.Since, newest first (the overnight discovery run).
	Recent(ctx context.Context, req *RecentRequest) (*Page, error)
	// AuthorPapers lists one author's papers since req.Since, newest first.
	AuthorPapers(ctx context.Context, req *AuthorPapersRequest) (*Page, error)
}

// WithCitations is a Source that also walks the citation graph (capability
// protocol.CapabilityCitations). The serve helper announces the capability when the
// implementation satisfies this interface.
type WithCitations interface {
	Source
	// Citations lists the papers citing req.IDs.
	Citations(ctx context.Context, req *CitationsRequest) (*Page, error)
	// References lists the papers req.IDs cites.
	References(ctx context.Context, req *CitationsRequest) (*Page, error)
}

// Sort orders search results.
type Sort int

// Search orders.
const (
	// SortRelevance is the source's relevance order (the default).
	SortRelevance Sort = iota
	// SortNewest is newest publication first.
	SortNewest
	// SortMostCited is most cited first.
	SortMostCited
)

// Filters narrow a search. The zero value filters nothing.
type Filters struct {
	// From and To bound the publication date, inclusive.
	From, To paper.Date
	// Categories keeps papers in any of these subject classes.
	Categories []string
	// Authors keeps papers by any of these author names.
	Authors []string
	// Venue keeps papers from this venue.
	Venue string
	// OpenAccessOnly keeps only papers with a free full text.
	OpenAccessOnly bool
	// WorkTypes keeps papers of these types (article, preprint, ...).
	WorkTypes []string
}

// IsZero reports whether f filters nothing.
func (f *Filters) IsZero() bool {
	return f == nil || (f.From.IsZero() && f.To.IsZero() && len(f.Categories) == 0 && len(f.Authors) == 0 &&
		f.Venue == "" && !f.OpenAccessOnly && len(f.WorkTypes) == 0)
}

// SearchRequest is a free-text search.
type SearchRequest struct {
	// Credentials for the upstream API, per call; nil when none.
	Credentials map[string]string
	// Query is the free text.
	Query string
	// Filters narrow the results.
	Filters Filters
	// Sort orders the results. Default SortRelevance.
	Sort Sort
	// Cursor is the NextCursor of the previous page; empty for the first page.
	Cursor string
	// PageSize is how many papers a page holds; 0 means DefaultPageSize.
	PageSize int
}

// Page is one page of papers.
type Page struct {
	// Papers on this page.
	Papers []paper.Paper
	// NextCursor fetches the next page; empty on the last page.
	NextCursor string
	// TotalEstimate is the source's estimate of all matches; 0 when unknown.
	TotalEstimate int64
}

// GetRequest asks for one paper by identifiers.
type GetRequest struct {
	// Credentials for the upstream API, per call; nil when none.
	Credentials map[string]string
	// IDs are whichever identifiers the caller has; the source uses the ones it
	// understands.
	IDs paper.IDs
}

// GetResponse carries the paper found.
type GetResponse struct {
	// Paper is the record found.
	Paper paper.Paper
}

// RecentRequest lists recent papers for topics or categories.
type RecentRequest struct {
	// Credentials for the upstream API, per call; nil when none.
	Credentials map[string]string
	// Topics are free-text topics.
	Topics []string
	// Categories are subject classes (arXiv categories, ...).
	Categories []string
	// Since is the earliest publication or update time wanted.
	Since time.Time
	// Cursor is the NextCursor of the previous page; empty for the first page.
	Cursor string
	// PageSize is how many papers a page holds; 0 means DefaultPageSize.
	PageSize int
}

// AuthorRef names an author by whichever identifiers the caller has.
type AuthorRef struct {
	// Name is the author's name.
	Name string
	// ORCID is the bare ORCID iD.
	ORCID string
	// SourceAuthorID is the author's id in this source.
	SourceAuthorID string
}

// AuthorPapersRequest lists an author's papers since a time.
type AuthorPapersRequest struct {
	// Credentials for the upstream API, per call; nil when none.
	Credentials map[string]string
	// Author is who to list.
	Author AuthorRef
	// Since is the earliest publication time wanted.
	Since time.Time
	// Cursor is the NextCursor of the previous page; empty for the first page.
	Cursor string
	// PageSize is how many papers a page holds; 0 means DefaultPageSize.
	PageSize int
}

// CitationsRequest names the paper whose citations or references to list.
type CitationsRequest struct {
	// Credentials for the upstream API, per call; nil when none.
	Credentials map[string]string
	// IDs name the paper.
	IDs paper.IDs
	// Cursor is the NextCursor of the previous page; empty for the first page.
	Cursor string
	// PageSize is how many papers a page holds; 0 means DefaultPageSize.
	PageSize int
}

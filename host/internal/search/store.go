package search

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/sdk/paper"
)

// store upserts the merged papers into the corpus in one transaction, discovered
// by discoveredBy (nil: the instance), and answers them as userID sees them.
func (s *Service) store(ctx context.Context, userID uuid.UUID, discoveredBy *uuid.UUID, merged []*mergedPaper) ([]Result, error) {
	ins := make([]papers.Input, len(merged))
	for i, m := range merged {
		ins[i] = Input(m.p, m.sources[0])
	}
	var ids []uuid.UUID
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		ids, err = papers.UpsertManyTx(ctx, tx, ins, discoveredBy)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("search: store results: %w", err)
	}
	items, err := papers.New(s.pool).GetMany(ctx, userID, ids)
	if err != nil {
		return nil, fmt.Errorf("search: read results: %w", err)
	}
	out := make([]Result, 0, len(merged))
	seen := map[uuid.UUID]bool{}
	for i, m := range merged {
		it, ok := items[ids[i]]
		if !ok || seen[ids[i]] {
			continue // two merged entries that the corpus knows to be one work
		}
		seen[ids[i]] = true
		out = append(out, Result{Item: it, Sources: m.sources, Score: m.score})
	}
	return out, nil
}

var precisionNames = map[paper.Precision]string{paper.PrecisionYear: "year", paper.PrecisionMonth: "month", paper.PrecisionDay: "day"}

// Input turns a source's paper into a corpus input: public metadata from the named
// source.
func Input(p paper.Paper, sourceName string) papers.Input {
	in := papers.Input{
		DOI: p.IDs.DOI, ArxivID: p.IDs.ArXivID, ArxivVersion: p.IDs.ArXivVersion, OpenAlexID: p.IDs.OpenAlexID,
		SemanticScholarID: p.IDs.SemanticScholarID, PubMedID: p.IDs.PubMedID,
		Title: p.Title, Abstract: p.Abstract, Venue: p.Venue.Name, URL: p.LandingURL, PDFURL: p.PDFURL,
		Source: sourceName, Visibility: "public", Metadata: map[string]any{},
	}
	for _, a := range p.Authors {
		au := papers.Author{Name: a.Name, ORCID: a.ORCID}
		if a.SourceAuthorID != "" {
			au.SourceID = sourceName + ":" + a.SourceAuthorID
		}
		if au.Name == "" {
			au.Name = strings.TrimSpace(a.GivenName + " " + a.FamilyName)
		}
		if len(a.Affiliations) > 0 {
			au.Affiliation = a.Affiliations[0].Name
		}
		if au.Name != "" {
			in.Authors = append(in.Authors, au)
		}
	}
	if prec, ok := precisionNames[p.Published.Precision]; ok && p.Published.Validate() == nil {
		t := p.Published.Time()
		in.PublicationDate, in.DatePrecision = &t, prec
	}
	if p.CitationCount != nil {
		n := int(*p.CitationCount)
		in.CitationCount = &n
	}
	if p.IDs.PMCID != "" {
		in.Metadata["pmcid"] = p.IDs.PMCID
	}
	if len(p.Categories) > 0 {
		in.Metadata["categories"] = p.Categories
	}
	if p.OpenAccess {
		in.Metadata["open_access"] = true
	}
	if p.WorkType != "" {
		in.Metadata["work_type"] = p.WorkType
	}
	return in
}

package convert

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
	"github.com/lectern-research/lectern/sdk/paper"
)

// IDsToProto converts identifiers for the wire.
func IDsToProto(ids paper.IDs) *pluginv1.Identifiers {
	return &pluginv1.Identifiers{
		Doi:               ids.DOI,
		ArxivId:           ids.ArXivID,
		ArxivVersion:      uint32(max(ids.ArXivVersion, 0)),
		OpenalexId:        ids.OpenAlexID,
		SemanticScholarId: ids.SemanticScholarID,
		PubmedId:          ids.PubMedID,
		Pmcid:             ids.PMCID,
		SourceId:          ids.SourceID,
	}
}

// IDsFromProto converts identifiers from the wire.
func IDsFromProto(ids *pluginv1.Identifiers) paper.IDs {
	return paper.IDs{
		DOI:               ids.GetDoi(),
		ArXivID:           ids.GetArxivId(),
		ArXivVersion:      int(ids.GetArxivVersion()),
		OpenAlexID:        ids.GetOpenalexId(),
		SemanticScholarID: ids.GetSemanticScholarId(),
		PubMedID:          ids.GetPubmedId(),
		PMCID:             ids.GetPmcid(),
		SourceID:          ids.GetSourceId(),
	}
}

// DateToProto converts a partial date for the wire; nil when unknown.
func DateToProto(d paper.Date) *pluginv1.PartialDate {
	if d.IsZero() {
		return nil
	}
	return &pluginv1.PartialDate{
		Year: int32(d.Year), Month: int32(d.Month), Day: int32(d.Day),
		Precision: pluginv1.DatePrecision(d.Precision),
	}
}

// DateFromProto converts a partial date from the wire.
func DateFromProto(d *pluginv1.PartialDate) paper.Date {
	if d == nil {
		return paper.Date{}
	}
	return paper.Date{
		Year: int(d.GetYear()), Month: int(d.GetMonth()), Day: int(d.GetDay()),
		Precision: paper.Precision(d.GetPrecision()),
	}
}

// TimeToProto converts a time for the wire; nil for the zero time.
func TimeToProto(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// TimeFromProto converts a time from the wire; the zero time for nil.
func TimeFromProto(t *timestamppb.Timestamp) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.AsTime()
}

// PaperToProto converts a paper for the wire.
func PaperToProto(p *paper.Paper) *pluginv1.Paper {
	out := &pluginv1.Paper{
		Ids:           IDsToProto(p.IDs),
		Title:         p.Title,
		Abstract:      p.Abstract,
		Published:     DateToProto(p.Published),
		LandingUrl:    p.LandingURL,
		PdfUrl:        p.PDFURL,
		Source:        p.Source,
		CitationCount: p.CitationCount,
		Categories:    p.Categories,
		OpenAccess:    p.OpenAccess,
		License:       p.License,
		WorkType:      p.WorkType,
		Language:      p.Language,
		UpdatedAt:     TimeToProto(p.UpdatedAt),
	}
	if v := p.Venue; v.Name != "" || v.Type != "" || v.Volume != "" || v.Issue != "" || v.Pages != "" || v.Publisher != "" || len(v.ISSN) > 0 {
		out.Venue = &pluginv1.Venue{
			Name: v.Name, Type: v.Type, Volume: v.Volume, Issue: v.Issue,
			Pages: v.Pages, Publisher: v.Publisher, Issn: v.ISSN,
		}
	}
	for _, a := range p.Authors {
		pa := &pluginv1.Author{
			Name: a.Name, GivenName: a.GivenName, FamilyName: a.FamilyName,
			Orcid: a.ORCID, SourceAuthorId: a.SourceAuthorID,
		}
		for _, af := range a.Affiliations {
			pa.Affiliations = append(pa.Affiliations, &pluginv1.Affiliation{Name: af.Name, Ror: af.ROR, Country: af.Country})
		}
		out.Authors = append(out.Authors, pa)
	}
	for _, r := range p.References {
		out.References = append(out.References, IDsToProto(r))
	}
	return out
}

// PaperFromProto converts a paper from the wire.
func PaperFromProto(p *pluginv1.Paper) paper.Paper {
	out := paper.Paper{
		IDs:           IDsFromProto(p.GetIds()),
		Title:         p.GetTitle(),
		Abstract:      p.GetAbstract(),
		Published:     DateFromProto(p.GetPublished()),
		LandingURL:    p.GetLandingUrl(),
		PDFURL:        p.GetPdfUrl(),
		Source:        p.GetSource(),
		CitationCount: p.CitationCount,
		Categories:    p.GetCategories(),
		OpenAccess:    p.GetOpenAccess(),
		License:       p.GetLicense(),
		WorkType:      p.GetWorkType(),
		Language:      p.GetLanguage(),
		UpdatedAt:     TimeFromProto(p.GetUpdatedAt()),
	}
	if v := p.GetVenue(); v != nil {
		out.Venue = paper.Venue{
			Name: v.GetName(), Type: v.GetType(), Volume: v.GetVolume(), Issue: v.GetIssue(),
			Pages: v.GetPages(), Publisher: v.GetPublisher(), ISSN: v.GetIssn(),
		}
	}
	for _, a := range p.GetAuthors() {
		pa := paper.Author{
			Name: a.GetName(), GivenName: a.GetGivenName(), FamilyName: a.GetFamilyName(),
			ORCID: a.GetOrcid(), SourceAuthorID: a.GetSourceAuthorId(),
		}
		for _, af := range a.GetAffiliations() {
			pa.Affiliations = append(pa.Affiliations, paper.Affiliation{Name: af.GetName(), ROR: af.GetRor(), Country: af.GetCountry()})
		}
		out.Authors = append(out.Authors, pa)
	}
	for _, r := range p.GetReferences() {
		out.References = append(out.References, IDsFromProto(r))
	}
	return out
}

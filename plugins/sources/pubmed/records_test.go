package main

import (
	"encoding/xml"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/paper"
)

func TestDates(t *testing.T) {
	t.Parallel()
	day := func(y, m, d int) paper.Date {
		return paper.Date{Year: y, Month: m, Day: d, Precision: paper.PrecisionDay}
	}
	month := func(y, m int) paper.Date { return paper.Date{Year: y, Month: m, Precision: paper.PrecisionMonth} }
	year := func(y int) paper.Date { return paper.Date{Year: y, Precision: paper.PrecisionYear} }
	tests := []struct {
		name string
		got  paper.Date
		want paper.Date
	}{
		{"numbers", date("2017", "06", "01"), day(2017, 6, 1)},
		{"month name", date("1976", "Sep", "28"), day(1976, 9, 28)},
		{"month only", date("2001", "Jun", ""), month(2001, 6)},
		{"year only", date("1990", "", ""), year(1990)},
		{"impossible day", date("2023", "Feb", "30"), month(2023, 2)},
		{"no year", date("", "Jan", "1"), paper.Date{}},
		{"medline season", medlineDate("2000 Spring"), year(2000)},
		{"medline month range", medlineDate("1998 Dec-1999 Jan"), year(1998)},
		{"medline day range", medlineDate("2001 Jun 12-18"), month(2001, 6)},
		{"medline year range", medlineDate("1975-1976"), year(1975)},
		{"medline day", medlineDate("1965 Aug 3"), day(1965, 8, 3)},
		{"esummary month", medlineDate("1965 Aug"), month(1965, 8)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, tc.got)
		})
	}
}

const record = `<PubmedArticle><MedlineCitation><PMID Version="1">123</PMID><Article>
<Journal><JournalIssue><PubDate><MedlineDate>2019 Nov-Dec</MedlineDate></PubDate></JournalIssue><Title>J Test</Title></Journal>
<ArticleTitle>A <i>tiny</i> record&nbsp;test</ArticleTitle>
<ELocationID EIdType="doi" ValidYN="Y">10.1000/ABC.1</ELocationID>
<Abstract><AbstractText>Unlabelled text.</AbstractText></Abstract>
<AuthorList>
<Author ValidYN="Y"><LastName>Doe</LastName><ForeName>Jane</ForeName><Initials>J</Initials><Suffix>Jr</Suffix><Identifier Source="ORCID">https://orcid.org/0000-0002-1825-009x</Identifier></Author>
<Author ValidYN="Y"><LastName>Roe</LastName><Initials>R</Initials><Identifier Source="ORCID">000000021825009X</Identifier></Author>
<Author ValidYN="N"><LastName>Wrong</LastName><ForeName>Not</ForeName></Author>
<Author ValidYN="Y"><CollectiveName>The Test Consortium</CollectiveName></Author>
</AuthorList><PublicationTypeList><PublicationType>Preprint</PublicationType></PublicationTypeList>
<ArticleDate DateType="Electronic"><Year>2020</Year><Month>01</Month><Day>05</Day></ArticleDate></Article></MedlineCitation>
<PubmedData><History><PubMedPubDate PubStatus="pmc-release"><Year>2999</Year><Month>01</Month><Day>01</Day></PubMedPubDate></History>
<ArticleIdList><ArticleId IdType="pubmed">123</ArticleId><ArticleId IdType="pmc">PMC99</ArticleId></ArticleIdList>
<ReferenceList><Reference><Citation>One.</Citation><ArticleIdList><ArticleId IdType="doi">https://doi.org/10.1000/XY</ArticleId><ArticleId IdType="pubmed">5</ArticleId></ArticleIdList></Reference>
<Reference><Citation>Unresolved.</Citation></Reference>
<Reference><ArticleIdList><ArticleId IdType="pmc">PMC7</ArticleId></ArticleIdList></Reference></ReferenceList></PubmedData></PubmedArticle>`

func TestRecordNormalization(t *testing.T) {
	t.Parallel()
	var set articleSet
	require.NoError(t, decodeXML("efetch", []byte("<PubmedArticleSet>"+record+"</PubmedArticleSet>"), &set))
	require.Len(t, set.Articles, 1)
	p, ok := set.Articles[0].toPaper(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	require.True(t, ok)
	require.NoError(t, p.Validate())
	require.Equal(t, paper.IDs{PubMedID: "123", DOI: "10.1000/abc.1", PMCID: "PMC99"}, p.IDs)
	require.Equal(t, "A tiny record test", p.Title)
	require.Equal(t, "Unlabelled text.", p.Abstract)
	require.Equal(t, []paper.Author{
		{Name: "Jane Doe Jr", GivenName: "Jane", FamilyName: "Doe", ORCID: "0000-0002-1825-009X"},
		{Name: "R Roe", GivenName: "R", FamilyName: "Roe", ORCID: "0000-0002-1825-009X"},
		{Name: "The Test Consortium"},
	}, p.Authors)
	// The issue (Nov-Dec 2019) ends before the electronic date: the issue year wins.
	require.Equal(t, paper.Date{Year: 2019, Precision: paper.PrecisionYear}, p.Published)
	require.Equal(t, "preprint", p.WorkType)
	require.False(t, p.OpenAccess) // PMC copy still under embargo
	require.Equal(t, []paper.IDs{{DOI: "10.1000/xy", PubMedID: "5"}, {PMCID: "PMC7"}}, p.References)
}

func TestAbstractLabels(t *testing.T) {
	t.Parallel()
	var a struct {
		Segments []abstractText `xml:"AbstractText"`
	}
	require.NoError(t, xml.Unmarshal([]byte(`<Abstract><AbstractText Label="AIM">Find <sup>2</sup> things.</AbstractText><AbstractText Label="RESULTS" NlmCategory="RESULTS">Found.</AbstractText></Abstract>`), &a))
	require.Equal(t, "AIM: Find 2 things.\n\nRESULTS: Found.", abstract(a.Segments))
}

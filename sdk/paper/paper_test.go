package paper

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func valid() Paper {
	n := int64(3)
	return Paper{
		IDs:           IDs{DOI: "10.1145/3368089.3409742", ArXivID: "2101.00001", ArXivVersion: 2},
		Title:         "A title",
		Authors:       []Author{{Name: "Ada Lovelace", ORCID: "0000-0002-1825-0097"}},
		Published:     Date{Year: 2024, Month: 2, Day: 29, Precision: PrecisionDay},
		LandingURL:    "https://example.org/p",
		Source:        "example",
		CitationCount: &n,
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	neg := int64(-1)
	tests := []struct {
		name    string
		mutate  func(p *Paper)
		wantErr string
	}{
		{"valid", func(*Paper) {}, ""},
		{"no ids", func(p *Paper) { p.IDs = IDs{} }, "no identifier"},
		{"uppercase doi", func(p *Paper) { p.IDs.DOI = "10.1145/ABC" }, "lowercase DOI"},
		{"doi with resolver", func(p *Paper) { p.IDs.DOI = "https://doi.org/10.1/x" }, "bare lowercase DOI"},
		{"arxiv with version", func(p *Paper) { p.IDs.ArXivID = "2101.00001v2" }, "without version"},
		{"old arxiv id", func(p *Paper) { p.IDs.ArXivID = "hep-th/9901001" }, ""},
		{"empty title", func(p *Paper) { p.Title = " " }, "empty title"},
		{"nameless author", func(p *Paper) { p.Authors[0].Name = "" }, "has no name"},
		{"orcid url", func(p *Paper) { p.Authors[0].ORCID = "https://orcid.org/0000-0002-1825-0097" }, "ORCID"},
		{"not a day", func(p *Paper) { p.Published = Date{Year: 2023, Month: 2, Day: 29, Precision: PrecisionDay} }, "not a day"},
		{"month precision with day", func(p *Paper) { p.Published = Date{Year: 2023, Month: 2, Day: 1, Precision: PrecisionMonth} }, "not a month"},
		{"year precision", func(p *Paper) { p.Published = Date{Year: 2023, Precision: PrecisionYear} }, ""},
		{"relative url", func(p *Paper) { p.PDFURL = "/p.pdf" }, "absolute"},
		{"negative citations", func(p *Paper) { p.CitationCount = &neg }, "negative"},
		{"no source", func(p *Paper) { p.Source = "" }, "no source"},
		{"bad reference", func(p *Paper) { p.References = []IDs{{}} }, "reference 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := valid()
			tc.mutate(&p)
			err := p.Validate()
			if tc.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestDateString(t *testing.T) {
	t.Parallel()
	tests := []struct {
		d    Date
		want string
	}{
		{Date{}, ""},
		{Date{Year: 2024, Precision: PrecisionYear}, "2024"},
		{Date{Year: 2024, Month: 3, Precision: PrecisionMonth}, "2024-03"},
		{Date{Year: 2024, Month: 3, Day: 7, Precision: PrecisionDay}, "2024-03-07"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, tc.d.String())
		})
	}
}

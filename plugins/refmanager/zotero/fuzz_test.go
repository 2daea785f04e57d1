package main

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/plugins/refmanager/zotero/webapi"
	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/plugintest"
)

// FuzzToPaper turns arbitrary Zotero item fields into the record the host
// stores: no panic, the date is a real date (or unknown), the identifiers it
// finds are well formed, and valid UTF-8 stays valid.
func FuzzToPaper(f *testing.F) {
	f.Add("Attention", "10.48550/arXiv.1706.03762", "https://arxiv.org/abs/1706.03762v5", "DOI: 10.1/x", "2017-06-12", "Ashish", "Vaswani")
	f.Add("", "https://doi.org/10.1038/X", "http://x", "arXiv: hep-th/9901001v2", "2017-02", "", "")
	f.Add("T", "", "", "", "1999", "", "Org")
	f.Add("T", "", "", "arXiv: math.GT/0309136v1", "1999", "", "Org")
	f.Fuzz(func(t *testing.T, title, doi, url, extra, parsedDate, first, last string) {
		for _, s := range []string{title, doi, url, extra, parsedDate, first, last} {
			if !utf8.ValidString(s) {
				return // the Web API's JSON decoder hands over valid UTF-8 only
			}
		}
		it := webapi.Item{Key: "ABCD2345", Version: 3, ItemType: "journalArticle", Title: title, DOI: doi, URL: url,
			Extra: extra, ParsedDate: parsedDate,
			Creators: []webapi.Creator{{CreatorType: "author", FirstName: first, LastName: last}}}
		p := toPaper(webapi.User(1), it)
		if err := p.Published.Validate(); err != nil {
			t.Fatalf("parsedDate %q read as %+v: %v", parsedDate, p.Published, err)
		}
		if err := p.IDs.Validate(); err != nil {
			t.Fatalf("identifiers %+v: %v", p.IDs, err)
		}
		plugintest.CheckStrings(t, "the record", p)
	})
}

// FuzzParseCursor reads arbitrary cursors: no panic, and a cursor it accepts
// reads back the same after being written out.
func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{"12:3", "0:0", "3:12", "-1:0", "9223372036854775807:1", ":", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseCursor(s)
		if err != nil {
			return
		}
		again, err := parseCursor(c.String())
		if err != nil || again != c {
			t.Fatalf("cursor %q read as %v, which reads back as %v (%v)", s, c, again, err)
		}
	})
}

// TestDateKeepsTheFinestRealDate pins what FuzzToPaper found: a parsedDate that is
// no real day falls back to its month or year, and a year out of range is no date.
func TestDateKeepsTheFinestRealDate(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want paper.Date
	}{
		{"2017-06-12", paper.Date{Year: 2017, Month: 6, Day: 12, Precision: paper.PrecisionDay}},
		{"2017-02-31", paper.Date{Year: 2017, Month: 2, Precision: paper.PrecisionMonth}},
		{"2017-13-01", paper.Date{Year: 2017, Precision: paper.PrecisionYear}},
		{"2017", paper.Date{Year: 2017, Precision: paper.PrecisionYear}},
		{"1", paper.Date{}},
		{"20177-01", paper.Date{}},
		{"", paper.Date{}},
	} {
		t.Run(tc.in, func(t *testing.T) {
			require.Equal(t, tc.want, date(tc.in))
		})
	}
}

// TestArXivIDInExtraIsWrittenAsArXivDoes pins the arXiv ids a user types in
// Extra: any case in, arXiv's spelling out, nothing for what is no id.
func TestArXivIDInExtraIsWrittenAsArXivDoes(t *testing.T) {
	for in, want := range map[string]string{
		"ARXIV: HEP-TH/9901001v2": "hep-th/9901001",
		"arXiv:math.gt/0309136":   "math.GT/0309136",
		"arxiv: 2101.00001":       "2101.00001",
	} {
		p := toPaper(webapi.User(1), webapi.Item{Key: "K", Title: "t", Extra: in})
		require.Equal(t, want, p.IDs.ArXivID, in)
		require.NoError(t, p.IDs.Validate())
	}
}

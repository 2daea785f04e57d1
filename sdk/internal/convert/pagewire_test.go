package convert

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
	"github.com/lectern-research/lectern/sdk/paper"
)

// pageToProto and papersFromProto are the generated-types path a page took before
// pagewire.go: the reference every test here holds the direct path to.
func pageToProto(papers []paper.Paper, nextCursor string, total int64, source string) *pluginv1.PapersPage {
	out := &pluginv1.PapersPage{NextCursor: nextCursor, TotalEstimate: total}
	for i := range papers {
		pp := PaperToProto(&papers[i])
		if pp.Source == "" {
			pp.Source = source
		}
		out.Papers = append(out.Papers, pp)
	}
	return out
}

func papersFromProto(ps []*pluginv1.Paper) []paper.Paper {
	out := make([]paper.Paper, 0, len(ps))
	for _, p := range ps {
		out = append(out, PaperFromProto(p))
	}
	return out
}

// marshal is proto.Marshal with map keys sorted (there are none in a page, but the
// byte comparisons below must not depend on that).
func marshal(t testing.TB, m proto.Message) []byte {
	t.Helper()
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	require.NoError(t, err)
	return b
}

func ptr[T any](v T) *T { return &v }

// edgePapers are the papers whose fields are easiest to lose or mangle: every
// field set, scripts beyond ASCII, empty strings inside lists, empty versus nil
// slices, a citation count of zero versus none, negative and oversized numbers,
// times before 1970 and outside UTC.
func edgePapers() []paper.Paper {
	paris := time.FixedZone("CET", 3600)
	return []paper.Paper{
		{
			IDs: paper.IDs{
				DOI: "10.1145/3368089.3409742", ArXivID: "2101.00001", ArXivVersion: 3, OpenAlexID: "W2741809807",
				SemanticScholarID: "649def34f8be52c8b66281af98ae884c09aef38b", PubMedID: "31452104", PMCID: "PMC6709623",
				SourceID: "src-1",
			},
			Title: "Über Graphen: 図の学習 — ναι 🚀 (עברית) e\u0301",
			Authors: []paper.Author{
				{
					Name: "Zoë Ünal", GivenName: "Zoë", FamilyName: "Ünal", ORCID: "0000-0002-1825-0097", SourceAuthorID: "A1",
					Affiliations: []paper.Affiliation{{Name: "東京大学", ROR: "https://ror.org/057zh3y96", Country: "JP"}, {Name: "CNRS"}},
				},
				{Name: "李 雷"},
			},
			Abstract:      "Line one\nline two\ttabbed \u0000 nul and \u2028 separator.",
			Published:     paper.Date{Year: 2017, Month: 6, Day: 12, Precision: paper.PrecisionDay},
			Venue:         paper.Venue{Name: "NeurIPS", Type: "conference", Volume: "30", Issue: "2", Pages: "5998–6008", Publisher: "Curran", ISSN: []string{"1049-5258", ""}},
			LandingURL:    "https://arxiv.org/abs/1706.03762",
			PDFURL:        "https://arxiv.org/pdf/1706.03762",
			Source:        "arxiv",
			CitationCount: ptr(int64(123456789012)),
			References:    []paper.IDs{{DOI: "10.1162/neco.1997.9.8.1735"}, {}, {ArXivID: "hep-th/9901001", ArXivVersion: 2}},
			Categories:    []string{"cs.CL", "", "cs.LG"},
			OpenAccess:    true,
			License:       "CC-BY-4.0",
			WorkType:      "article",
			Language:      "de-CH",
			UpdatedAt:     time.Date(2023, 8, 2, 10, 0, 0, 123456789, paris),
		},
		// Nothing set at all, and the source left empty for the serve helper to fill.
		{},
		// Empty but non-nil slices, which protobuf cannot tell from nil.
		{
			Title: "Empty lists", Authors: []paper.Author{}, Categories: []string{}, References: []paper.IDs{},
			Venue: paper.Venue{ISSN: []string{}}, CitationCount: ptr(int64(0)),
		},
		// Numbers at and beyond their wire types' edges.
		{
			IDs:           paper.IDs{ArXivID: "2101.00002", ArXivVersion: -4},
			Title:         "Edges",
			Published:     paper.Date{Year: -44, Month: 3, Precision: paper.PrecisionMonth},
			CitationCount: ptr(int64(-1)),
			Authors:       []paper.Author{{}},
			UpdatedAt:     time.Date(1969, 12, 31, 23, 59, 59, 1, time.UTC),
		},
		// A date with a year but no precision, a venue with only a publisher.
		{
			Title: "Odd date", Published: paper.Date{Year: 2020, Precision: paper.PrecisionYear},
			Venue: paper.Venue{Publisher: "Example Press"}, Source: "",
		},
	}
}

func TestAppendPageWritesWhatProtoMarshalWrites(t *testing.T) {
	t.Parallel()
	papers := edgePapers()
	for _, tc := range []struct {
		name   string
		papers []paper.Paper
		cursor string
		total  int64
	}{
		{"edge papers", papers, "next ✓", 1 << 40},
		{"one paper", papers[:1], "", 0},
		{"no papers", nil, "", -3},
		{"generated page", benchPapers(25), "c25", 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := AppendPage(nil, tc.papers, tc.cursor, tc.total, "plugin-name")
			require.NoError(t, err)
			want := marshal(t, pageToProto(tc.papers, tc.cursor, tc.total, "plugin-name"))
			require.Equal(t, want, got)
			// What a plugin's server stub sends is those bytes unchanged.
			require.Equal(t, want, marshal(t, PageMessage(got)))
		})
	}
}

func TestAppendPageAppendsToWhatTheBufferHolds(t *testing.T) {
	t.Parallel()
	prefix := []byte("keep")
	got, err := AppendPage(prefix, edgePapers()[:1], "c", 1, "s")
	require.NoError(t, err)
	require.Equal(t, "keep", string(got[:4]))
	require.Equal(t, marshal(t, pageToProto(edgePapers()[:1], "c", 1, "s")), got[4:])
}

func TestDecodePageReadsWhatTheProtobufPathReads(t *testing.T) {
	t.Parallel()
	papers := edgePapers()
	raw := marshal(t, pageToProto(papers, "next ✓", 7, "plugin-name"))
	got, err := DecodePage(raw)
	require.NoError(t, err)

	var m pluginv1.PapersPage
	require.NoError(t, proto.Unmarshal(raw, &m))
	require.Equal(t, papersFromProto(m.GetPapers()), got.Papers)
	require.Equal(t, "next ✓", got.NextCursor)
	require.EqualValues(t, 7, got.TotalEstimate)

	// And what that means for each edge, spelled out.
	rich := got.Papers[0]
	require.Equal(t, papers[0].Title, rich.Title)
	require.Equal(t, papers[0].Abstract, rich.Abstract)
	require.Equal(t, papers[0].Authors, rich.Authors)
	require.Equal(t, papers[0].Venue, rich.Venue, "an empty ISSN inside the list survives")
	require.Equal(t, papers[0].References, rich.References, "an empty identifier set inside the list survives")
	require.Equal(t, []string{"cs.CL", "", "cs.LG"}, rich.Categories)
	require.True(t, papers[0].UpdatedAt.Equal(rich.UpdatedAt))
	require.Equal(t, time.UTC, rich.UpdatedAt.Location(), "times arrive in UTC")
	require.Equal(t, papers[0].Published, rich.Published)
	require.Equal(t, int64(123456789012), *rich.CitationCount)

	require.Equal(t, "plugin-name", got.Papers[1].Source, "an empty source is filled with the plugin's name")
	require.Nil(t, got.Papers[1].CitationCount, "no citation count stays none")
	require.True(t, got.Papers[1].UpdatedAt.IsZero())

	empty := got.Papers[2]
	require.Nil(t, empty.Authors, "protobuf has no empty list: empty arrives as nil")
	require.Nil(t, empty.Categories)
	require.Nil(t, empty.References)
	require.Equal(t, paper.Venue{}, empty.Venue)
	require.NotNil(t, empty.CitationCount, "a citation count of zero is not none")
	require.Zero(t, *empty.CitationCount)

	edges := got.Papers[3]
	require.Zero(t, edges.IDs.ArXivVersion, "a negative version is sent as unknown")
	require.Equal(t, -44, edges.Published.Year)
	require.Equal(t, int64(-1), *edges.CitationCount)
	require.Equal(t, []paper.Author{{}}, edges.Authors, "an empty author is still an author")
	require.True(t, papers[3].UpdatedAt.Equal(edges.UpdatedAt))
}

func TestDecodePageLeavesNoPaperSharingMutableState(t *testing.T) {
	t.Parallel()
	raw := marshal(t, pageToProto(benchPapers(3), "", 0, "s"))
	got, err := DecodePage(raw)
	require.NoError(t, err)
	*got.Papers[0].CitationCount = 999
	got.Papers[0].Categories[0] = "changed"
	got.Papers[0].Authors[2].Affiliations[0].Name = "changed"
	// Lists share arrays across papers; appending to one must not reach the next.
	got.Papers[0].Categories = append(got.Papers[0].Categories, "appended")
	got.Papers[0].Authors = append(got.Papers[0].Authors, paper.Author{Name: "appended"})
	got.Papers[0].Authors[0].Affiliations = append(got.Papers[0].Authors[0].Affiliations, paper.Affiliation{Name: "appended"})
	got.Papers[0].References = append(got.Papers[0].References, paper.IDs{DOI: "appended"})
	want, err := DecodePage(raw)
	require.NoError(t, err)
	require.Equal(t, want.Papers[1:], got.Papers[1:])
	// The buffer the page was read from may be reused at once.
	for i := range raw {
		raw[i] = 0
	}
	require.Equal(t, want.Papers[1:], got.Papers[1:])
}

// fill sets every field of m, recursively, to a value distinct from every other
// field's: each list gets two elements, strings are not ASCII. A field of a kind
// fill does not know fails the test, so a new kind of field cannot slip past.
func fill(t *testing.T, m protoreflect.Message, n *int) {
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.IsMap():
			t.Fatalf("%s: fill does not know maps", fd.FullName())
		case fd.IsList():
			l := m.Mutable(fd).List()
			for range 2 {
				if fd.Kind() == protoreflect.MessageKind {
					e := l.NewElement()
					fill(t, e.Message(), n)
					l.Append(e)
				} else {
					l.Append(scalar(t, fd, n))
				}
			}
		case fd.Kind() == protoreflect.MessageKind:
			fill(t, m.Mutable(fd).Message(), n)
		default:
			m.Set(fd, scalar(t, fd, n))
		}
	}
}

func scalar(t *testing.T, fd protoreflect.FieldDescriptor, n *int) protoreflect.Value {
	*n++
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(fmt.Sprintf("%s №%d — 論文 ✓", fd.Name(), *n))
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(true)
	case protoreflect.Int32Kind:
		return protoreflect.ValueOfInt32(int32(*n))
	case protoreflect.Int64Kind:
		return protoreflect.ValueOfInt64(int64(*n) * 1_000_003)
	case protoreflect.Uint32Kind:
		return protoreflect.ValueOfUint32(uint32(*n))
	case protoreflect.EnumKind:
		return protoreflect.ValueOfEnum(protoreflect.EnumNumber(1 + *n%3))
	}
	t.Fatalf("%s: fill does not know %s fields", fd.FullName(), fd.Kind())
	return protoreflect.Value{}
}

// TestEveryPaperFieldCrossesBothWays fills every field the protocol's Paper has
// (including any added later) and checks that the SDK's conversion keeps each,
// that the direct decoder reads each, and that the direct encoder writes each
// back: a field missing from any of them fails here.
func TestEveryPaperFieldCrossesBothWays(t *testing.T) {
	t.Parallel()
	n := 0
	page := &pluginv1.PapersPage{}
	fill(t, page.ProtoReflect(), &n)
	require.Len(t, page.GetPapers(), 2)

	sdk := papersFromProto(page.GetPapers())
	require.True(t, proto.Equal(page, pageToProto(sdk, page.GetNextCursor(), page.GetTotalEstimate(), "")),
		"PaperFromProto and PaperToProto lose a field")

	raw := marshal(t, page)
	got, err := DecodePage(raw)
	require.NoError(t, err)
	require.Equal(t, sdk, got.Papers)
	require.Equal(t, page.GetNextCursor(), got.NextCursor)
	require.Equal(t, page.GetTotalEstimate(), got.TotalEstimate)

	back, err := AppendPage(nil, got.Papers, got.NextCursor, got.TotalEstimate, "")
	require.NoError(t, err)
	require.Equal(t, raw, back)
}

func TestDecodePageMergesAndSkipsAsProtobufDoes(t *testing.T) {
	t.Parallel()
	one := marshal(t, pageToProto(edgePapers()[:1], "first", 1, "s"))
	two := marshal(t, pageToProto(edgePapers()[3:4], "second", 0, "s"))
	// A paper message repeated inside itself merges; unknown fields of every wire
	// type are skipped; a known field with the wrong wire type is unknown.
	var inner pluginv1.Paper
	require.NoError(t, proto.Unmarshal(marshal(t, pageToProto(edgePapers()[:1], "", 0, "s").GetPapers()[0]), &inner))
	body := marshal(t, &inner)
	body = append(body, marshal(t, pageToProto(edgePapers()[3:4], "", 0, "s").GetPapers()[0])...)
	body = protowire.AppendTag(body, 99, protowire.Fixed32Type)
	body = protowire.AppendFixed32(body, 7)
	body = protowire.AppendTag(body, 98, protowire.Fixed64Type)
	body = protowire.AppendFixed64(body, 7)
	body = protowire.AppendTag(body, 97, protowire.StartGroupType)
	body = protowire.AppendTag(body, 1, protowire.VarintType)
	body = protowire.AppendVarint(body, 5)
	body = protowire.AppendTag(body, 97, protowire.EndGroupType)
	body = protowire.AppendTag(body, paperTitle, protowire.VarintType)
	body = protowire.AppendVarint(body, 1)
	merged := protowire.AppendTag(nil, pagePapers, protowire.BytesType)
	merged = protowire.AppendBytes(merged, body)

	for name, raw := range map[string][]byte{
		"two pages concatenated": append(append([]byte{}, one...), two...),
		"merged paper":           merged,
	} {
		t.Run(name, func(t *testing.T) {
			var m pluginv1.PapersPage
			require.NoError(t, proto.Unmarshal(raw, &m))
			got, err := DecodePage(raw)
			require.NoError(t, err)
			require.Equal(t, papersFromProto(m.GetPapers()), got.Papers)
			require.Equal(t, m.GetNextCursor(), got.NextCursor)
			require.Equal(t, m.GetTotalEstimate(), got.TotalEstimate)
		})
	}
}

func TestInvalidUTF8IsRefusedBothWays(t *testing.T) {
	t.Parallel()
	bad := string([]byte{'C', 'a', 'f', 0xe9})
	for name, p := range map[string]paper.Paper{
		"title":       {Title: bad},
		"author":      {Authors: []paper.Author{{Affiliations: []paper.Affiliation{{Country: bad}}}}},
		"category":    {Categories: []string{"ok", bad}},
		"reference":   {References: []paper.IDs{{PMCID: bad}}},
		"venue issn":  {Venue: paper.Venue{ISSN: []string{bad}}},
		"identifiers": {IDs: paper.IDs{SourceID: bad}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := proto.Marshal(pageToProto([]paper.Paper{p}, "", 0, "s"))
			require.Error(t, err, "protobuf refuses it too")
			_, err = AppendPage(nil, []paper.Paper{{Title: "fine"}, p}, "", 0, "s")
			require.ErrorContains(t, err, "paper 1: a text field is not valid UTF-8")
		})
	}
	_, err := AppendPage(nil, nil, bad, 0, "s")
	require.ErrorContains(t, err, "next cursor")

	// A plugin built with another protobuf library could still send one.
	raw := protowire.AppendTag(nil, pagePapers, protowire.BytesType)
	raw = protowire.AppendBytes(raw, protowire.AppendString(protowire.AppendTag(nil, paperTitle, protowire.BytesType), bad))
	require.Error(t, proto.Unmarshal(raw, &pluginv1.PapersPage{}))
	_, err = DecodePage(raw)
	require.ErrorContains(t, err, "not valid UTF-8")
}

// FuzzDecodePage holds the direct decoder to protobuf on any input: both refuse
// it, or both read the same page.
func FuzzDecodePage(f *testing.F) {
	f.Add(marshal(f, pageToProto(edgePapers(), "c", 3, "s")))
	f.Add(marshal(f, pageToProto(benchPapers(2), "", 0, "s")))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, raw []byte) {
		var m pluginv1.PapersPage
		protoErr := proto.Unmarshal(raw, &m)
		got, err := DecodePage(raw)
		if protoErr != nil {
			require.Error(t, err, "protobuf refused it: %v", protoErr)
			return
		}
		require.NoError(t, err)
		require.Equal(t, papersFromProto(m.GetPapers()), got.Papers)
		require.Equal(t, m.GetNextCursor(), got.NextCursor)
		require.Equal(t, m.GetTotalEstimate(), got.TotalEstimate)
	})
}

// benchPapers is a page like the example source's: three authors with one
// affiliation each, three references, one category.
func benchPapers(n int) []paper.Paper {
	out := make([]paper.Paper, n)
	for i := range out {
		p := paper.Paper{
			IDs: paper.IDs{
				DOI: fmt.Sprintf("10.5555/lectern.example.%04d", i), ArXivID: fmt.Sprintf("2302.%05d", 10000+i), ArXivVersion: 1 + i%3,
				OpenAlexID: fmt.Sprintf("W9%09d", i), SemanticScholarID: "649def34f8be52c8b66281af98ae884c09aef38b", PubMedID: fmt.Sprint(30000000 + i),
			},
			Title:         fmt.Sprintf("Graph neural networks for molecules, part %d", i),
			Abstract:      fmt.Sprintf("We study graph neural networks for molecules. This is example paper %d of the Lectern example source; its text is generated.", i),
			Published:     paper.Date{Year: 2023, Month: 2, Day: 3, Precision: paper.PrecisionDay},
			Venue:         paper.Venue{Name: "NeurIPS", Type: "conference", Volume: "33", Pages: fmt.Sprintf("%d-%d", 100+i, 112+i), Publisher: "Example Press"},
			LandingURL:    fmt.Sprintf("https://example.org/papers/%d", i),
			PDFURL:        fmt.Sprintf("https://example.org/papers/%d.pdf", i),
			Source:        "example",
			CitationCount: ptr(int64(i * 37 % 500)),
			Categories:    []string{"cs.LG"},
			OpenAccess:    i%2 == 0,
			License:       "CC-BY-4.0",
			WorkType:      "article",
			Language:      "en",
			UpdatedAt:     time.Date(2023, 2, 4, 0, 0, 0, 0, time.UTC),
		}
		for a := range 3 {
			p.Authors = append(p.Authors, paper.Author{
				Name: "Ada Lovelace", GivenName: "Ada", FamilyName: "Lovelace", ORCID: fmt.Sprintf("0000-0002-%04d-1000", 1000+a), SourceAuthorID: fmt.Sprint("A", a),
				Affiliations: []paper.Affiliation{{Name: "Institute of Examples", ROR: "https://ror.org/00example", Country: "GB"}},
			})
			p.References = append(p.References, paper.IDs{DOI: fmt.Sprintf("10.5555/lectern.example.%04d", i+a)})
		}
		out[i] = p
	}
	return out
}

// BenchmarkPage compares, for the example source's 25-paper page, the generated
// types path (build pluginv1 messages, proto.Marshal; proto.Unmarshal, copy into
// paper.Paper) with the direct one (AppendPage; DecodePage).
func BenchmarkPage(b *testing.B) {
	papers := benchPapers(25)
	raw := marshal(b, pageToProto(papers, "c", 200, "example"))
	b.Run("encode/protobuf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := proto.Marshal(pageToProto(papers, "c", 200, "example")); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encode/direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := AppendPage(nil, papers, "c", 200, "example"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode/protobuf", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var m pluginv1.PapersPage
			if err := proto.Unmarshal(raw, &m); err != nil {
				b.Fatal(err)
			}
			_ = papersFromProto(m.GetPapers())
		}
	})
	b.Run("decode/direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodePage(raw); err != nil {
				b.Fatal(err)
			}
		}
	})
}

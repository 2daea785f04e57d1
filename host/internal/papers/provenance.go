package papers

// A paper's bibliographic fields come from two places: heuristics over its PDF
// (pdftext, stored by ApplyPDFTx) and public records of the paper sources (stored
// by ApplyRecordTx). papers.provenance (migration 0011) maps each field to where
// its value came from, so the API and the paper page can say which fields are
// still unverified.

// Fields whose origin provenance records.
const (
	FieldTitle         = "title"
	FieldAuthors       = "authors"
	FieldAbstract      = "abstract"
	FieldYear          = "year"
	FieldVenue         = "venue"
	FieldDOI           = "doi"
	FieldArxivID       = "arxiv_id"
	FieldCitationCount = "citation_count"
	FieldPDFURL        = "pdf_url"
)

// FromPDF is the provenance of a value read from the paper's own PDF and not (yet)
// checked against a source.
const FromPDF = "pdf"

// provenanceOrder is the order Unverified lists fields in: the order the paper
// page shows them.
var provenanceOrder = []string{FieldTitle, FieldAuthors, FieldYear, FieldVenue, FieldDOI, FieldArxivID, FieldAbstract}

// unverified lists the fields of prov read from the PDF, in provenanceOrder; nil
// when there are none.
func unverified(prov map[string]string) []string {
	var out []string
	for _, f := range provenanceOrder {
		if prov[f] == FromPDF {
			out = append(out, f)
		}
	}
	return out
}

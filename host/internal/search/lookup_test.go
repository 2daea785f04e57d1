package search

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/paper"
)

// A title match is taken only when the first authors share a surname, however
// each side writes the name; a side that names nobody does not refuse it.
func TestSameFirstAuthor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		printed string
		authors []paper.Author
		want    bool
	}{
		{"full name against family name", "Andres M. Bran", []paper.Author{{Name: "Andres M. Bran", FamilyName: "M. Bran"}}, true},
		{"accents and case differ only in letters kept", "Günter Neumann", []paper.Author{{Name: "G. NEUMANN"}}, true},
		{"surname first with a comma", "White, Andrew D.", []paper.Author{{Name: "Andrew D. White"}}, true},
		{"another first author", "Geemi P. Wellawatte", []paper.Author{{Name: "Andrew D. White"}}, false},
		{"the PDF names nobody", "", []paper.Author{{Name: "Andrew D. White"}}, true},
		{"the record names nobody", "Geemi P. Wellawatte", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, sameFirstAuthor(tc.printed, tc.authors))
		})
	}
}

package ingest

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fixturetest"
)

// TestAnUploadGetsTheAuthorsAndAbstractItsPDFPrints checks that the owner's own
// upload is filled with what its first page says: authors with the affiliation and
// email printed for them, the abstract, the year and the venue.
func TestAnUploadGetsTheAuthorsAndAbstractItsPDFPrints(t *testing.T) {
	t.Parallel()
	pdf := fixturetest.Read(t, "pdfs/bmc_jtmo_2010_4_1_with_groundtruth.pdf")
	b := setup(t)
	ctx := context.Background()

	rec, res := b.upload(t, b.ann, "dvt.pdf", pdf)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	state, output := b.waitJob(t, res.Job.ID)
	require.Equal(t, "completed", state, output)

	var (
		authorsJSON     []byte
		abstract, venue *string
		date            *time.Time
		precision       *string
	)
	require.NoError(t, b.pool.QueryRow(ctx, `
		SELECT authors, abstract, venue, publication_date, publication_date_precision
		  FROM papers WHERE id = $1`, res.PaperID).Scan(&authorsJSON, &abstract, &venue, &date, &precision))
	var authors []struct {
		Name        string `json:"name"`
		Affiliation string `json:"affiliation"`
		Email       string `json:"email"`
	}
	require.NoError(t, json.Unmarshal(authorsJSON, &authors))
	var names []string
	for _, a := range authors {
		names = append(names, a.Name)
	}
	require.Equal(t, []string{"Indraneel Datta", "Chad G Ball", "Lucas Rudmik", "S Morad Hameed", "John B Kortbeek"}, names)
	require.Equal(t, "ball.chad@gmail.com", authors[1].Email)
	require.NotNil(t, abstract)
	require.Contains(t, *abstract, "Deep venous thrombosis prophylaxis is essential")
	require.NotNil(t, date)
	require.Equal(t, 2010, date.Year())
	require.Equal(t, "year", *precision)
	require.NotNil(t, venue)
	require.Equal(t, "Journal of Trauma Management & Outcomes", *venue)
}

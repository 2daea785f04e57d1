package fsrs_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/fsrs"
)

func TestReadReviewLog(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		in      string
		want    []fsrs.Review
		wantErr string
	}{
		{
			name: "py-fsrs layout",
			in: "card_id,review_rating,review_time,review_duration\n" +
				"1711684180217,1,2024-03-29T20:32:32.250000+00:00,25060\n" +
				"1711684780667,3,2024-03-29T22:32:39.497+02:00,\n",
			want: []fsrs.Review{
				{CardID: "1711684180217", Rating: fsrs.Again, Time: time.Date(2024, 3, 29, 20, 32, 32, 250e6, time.UTC), Duration: 25060 * time.Millisecond},
				{CardID: "1711684780667", Rating: fsrs.Good, Time: time.Date(2024, 3, 29, 20, 32, 39, 497e6, time.UTC)},
			},
		},
		{
			name: "alternative names, other order, extra column, Unix milliseconds",
			in:   "\ufefftime,note,rating,cid\n1711744352250,x,4,a\n",
			want: []fsrs.Review{{CardID: "a", Rating: fsrs.Easy, Time: time.UnixMilli(1711744352250).UTC()}},
		},
		{name: "header only", in: "card_id,review_rating,review_time\n", want: nil},
		{name: "empty", in: "", wantErr: "empty"},
		{name: "missing column", in: "card_id,review_time\n", wantErr: "review_rating or rating"},
		{name: "bad rating", in: "card_id,review_rating,review_time\na,1,2024-01-01T00:00:00Z\nb,5,2024-01-01T00:00:00Z\n", wantErr: "line 3: rating \"5\""},
		{name: "bad time", in: "card_id,review_rating,review_time\na,1,yesterday\n", wantErr: "line 2: time \"yesterday\""},
		{name: "time without zone", in: "card_id,review_rating,review_time\na,1,2024-01-01T00:00:00\n", wantErr: "line 2: time"},
		{name: "bad duration", in: "card_id,review_rating,review_time,review_duration\na,1,2024-01-01T00:00:00Z,-3\n", wantErr: "line 2: duration"},
		{name: "empty card", in: "card_id,review_rating,review_time\n,1,2024-01-01T00:00:00Z\n", wantErr: "line 2: empty card id"},
		{name: "wrong field count", in: "card_id,review_rating,review_time\na,1\n", wantErr: "line 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := fsrs.ReadReviewLog(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				require.True(t, strings.HasPrefix(err.Error(), "fsrs: "), err.Error())
				return
			}
			require.NoError(t, err)
			require.Len(t, got, len(tt.want))
			for i := range tt.want {
				require.Equal(t, tt.want[i].CardID, got[i].CardID)
				require.Equal(t, tt.want[i].Rating, got[i].Rating)
				require.True(t, tt.want[i].Time.Equal(got[i].Time), "time %v != %v", got[i].Time, tt.want[i].Time)
				require.Equal(t, tt.want[i].Duration, got[i].Duration)
			}
		})
	}
}

func TestReadReviewLogFixture(t *testing.T) {
	t.Parallel()
	reviews := loadReviewLog(t)
	require.Len(t, reviews, 12580)
	cards := map[string]bool{}
	for _, r := range reviews {
		cards[r.CardID] = true
	}
	require.Len(t, cards, 1205)
}

package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/paper"
)

func TestToDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   s2Paper
		want paper.Date
	}{
		{"day", s2Paper{PublicationDate: "2023-04-11", Year: 2023}, paper.Date{Year: 2023, Month: 4, Day: 11, Precision: paper.PrecisionDay}},
		{"year only", s2Paper{Year: 1950}, paper.Date{Year: 1950, Precision: paper.PrecisionYear}},
		{"bad date falls back to year", s2Paper{PublicationDate: "2023-02-30", Year: 2023}, paper.Date{Year: 2023, Precision: paper.PrecisionYear}},
		{"nothing", s2Paper{}, paper.Date{}},
		{"out of range year", s2Paper{Year: 20230}, paper.Date{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, toDate(&tc.in))
		})
	}
}

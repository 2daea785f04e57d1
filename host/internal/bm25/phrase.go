package bm25

import (
	"slices"

	"github.com/google/uuid"
)

// verify offers the passages that match q only if its phrases hold, best first,
// to p.Candidate in batches growing fourfold, until no passage left can enter the
// best p.Limit of sure and those confirmed. It returns those confirmed, best first.
func verify(unsure []Hit, sure []Hit, p SearchParams) ([]Hit, error) {
	slices.SortFunc(unsure, compare)
	var found []Hit
	batch := 4 * p.Limit
	for i := 0; i < len(unsure); {
		if top := merge(sure, found, p.Limit); len(top) == p.Limit && better(top[len(top)-1], unsure[i]) {
			break
		}
		j := min(i+batch, len(unsure))
		ids := make([]uuid.UUID, 0, j-i)
		for _, h := range unsure[i:j] {
			ids = append(ids, h.ID)
		}
		ok, err := p.Candidate(ids)
		if err != nil {
			return nil, err
		}
		for _, h := range unsure[i:j] {
			if ok[h.ID] {
				found = append(found, h)
			}
		}
		i, batch = j, batch*4
	}
	return found, nil
}

// merge returns the best limit hits of a and b, each sorted best first.
func merge(a, b []Hit, limit int) []Hit {
	out := make([]Hit, 0, min(limit, len(a)+len(b)))
	for len(out) < limit && (len(a) > 0 || len(b) > 0) {
		if len(b) == 0 || len(a) > 0 && better(a[0], b[0]) {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return out
}

// compare orders hits best first, for sorting.
func compare(a, b Hit) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}

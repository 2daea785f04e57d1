package jobs

import "context"

// InsertPeriodic inserts each job of s's periodic table the way the elected
// leader does at its time, and reports for each kind whether River skipped the
// insert as a duplicate.
func InsertPeriodic(ctx context.Context, s *Service) (map[string]bool, error) {
	skipped := map[string]bool{}
	for _, e := range periodicTable(s.rt) {
		opts, err := e.insertOpts(s.rt)
		if err != nil {
			return nil, err
		}
		res, err := s.rt.client.Insert(ctx, e.args, opts)
		if err != nil {
			return nil, err
		}
		skipped[e.args.Kind()] = res.UniqueSkippedAsDuplicate
	}
	return skipped, nil
}

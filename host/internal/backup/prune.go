package backup

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Prune applies the retention rules and returns the points it deleted. A point
// is kept when it is among the newest KeepLast or younger than MaxAge (a zero
// rule keeps nothing by itself; with both zero nothing is pruned). Whatever the
// rules say, the newest point is never pruned, one run prunes at most half of
// the points (the oldest first), and the safety backup of the last restore is
// kept while its status names it.
func (s *Service) Prune() ([]string, error) {
	points, err := s.List()
	if err != nil {
		return nil, err
	}
	protected := ""
	if s.cfg.TriggerDir != "" {
		if st, err := readStatus(s.cfg.TriggerDir); err == nil && st != nil {
			protected = st.SafetyBackup
		}
	}
	victims := pruneCandidates(points, s.cfg.KeepLast, s.cfg.MaxAge, s.cfg.Now(), protected)
	var deleted []string
	for _, name := range victims {
		if err := os.RemoveAll(filepath.Join(s.cfg.Dir, name)); err != nil {
			return deleted, fmt.Errorf("backup: prune %s: %w", name, err)
		}
		s.log.Info("backup: pruned a restore point", "point", name)
		deleted = append(deleted, name)
	}
	return deleted, nil
}

// pruneCandidates is the retention decision; points are newest first.
func pruneCandidates(points []Point, keepLast int, maxAge time.Duration, now time.Time, protected string) []string {
	if len(points) < 2 || (keepLast <= 0 && maxAge <= 0) {
		return nil
	}
	limit := len(points) / 2
	var out []string
	// Oldest first, so the cap of one run spares the newer points.
	for i := len(points) - 1; i >= 1 && len(out) < limit; i-- {
		p := points[i]
		if p.Name == protected {
			continue
		}
		keptByCount := keepLast > 0 && i < keepLast
		keptByAge := maxAge > 0 && now.Sub(p.Time) < maxAge
		if keptByCount || keptByAge {
			continue
		}
		out = append(out, p.Name)
	}
	return out
}

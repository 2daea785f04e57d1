package backup

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// Watch is the sidecar's loop (`lectern backup watch`): every poll it takes a
// restore request or a "back up now" from the trigger folder, and every Interval
// it makes a scheduled point and prunes. It holds a lock on the trigger folder so
// a second sidecar refuses to start, and marks a restore a killed sidecar left
// "running" as failed. It returns when ctx ends.
func (s *Service) Watch(ctx context.Context, poll time.Duration) error {
	if s.cfg.TriggerDir == "" {
		return errors.New("backup: no trigger folder configured")
	}
	if err := os.MkdirAll(s.cfg.TriggerDir, 0o755); err != nil {
		return fmt.Errorf("backup: create the trigger folder: %w", err)
	}
	unlock, err := lockFolder(s.cfg.TriggerDir)
	if err != nil {
		return err
	}
	defer unlock()
	s.recoverInterrupted()
	next := s.nextScheduled()
	tick := time.NewTicker(poll)
	defer tick.Stop()
	for {
		s.serveTriggers(ctx)
		if now := s.cfg.Now(); !now.Before(next) {
			s.runBackup(ctx, KindScheduled)
			if _, err := s.Prune(); err != nil {
				s.log.Error("backup: prune", "error", err)
			}
			next = now.Add(s.cfg.Interval)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// serveTriggers handles a pending restore request, then a pending "back up now".
func (s *Service) serveTriggers(ctx context.Context) {
	var req RestoreRequest
	err := readJSON(s.cfg.TriggerDir, RestoreRequestFile, &req)
	switch {
	case err == nil:
		// Consumed first: a request that crashes the sidecar is not retried forever.
		_ = os.Remove(filepath.Join(s.cfg.TriggerDir, RestoreRequestFile))
		s.log.Info("backup: restore requested", "point", req.Point, "by", req.RequestedBy)
		_, _ = s.Restore(ctx, req)
	case !errors.Is(err, fs.ErrNotExist):
		s.log.Error("backup: unreadable restore request, removed", "error", err)
		_ = os.Remove(filepath.Join(s.cfg.TriggerDir, RestoreRequestFile))
	}
	now := filepath.Join(s.cfg.TriggerDir, BackupNowFile)
	if exists(now) {
		_ = os.Remove(now)
		s.runBackup(ctx, KindManual)
	}
}

// runBackup makes one point and records the run in .last_backup.json.
func (s *Service) runBackup(ctx context.Context, kind string) {
	rec := LastBackup{State: StateRunning, Kind: kind, StartedAt: stamp(s.cfg.Now())}
	s.saveLastBackup(rec)
	name, err := s.Create(ctx, kind)
	rec.FinishedAt, rec.Point = stamp(s.cfg.Now()), name
	if err != nil {
		s.log.Error("backup: make a restore point", "kind", kind, "error", err)
		rec.State, rec.Error = StateFailed, "The backup failed; the backup sidecar's log says why."
	} else {
		rec.State = StateSucceeded
	}
	s.saveLastBackup(rec)
}

func (s *Service) saveLastBackup(rec LastBackup) {
	if err := writeJSONAtomic(s.cfg.TriggerDir, LastBackupFile, rec, 0o644); err != nil {
		s.log.Error("backup: write the last backup's status", "error", err)
	}
}

// nextScheduled is when the next scheduled point is due: an Interval after the
// newest scheduled or manual point, or now when there is none.
func (s *Service) nextScheduled() time.Time {
	points, err := s.List()
	if err != nil {
		return s.cfg.Now()
	}
	for _, p := range points {
		if p.Kind != KindSafety {
			return p.Time.Add(s.cfg.Interval)
		}
	}
	return s.cfg.Now()
}

// recoverInterrupted ends a restore status a killed sidecar left running: failed,
// and in maintenance when the destructive step had begun.
func (s *Service) recoverInterrupted() {
	st, err := readStatus(s.cfg.TriggerDir)
	if err != nil || st == nil || st.State != StateRunning {
		return
	}
	r := &restoreRun{s: s, st: *st}
	r.finish(errors.New("backup: the sidecar stopped during the restore"))
}

// ClaimTriggerFolder takes the lock a backup sidecar holds on the trigger folder
// while it watches (Watch takes it), creating the folder. A second claim fails
// while the first is held. The app asks Watching before it leaves a request, so
// that nothing is asked of a sidecar that is not there.
func ClaimTriggerFolder(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("backup: create the trigger folder: %w", err)
	}
	return lockFolder(dir)
}

// Watching reports whether a backup sidecar holds the trigger folder's lock.
func Watching(dir string) bool {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDONLY, 0)
	if err != nil {
		return false // no folder or no lock file: no sidecar ever watched it
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err != nil {
		return true
	}
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return false
}

// lockFolder takes an exclusive lock on dir's lock file, or says another sidecar
// holds it.
func lockFolder(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFile), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("backup: open the sidecar lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, errors.New("backup: another backup sidecar is running on this trigger folder")
	}
	return func() { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN); f.Close() }, nil
}

package backup

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lectern-research/lectern/host/internal/audit"
	"github.com/lectern-research/lectern/host/internal/jobs"
	"github.com/lectern-research/lectern/host/internal/store"
	"github.com/lectern-research/lectern/host/internal/users"
)

// Restore steps, in order. The swap is the destructive step: from it on, a
// failure leaves the .destructive marker (maintenance) and the safety backup is
// the way back.
const (
	StepVerifySignature  = "verify_signature"
	StepCheckCompat      = "check_compat"
	StepDecryptProbe     = "decrypt_probe"
	StepSafetyBackup     = "safety_backup"
	StepRestoreStaging   = "restore_staging"
	StepSwap             = "swap"
	StepRevokeCredential = "revoke_credentials"
	StepRestorePDFs      = "restore_pdfs"
)

var restoreSteps = []string{StepVerifySignature, StepCheckCompat, StepDecryptProbe, StepSafetyBackup,
	StepRestoreStaging, StepSwap, StepRevokeCredential, StepRestorePDFs}

// errInjected is the failure FailAfterStep injects (tests only).
var errInjected = errors.New("backup: failure injected for a test (LECTERN_BACKUP_TEST_FAIL_AFTER)")

// errNewerSchema refuses a point of a newer schema.
var errNewerSchema = errors.New("backup: the point was made by a newer Lectern")

// errUnknownSchema refuses a point that does not say its schema.
var errUnknownSchema = errors.New("backup: the point does not say which schema it holds")

// Restore replaces the live database and the PDF folder with point req.Point, and
// reports every step in the trigger folder's .restore_status.json. It refuses a
// point with a bad signature or a newer schema, checks the identity can decrypt
// before anything changes, takes a safety backup, restores into a staging
// database (migrated to this binary's schema), swaps it in, and revokes every
// session, sign-in link and pairing token of the restored database.
func (s *Service) Restore(ctx context.Context, req RestoreRequest) (*Status, error) {
	if s.cfg.TriggerDir == "" {
		return nil, errors.New("backup: no trigger folder configured")
	}
	r := &restoreRun{s: s, st: Status{RequestID: req.RequestID, Point: req.Point, State: StateRunning,
		StartedAt: stamp(s.cfg.Now())}}
	for _, name := range restoreSteps {
		r.st.Steps = append(r.st.Steps, Step{Name: name, Status: StepPending})
	}
	if err := r.save(); err != nil {
		return nil, err
	}
	err := r.run(ctx, req.Point)
	r.finish(err)
	return &r.st, err
}

// restoreRun is one restore and its status.
type restoreRun struct {
	s       *Service
	st      Status
	point   Point
	staging string
}

func (r *restoreRun) run(ctx context.Context, name string) error {
	s := r.s
	steps := []struct {
		name string
		fn   func(context.Context) error
	}{
		{StepVerifySignature, func(context.Context) error {
			p, err := openPoint(s.cfg.Dir, name, s.cfg.SigningKey, s.schemaVersion())
			r.point = p
			return err
		}},
		{StepCheckCompat, func(context.Context) error {
			switch r.point.Compat {
			case CompatNewer:
				return errNewerSchema
			case CompatUnknown:
				return errUnknownSchema
			}
			return nil
		}},
		{StepDecryptProbe, func(context.Context) error { return s.decryptProbe(r.point) }},
		{StepSafetyBackup, func(ctx context.Context) error {
			safety, err := s.Create(ctx, KindSafety)
			r.st.SafetyBackup = safety
			return err
		}},
		{StepRestoreStaging, func(ctx context.Context) error {
			live, _ := databaseName(s.db.URL)
			r.staging = live + "_staging_" + randomHex(4)
			return s.prepareStaging(ctx, r.point, r.staging)
		}},
		{StepSwap, func(ctx context.Context) error {
			r.st.Destructive = true
			if err := r.save(); err != nil {
				return err
			}
			if err := s.swap(ctx, r.staging); err != nil {
				return err
			}
			r.staging = ""
			return nil
		}},
		{StepRevokeCredential, s.revokeCredentials},
		{StepRestorePDFs, func(context.Context) error { return s.restorePDFs(r.point) }},
	}
	for _, step := range steps {
		if err := r.step(ctx, step.name, step.fn); err != nil {
			if r.staging != "" {
				s.dropDatabase(context.WithoutCancel(ctx), r.staging)
			}
			return err
		}
	}
	return nil
}

// step runs one step, saving its status before and after.
func (r *restoreRun) step(ctx context.Context, name string, fn func(context.Context) error) error {
	r.st.CurrentStep = name
	r.mark(name, StepRunning)
	if err := r.save(); err != nil {
		return err
	}
	if err := fn(ctx); err != nil {
		r.mark(name, StepFailed)
		return fmt.Errorf("%s: %w", name, err)
	}
	r.mark(name, StepDone)
	if r.s.cfg.FailAfterStep == name {
		return fmt.Errorf("%s: %w", name, errInjected)
	}
	return r.save()
}

func (r *restoreRun) mark(name, status string) {
	for i := range r.st.Steps {
		if r.st.Steps[i].Name == name {
			r.st.Steps[i].Status = status
		}
	}
}

func (r *restoreRun) save() error {
	return writeJSONAtomic(r.s.cfg.TriggerDir, RestoreStatusFile, &r.st, 0o644)
}

// finish records the outcome: the state, the admin's sentence, and on a failure
// after the destructive step the .destructive marker; a success clears it.
func (r *restoreRun) finish(err error) {
	s := r.s
	r.st.FinishedAt = stamp(s.cfg.Now())
	marker := filepath.Join(s.cfg.TriggerDir, DestructiveFile)
	switch {
	case err == nil:
		r.st.State, r.st.CurrentStep = StateSucceeded, ""
		if rmErr := os.Remove(marker); rmErr != nil && !errors.Is(rmErr, os.ErrNotExist) {
			s.log.Error("backup: clear the maintenance marker", "error", rmErr)
		}
	case errors.Is(err, ErrBadSignature) || errors.Is(err, errNewerSchema) || errors.Is(err, errUnknownSchema) || errors.Is(err, ErrNoPoint):
		r.st.State = StateRefused
	default:
		r.st.State = StateFailed
	}
	for i := range r.st.Steps {
		if r.st.Steps[i].Status == StepPending && err != nil {
			r.st.Steps[i].Status = StepSkipped
		}
	}
	if err != nil {
		r.st.Error = r.sentence(err)
		s.log.Error("backup: restore failed", "point", r.st.Point, "step", r.st.CurrentStep, "error", err)
		if r.st.Destructive {
			if werr := writeAtomic(s.cfg.TriggerDir, DestructiveFile, []byte(r.st.Error+"\n"), 0o644); werr != nil {
				s.log.Error("backup: write the maintenance marker", "error", werr)
			}
		}
	} else {
		s.log.Info("backup: restore finished", "point", r.st.Point, "safety_backup", r.st.SafetyBackup)
	}
	if serr := r.save(); serr != nil {
		s.log.Error("backup: write the restore status", "error", serr)
	}
}

// sentence is the admin's one sentence for a failed restore.
func (r *restoreRun) sentence(err error) string {
	switch {
	case errors.Is(err, ErrNoPoint):
		return "The restore point " + r.st.Point + " does not exist; nothing was changed."
	case errors.Is(err, ErrBadSignature):
		return "The restore point's signature does not match (it was changed, or signed with another key), so it was refused; nothing was changed."
	case errors.Is(err, errNewerSchema):
		return fmt.Sprintf("The restore point was made by a newer Lectern (schema %d, this one runs %d); upgrade Lectern first. Nothing was changed.",
			r.point.SchemaVersion, r.s.schemaVersion())
	case errors.Is(err, errUnknownSchema):
		return "The restore point does not say which schema it holds, so it was refused; nothing was changed."
	case errors.Is(err, ErrWrongKey):
		return "The backup key of this host cannot decrypt the restore point; nothing was changed. Configure the identity it was encrypted to and try again."
	case r.st.Destructive:
		return fmt.Sprintf("The restore failed at step %s after the live database was replaced, so Lectern stays in maintenance; restore the safety backup %s from the backups panel.",
			r.st.CurrentStep, r.st.SafetyBackup)
	}
	return fmt.Sprintf("The restore failed at step %s before anything was changed; the backup sidecar's log says why.", r.st.CurrentStep)
}

// decryptProbe checks that the configured identity opens every archive the
// restore reads, before anything is changed.
func (s *Service) decryptProbe(p Point) error {
	if !p.Encrypted {
		return nil
	}
	for _, base := range []string{DatabaseFile, PDFsFile} {
		f, ok := p.manifest.file(base)
		if !ok {
			continue
		}
		src, err := os.Open(filepath.Join(s.cfg.Dir, p.Name, f.Name))
		if err != nil {
			return fmt.Errorf("backup: open %s: %w", f.Name, err)
		}
		r, err := decryptFrom(src, true, s.cfg.Identities)
		if err == nil {
			_, err = io.ReadFull(r, make([]byte, 1))
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
				err = nil
			}
		}
		src.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// prepareStaging restores the point into database staging, migrates it to this
// binary's schema and hands it to the app's role.
func (s *Service) prepareStaging(ctx context.Context, p Point, staging string) error {
	if err := s.restoreInto(ctx, p, staging); err != nil {
		return err
	}
	pool, err := s.openPool(ctx, staging)
	if err != nil {
		return err
	}
	defer pool.Close()
	if _, err := store.NewMigrator(pool, s.migrations).Migrate(ctx); err != nil {
		return fmt.Errorf("backup: migrate the restored database: %w", err)
	}
	if err := jobs.Migrate(ctx, pool); err != nil {
		return err
	}
	if s.db.AppRole != "" {
		if _, err := store.HandOver(ctx, pool, s.db.AppRole); err != nil {
			return err
		}
		// The dump has no owners nor grants: the log came back the superuser's,
		// and the application's role could not write it.
		if err := audit.SecureLog(ctx, pool); err != nil {
			return err
		}
	}
	return nil
}

// swap puts staging in the live database's place in one short step: the live
// database stops taking connections, its sessions end, it is renamed away, the
// staging database takes its name, and the old one is dropped.
func (s *Service) swap(ctx context.Context, staging string) error {
	live, _ := databaseName(s.db.URL)
	maint, err := s.openPool(ctx, "postgres")
	if err != nil {
		return err
	}
	defer maint.Close()
	old := live + "_replaced_" + randomHex(4)
	id := func(n string) string { return pgx.Identifier{n}.Sanitize() }
	stmts := []string{
		"ALTER DATABASE " + id(live) + " WITH ALLOW_CONNECTIONS false",
		"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = " + quoteLiteral(live) + " AND pid <> pg_backend_pid()",
		"ALTER DATABASE " + id(live) + " RENAME TO " + id(old),
		"ALTER DATABASE " + id(staging) + " RENAME TO " + id(live),
		"DROP DATABASE " + id(old) + " WITH (FORCE)",
	}
	for _, q := range stmts {
		if _, err := maint.Exec(ctx, q); err != nil {
			return fmt.Errorf("backup: swap the databases: %w", err)
		}
	}
	return nil
}

func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// revokeCredentials ends every session, sign-in link and pairing token in the
// (restored) live database.
func (s *Service) revokeCredentials(ctx context.Context) error {
	live, _ := databaseName(s.db.URL)
	pool, err := s.openPool(ctx, live)
	if err != nil {
		return err
	}
	defer pool.Close()
	n, err := users.RevokeAllCredentials(ctx, pool, s.cfg.Now())
	if err != nil {
		return err
	}
	s.log.Info("backup: revoked every credential of the restored database",
		"sessions", n.Sessions, "sign_in_links", n.SignInLinks, "pairing_tokens", n.PairingTokens)
	return nil
}

// restorePDFs extracts the point's PDFs beside the PDF folder and swaps the
// folders.
func (s *Service) restorePDFs(p Point) error {
	target := filepath.Clean(s.cfg.PDFDir)
	suffix := randomHex(4)
	fresh := target + ".restoring-" + suffix
	if err := os.MkdirAll(fresh, 0o750); err != nil {
		return fmt.Errorf("backup: prepare the PDF folder: %w", err)
	}
	_, err := s.readPDFArchive(p, func(hdr *tar.Header, r io.Reader) error { return extractTo(fresh, hdr, r) })
	if err != nil {
		_ = os.RemoveAll(fresh)
		return err
	}
	old := target + ".replaced-" + suffix
	if exists(target) {
		if err := os.Rename(target, old); err != nil {
			_ = os.RemoveAll(fresh)
			return fmt.Errorf("backup: move the current PDF folder aside: %w", err)
		}
	}
	if err := os.Rename(fresh, target); err != nil {
		return fmt.Errorf("backup: move the restored PDF folder into place: %w", err)
	}
	return os.RemoveAll(old)
}

// extractTo writes one archive entry under root, refusing paths that leave it.
func extractTo(root string, hdr *tar.Header, r io.Reader) error {
	name := filepath.FromSlash(hdr.Name)
	if filepath.IsAbs(name) || !filepath.IsLocal(name) {
		return fmt.Errorf("backup: the PDF archive holds a path outside its folder: %q", hdr.Name)
	}
	dst := filepath.Join(root, name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		return fmt.Errorf("backup: extract %s: %w", hdr.Name, err)
	}
	mode := os.FileMode(hdr.Mode).Perm()
	if mode == 0 {
		mode = 0o640
	}
	f, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("backup: extract %s: %w", hdr.Name, err)
	}
	if _, err := io.Copy(f, r); err != nil {
		f.Close()
		return fmt.Errorf("backup: extract %s: %w", hdr.Name, err)
	}
	return f.Close()
}

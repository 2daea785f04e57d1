package backup

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"filippo.io/age"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/store"
)

// Config is what the sidecar needs. Build it from *config.Config (cli does).
type Config struct {
	// Dir is LECTERN_BACKUP_DIR, the backup folder. Required.
	Dir string
	// TriggerDir is LECTERN_BACKUP_TRIGGER_DIR, the folder the app writes its
	// sentinels to. Required for Watch and Restore.
	TriggerDir string
	// PDFDir is the uploaded-PDF folder (LECTERN_DATA_DIR/pdfs). Required.
	PDFDir string
	// SigningKey signs and authenticates manifests (see SigningKey). Required.
	SigningKey []byte
	// Recipients encrypt every archive when set (LECTERN_BACKUP_AGE_RECIPIENTS).
	// Default none: no encryption.
	Recipients []age.Recipient
	// Identities decrypt encrypted points (LECTERN_BACKUP_AGE_IDENTITY_FILE).
	Identities []age.Identity
	// Secrets are the values stored in secrets.tar.gz.age, by variable name;
	// empty values are left out. Only written when encrypting.
	Secrets map[string]string
	// KeepLast and MaxAge are the retention rules (LECTERN_BACKUP_KEEP_LAST,
	// LECTERN_BACKUP_MAX_AGE); zero switches a rule off.
	KeepLast int
	MaxAge   time.Duration
	// Interval is LECTERN_BACKUP_INTERVAL, the schedule of Watch. Default 24h.
	Interval time.Duration
	// AppVersion is written to manifests.
	AppVersion string
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// Logger defaults to slog.Default().
	Logger *slog.Logger
	// FailAfterStep, for tests only, fails a restore right after the named step
	// (LECTERN_BACKUP_TEST_FAIL_AFTER, read by cli only when ENVIRONMENT is not
	// production). Default empty: never.
	FailAfterStep string
}

// Database is the Lectern database the sidecar dumps and replaces.
type Database struct {
	// URL connects to the Lectern database as a role that may create, rename and
	// drop databases (the cluster's superuser, or an owner with CREATEDB).
	URL string
	// AppRole, when set, is handed the restored schema (store.HandOver): the
	// embedded cluster restores as its superuser and serves as pgembed.AppRole.
	AppRole string
}

// Service is the sidecar's side of backup: make, verify, prune and restore points.
type Service struct {
	cfg        Config
	db         Database
	migrations []store.Migration
	log        *slog.Logger
}

// New returns the sidecar's Service. migrations are the binary's (restored
// databases of an older schema are migrated to them before the swap).
func New(cfg Config, db Database, migrations []store.Migration) (*Service, error) {
	if cfg.Dir == "" || cfg.PDFDir == "" {
		return nil, errors.New("backup: the backup folder and the PDF folder must be set")
	}
	if len(cfg.SigningKey) == 0 {
		return nil, errors.New("backup: no signing key: set BACKUP_SIGNING_KEY (or SERVICE_API_KEY)")
	}
	if _, err := databaseName(db.URL); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Interval <= 0 {
		cfg.Interval = 24 * time.Hour
	}
	return &Service{cfg: cfg, db: db, migrations: migrations, log: cfg.Logger}, nil
}

// schemaVersion is the newest migration this binary carries.
func (s *Service) schemaVersion() int {
	if len(s.migrations) == 0 {
		return 0
	}
	return s.migrations[len(s.migrations)-1].Version
}

// databaseName is the database a URL names.
func databaseName(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", errors.New("backup: the database URL must be a postgres:// URL")
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" {
		return "", errors.New("backup: the database URL names no database")
	}
	return name, nil
}

// withDatabase returns raw pointing at database name on the same server.
func withDatabase(raw, name string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	u.Path = "/" + name
	return u.String()
}

// openPool opens a small pool on database name of the server.
func (s *Service) openPool(ctx context.Context, name string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(withDatabase(s.db.URL, name))
	if err != nil {
		return nil, fmt.Errorf("backup: database URL: %w", err)
	}
	cfg.MaxConns = 2
	cfg.AfterConnect = store.AfterConnect
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("backup: connect to %s: %w", name, err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("backup: connect to %s: %w", name, err)
	}
	return pool, nil
}

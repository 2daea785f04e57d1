package cli

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/lectern-research/lectern/host/internal/config"
)

// devConfigKeyFile holds the generated SERVICE_CONFIG_KEY of a development install.
const devConfigKeyFile = "config.key"

// ensureDevConfigKey gives a development install without SERVICE_CONFIG_KEY a key of
// its own, generated once into LECTERN_DATA_DIR/config.key (mode 0600), so secrets
// can be stored from the first `make run`. Production never gets here: there a
// missing key refuses to start.
func ensureDevConfigKey(cfg *config.Config, log *slog.Logger) error {
	if cfg.IsProduction() || cfg.ServiceConfigKey.IsSet() {
		return nil
	}
	key, err := devKey(cfg, log, devConfigKeyFile, "SERVICE_CONFIG_KEY")
	if err != nil {
		return fmt.Errorf("development config key: %w", err)
	}
	cfg.ServiceConfigKey = key
	return nil
}

// devBackupKeyFile holds the generated backup signing key of a development install.
const devBackupKeyFile = "backup-signing.key"

// ensureDevBackupKey gives a development install without BACKUP_SIGNING_KEY or
// SERVICE_API_KEY a backup signing key of its own (LECTERN_DATA_DIR/
// backup-signing.key, mode 0600), so `make run` makes and restores backups from
// the start; the server and `lectern backup` read the same file. Production sets
// its keys.
func ensureDevBackupKey(cfg *config.Config, log *slog.Logger) error {
	if cfg.IsProduction() || cfg.BackupSigningKey.IsSet() || cfg.ServiceAPIKey.IsSet() {
		return nil
	}
	key, err := devKey(cfg, log, devBackupKeyFile, "BACKUP_SIGNING_KEY")
	if err != nil {
		return fmt.Errorf("development backup signing key: %w", err)
	}
	cfg.BackupSigningKey = key
	return nil
}

// devKey reads the key in LECTERN_DATA_DIR/file, generating 32 random bytes (hex)
// into it the first time.
func devKey(cfg *config.Config, log *slog.Logger, file, setting string) (config.Secret, error) {
	path := filepath.Join(cfg.DataDir, file)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return config.Secret{}, err
		}
		if err := os.MkdirAll(cfg.DataDir, 0o711); err != nil {
			return config.Secret{}, err
		}
		b = []byte(hex.EncodeToString(raw) + "\n")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return config.Secret{}, err
		}
		log.Warn(setting+" is not set: generated a development key; set "+setting+" in production", "file", path)
	} else if err != nil {
		return config.Secret{}, err
	}
	return config.NewSecret(strings.TrimSpace(string(b))), nil
}

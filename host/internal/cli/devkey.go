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
	path := filepath.Join(cfg.DataDir, devConfigKeyFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		raw := make([]byte, 32)
		if _, err := rand.Read(raw); err != nil {
			return fmt.Errorf("generate development config key: %w", err)
		}
		if err := os.MkdirAll(cfg.DataDir, 0o711); err != nil {
			return fmt.Errorf("generate development config key: %w", err)
		}
		b = []byte(hex.EncodeToString(raw) + "\n")
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return fmt.Errorf("generate development config key: %w", err)
		}
		log.Warn("SERVICE_CONFIG_KEY is not set: generated a development key; set SERVICE_CONFIG_KEY in production", "file", path)
	} else if err != nil {
		return fmt.Errorf("read development config key: %w", err)
	}
	cfg.ServiceConfigKey = config.NewSecret(strings.TrimSpace(string(b)))
	return nil
}

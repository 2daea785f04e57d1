package config

import "path/filepath"

// BackupFolder is LECTERN_BACKUP_DIR, or LECTERN_DATA_DIR/backups when unset.
func (c *Config) BackupFolder() string {
	if c.BackupDir != "" {
		return c.BackupDir
	}
	return filepath.Join(c.DataDir, "backups")
}

// BackupTriggerFolder is LECTERN_BACKUP_TRIGGER_DIR, or
// LECTERN_DATA_DIR/backup-trigger when unset.
func (c *Config) BackupTriggerFolder() string {
	if c.BackupTriggerDir != "" {
		return c.BackupTriggerDir
	}
	return filepath.Join(c.DataDir, "backup-trigger")
}

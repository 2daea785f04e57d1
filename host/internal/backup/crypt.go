package backup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"filippo.io/age"
)

// ParseRecipients parses LECTERN_BACKUP_AGE_RECIPIENTS (age1… public keys).
func ParseRecipients(keys []string) ([]age.Recipient, error) {
	var out []age.Recipient
	for _, k := range keys {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		r, err := age.ParseX25519Recipient(k)
		if err != nil {
			return nil, fmt.Errorf("backup: LECTERN_BACKUP_AGE_RECIPIENTS: %q is not an age public key (age1…)", shorten(k))
		}
		out = append(out, r)
	}
	return out, nil
}

// ReadIdentities reads an age identity file (AGE-SECRET-KEY-1… lines).
func ReadIdentities(path string) ([]age.Identity, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("backup: open the age identity file: %w", err)
	}
	defer f.Close()
	ids, err := age.ParseIdentities(f)
	if err != nil {
		return nil, fmt.Errorf("backup: %s holds no age identity (AGE-SECRET-KEY-1…): %w", path, err)
	}
	return ids, nil
}

// ErrWrongKey means the archives are encrypted to a key the configured identity
// does not hold.
var ErrWrongKey = errors.New("backup: the age identity cannot decrypt this point (it was encrypted to another key)")

// encryptTo wraps w so that what is written is encrypted to recipients; with none,
// w is returned as it is. Close the result to finish the age stream.
func encryptTo(w io.Writer, recipients []age.Recipient) (io.WriteCloser, error) {
	if len(recipients) == 0 {
		return nopWriteCloser{w}, nil
	}
	enc, err := age.Encrypt(w, recipients...)
	if err != nil {
		return nil, fmt.Errorf("backup: encrypt: %w", err)
	}
	return enc, nil
}

// decryptFrom unwraps r when encrypted.
func decryptFrom(r io.Reader, encrypted bool, ids []age.Identity) (io.Reader, error) {
	if !encrypted {
		return r, nil
	}
	if len(ids) == 0 {
		return nil, errors.New("backup: the point is encrypted and no age identity is configured (LECTERN_BACKUP_AGE_IDENTITY_FILE)")
	}
	out, err := age.Decrypt(r, ids...)
	if err != nil {
		var noMatch *age.NoIdentityMatchError
		if errors.As(err, &noMatch) {
			return nil, ErrWrongKey
		}
		return nil, fmt.Errorf("backup: decrypt: %w", err)
	}
	return out, nil
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

func shorten(s string) string {
	if len(s) > 12 {
		return s[:12] + "…"
	}
	return s
}

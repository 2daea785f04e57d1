// Package secrets seals secret user_config values under SERVICE_CONFIG_KEY with
// AES-256-GCM, and opens values sealed under SERVICE_CONFIG_KEY_OLD during a key
// rotation (SPEC "Config key rotation").
//
// A sealed value is: version byte 0x01 | 12-byte random nonce | ciphertext and tag.
// The AES key is derived from the configured key string with HKDF-SHA256, and each
// value is bound to its row through the additional data (owner and config key), so a
// ciphertext copied onto another user's row does not open.
package secrets

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

const formatV1 byte = 0x01

// ErrNoKey means SERVICE_CONFIG_KEY is not configured, so secrets cannot be stored.
var ErrNoKey = errors.New("secrets: SERVICE_CONFIG_KEY is not configured")

// ErrUnknownKey means a value was sealed under a key that is neither
// SERVICE_CONFIG_KEY nor SERVICE_CONFIG_KEY_OLD.
var ErrUnknownKey = errors.New("secrets: value was sealed under a key that is not configured")

// ErrCorrupt means a value does not open: tampered with, or moved to another row.
var ErrCorrupt = errors.New("secrets: value does not decrypt (tampered or moved)")

type key struct {
	id   string
	aead cipher.AEAD
}

// Keyring holds the current key and, during rotation, the previous one.
type Keyring struct {
	current *key
	old     *key
}

// NewKeyring derives the keys. current may be empty (then Seal fails with ErrNoKey
// and nothing can be opened); old is empty outside a rotation.
func NewKeyring(current, old string) (*Keyring, error) {
	k := &Keyring{}
	var err error
	if current != "" {
		if k.current, err = deriveKey(current); err != nil {
			return nil, err
		}
	}
	if old != "" {
		if k.old, err = deriveKey(old); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// KeyID identifies the key that Seal uses now; "" without a key.
func (k *Keyring) KeyID() string {
	if k.current == nil {
		return ""
	}
	return k.current.id
}

// OldKeyID identifies SERVICE_CONFIG_KEY_OLD; "" outside a rotation.
func (k *Keyring) OldKeyID() string {
	if k.old == nil {
		return ""
	}
	return k.old.id
}

func deriveKey(secret string) (*key, error) {
	raw, err := hkdf.Key(sha256.New, []byte(secret), []byte("lectern/user_config/v1"), "aes-256-gcm", 32)
	if err != nil {
		return nil, fmt.Errorf("secrets: derive key: %w", err)
	}
	block, err := aes.NewCipher(raw)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secrets: %w", err)
	}
	sum := sha256.Sum256([]byte("lectern/key-id/v1:" + secret))
	return &key{id: hex.EncodeToString(sum[:8]), aead: aead}, nil
}

// Seal encrypts plaintext under the current key, bound to aad. It returns the sealed
// bytes and the id of the key used.
func (k *Keyring) Seal(plaintext, aad []byte) ([]byte, string, error) {
	if k.current == nil {
		return nil, "", ErrNoKey
	}
	nonce := make([]byte, k.current.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, "", fmt.Errorf("secrets: nonce: %w", err)
	}
	out := make([]byte, 0, 1+len(nonce)+len(plaintext)+k.current.aead.Overhead())
	out = append(out, formatV1)
	out = append(out, nonce...)
	out = k.current.aead.Seal(out, nonce, plaintext, aad)
	return out, k.current.id, nil
}

// Open decrypts sealed, which keyID says was sealed under the current or the old key.
func (k *Keyring) Open(sealed []byte, keyID string, aad []byte) ([]byte, error) {
	var kk *key
	switch {
	case k.current != nil && keyID == k.current.id:
		kk = k.current
	case k.old != nil && keyID == k.old.id:
		kk = k.old
	default:
		return nil, ErrUnknownKey
	}
	ns := kk.aead.NonceSize()
	if len(sealed) < 1+ns+kk.aead.Overhead() || sealed[0] != formatV1 {
		return nil, ErrCorrupt
	}
	plain, err := kk.aead.Open(nil, sealed[1:1+ns], sealed[1+ns:], aad)
	if err != nil {
		return nil, ErrCorrupt
	}
	return plain, nil
}

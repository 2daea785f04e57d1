package classifier

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
)

// Version is the blob format Seal writes and Open reads (pulse_models.version).
const Version = "v1"

var (
	// ErrNoKey means neither SERVICE_MODEL_HMAC_KEY nor SERVICE_API_KEY is set, so
	// no model can be signed or verified.
	ErrNoKey = errors.New("classifier: no signing key: set SERVICE_MODEL_HMAC_KEY (or SERVICE_API_KEY outside production)")
	// ErrDerivedKeyRefused means the key would be derived from SERVICE_API_KEY
	// where that is not allowed (production).
	ErrDerivedKeyRefused = errors.New("classifier: SERVICE_MODEL_HMAC_KEY is required in production; it is not derived from SERVICE_API_KEY there")
	// ErrTampered means a stored model's tag does not match its blob (changed
	// bytes, another user's row, or a key that was rotated): nothing is loaded.
	ErrTampered = errors.New("classifier: the stored model does not match its signature")
)

// Key resolves the signing key (SPEC "Pulse model signing"): SERVICE_MODEL_HMAC_KEY
// when set; otherwise, where derivation is allowed (outside production), the
// SHA-256 of "model-signing:" followed by SERVICE_API_KEY; otherwise an error.
// Callers resolve it when they sign or verify, not at start, so a missing key
// fails the model's work and nothing else.
func Key(modelHMACKey, apiKey string, mayDerive bool) ([]byte, error) {
	switch {
	case modelHMACKey != "":
		return []byte(modelHMACKey), nil
	case apiKey == "":
		return nil, ErrNoKey
	case !mayDerive:
		return nil, ErrDerivedKeyRefused
	}
	sum := sha256.Sum256([]byte("model-signing:" + apiKey))
	return sum[:], nil
}

// Seal serialises m for userID and signs it: the blob and its 32-byte tag, stored
// side by side in pulse_models. The tag covers the format version and the user, so
// a blob copied onto another user's row does not verify.
func Seal(m *Model, userID uuid.UUID, key []byte) (blob, tag []byte, err error) {
	if len(key) == 0 {
		return nil, nil, ErrNoKey
	}
	if len(m.Weights) != len(m.Features) {
		return nil, nil, fmt.Errorf("classifier: seal: %d weights for %d features", len(m.Weights), len(m.Features))
	}
	blob, err = json.Marshal(m)
	if err != nil {
		return nil, nil, fmt.Errorf("classifier: seal: %w", err)
	}
	return blob, mac(key, userID, blob), nil
}

// Open verifies tag over blob for userID, and only then decodes the model. A tag
// that does not match is ErrTampered and nothing of the blob is read.
func Open(blob, tag []byte, userID uuid.UUID, key []byte) (*Model, error) {
	if len(key) == 0 {
		return nil, ErrNoKey
	}
	if !hmac.Equal(tag, mac(key, userID, blob)) {
		return nil, ErrTampered
	}
	var m Model
	if err := json.Unmarshal(blob, &m); err != nil {
		return nil, fmt.Errorf("classifier: open a signed model: %w", err)
	}
	if len(m.Weights) != len(m.Features) {
		return nil, fmt.Errorf("classifier: open: %d weights for %d features", len(m.Weights), len(m.Features))
	}
	// A model trained on fewer features than today's reads the ones it knows;
	// the Probability of a feature it lacks is simply not weighed.
	if !slices.Equal(m.Features, Features) {
		for _, f := range m.Features {
			if !slices.Contains(Features, f) {
				return nil, fmt.Errorf("classifier: open: unknown feature %q", f)
			}
		}
	}
	return &m, nil
}

func mac(key []byte, userID uuid.UUID, blob []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte("lectern-pulse-model:" + Version + ":"))
	h.Write(userID[:])
	h.Write(blob)
	return h.Sum(nil)
}

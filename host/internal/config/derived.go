package config

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"strings"
)

// modelSigningPrefix is the prefix the legacy Pulse signing-key fallback
// hashes in front of SERVICE_API_KEY.
const modelSigningPrefix = "model-signing:"

// secretsEqual compares two secrets in constant time.
func secretsEqual(a, b string) bool {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

// derivedFromAPIKey reports whether hmacKey is SERVICE_API_KEY itself,
// "model-signing:"+SERVICE_API_KEY, or SHA-256 of either in raw bytes,
// hex (any case) or standard/URL base64 with or without padding. Such a
// key adds no independent secret: whoever holds the API key can sign
// models.
func derivedFromAPIKey(hmacKey, apiKey string) bool {
	prefixed := modelSigningPrefix + apiKey
	candidates := []string{apiKey, prefixed}
	for _, input := range []string{prefixed, apiKey} {
		sum := sha256.Sum256([]byte(input))
		if strings.EqualFold(hmacKey, hex.EncodeToString(sum[:])) {
			return true
		}
		candidates = append(candidates,
			string(sum[:]),
			base64.StdEncoding.EncodeToString(sum[:]),
			base64.RawStdEncoding.EncodeToString(sum[:]),
			base64.URLEncoding.EncodeToString(sum[:]),
			base64.RawURLEncoding.EncodeToString(sum[:]),
		)
	}
	for _, c := range candidates {
		if secretsEqual(hmacKey, c) {
			return true
		}
	}
	return false
}

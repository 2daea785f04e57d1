package config

import (
	"errors"
	"fmt"
	"strings"
)

// Production key rules beyond length and per-character entropy (issue 14): a key
// made of too few different characters, of a repeated short pattern, or of a simple
// run ("abcdef...", "0123...") is refused, and no two keys may share a value.
const (
	// minKeyDistinct is the fewest different characters (case ignored) a key may
	// use. Sixteen would refuse about one random 32-character base64 or
	// alphanumeric key in 1,600; twelve refused none of 3,000,000 of each.
	minKeyDistinct = 12
	// minHexDistinct is the same floor for a hexadecimal key, which has only 16
	// symbols: 64 random hex digits (openssl rand -hex 32) miss one of them about
	// one time in four, and none of 1,000,000 had fewer than ten.
	minHexDistinct = 10
	// maxRepeatShare is the largest share of characters a key may have equal to
	// the character a fixed distance before it ("abcabc...", "Passw0rd!Passw0rd!").
	maxRepeatShare = 0.6
	// maxStepShare is the largest share of neighbouring characters a key may have
	// one apart or equal in code point ("abcdef", "987654", "aaaa").
	maxStepShare = 0.6
)

// checkKeyPattern refuses a key an attacker would guess before random ones. It is
// applied in production, after checkKeyStrength; case is ignored. Its error never
// contains the key.
func checkKeyPattern(key string) error {
	k := []rune(strings.ToLower(key))
	seen := map[rune]bool{}
	hex := true
	for _, r := range k {
		seen[r] = true
		if !strings.ContainsRune("0123456789abcdef", r) {
			hex = false
		}
	}
	need := minKeyDistinct
	if hex {
		need = minHexDistinct
	}
	if len(seen) < need {
		return fmt.Errorf("is too predictable: it uses only %d different characters (at least %d needed); %s", len(seen), need, keyHint)
	}
	for p := 1; p <= len(k)/2; p++ {
		same := 0
		for i := p; i < len(k); i++ {
			if k[i] == k[i-p] {
				same++
			}
		}
		if float64(same) > maxRepeatShare*float64(len(k)-p) {
			return errors.New("is too predictable: it repeats a short pattern; " + keyHint)
		}
	}
	steps := 0
	for i := 1; i < len(k); i++ {
		if d := k[i] - k[i-1]; d >= -1 && d <= 1 {
			steps++
		}
	}
	if float64(steps) > maxStepShare*float64(len(k)-1) {
		return errors.New("is too predictable: it is mostly a run of neighbouring characters (like abcdef or 123456); " + keyHint)
	}
	return nil
}

// sharedKeyNames are the secrets that must each have their own value in production.
// SERVICE_CONFIG_KEY_OLD against SERVICE_CONFIG_KEY has its own rule.
var sharedKeyNames = []string{
	"SERVICE_API_KEY", "SERVICE_CONFIG_KEY", "SERVICE_CONFIG_KEY_OLD", "SERVICE_MODEL_HMAC_KEY",
	"INFRA_INGEST_KEY", "GATEWAY_SALT_KEY", "LLM_GATEWAY_KEY", "QDRANT_API_KEY",
}

// refuseSharedKeys refuses a key whose value (ignoring case) is another key's: one
// leaked value must not open two doors. The later key in the list is the one named.
func (l *loader) refuseSharedKeys(c *Config) {
	values := map[string]Secret{
		"SERVICE_API_KEY": c.ServiceAPIKey, "SERVICE_CONFIG_KEY": c.ServiceConfigKey,
		"SERVICE_CONFIG_KEY_OLD": c.ServiceConfigKeyOld, "SERVICE_MODEL_HMAC_KEY": c.ServiceModelHMACKey,
		"INFRA_INGEST_KEY": c.InfraIngestKey, "GATEWAY_SALT_KEY": c.GatewaySaltKey,
		"LLM_GATEWAY_KEY": c.LLMGatewayKey, "QDRANT_API_KEY": c.QdrantAPIKey,
	}
	for j, b := range sharedKeyNames {
		vb := values[b]
		if !vb.IsSet() || vb.Value() == "" || l.bad[b] {
			continue
		}
		for _, a := range sharedKeyNames[:j] {
			va := values[a]
			if !va.IsSet() || (a == "SERVICE_CONFIG_KEY" && b == "SERVICE_CONFIG_KEY_OLD") {
				continue
			}
			if secretsEqual(strings.ToLower(va.Value()), strings.ToLower(vb.Value())) {
				l.fail(b, fmt.Sprintf("must not have the same value as %s (case is ignored); give each key its own, %s", a, keyHint), nil)
				break
			}
		}
	}
}

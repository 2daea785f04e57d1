package secrets

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSealOpenRoundTripAndBinding(t *testing.T) {
	t.Parallel()
	k, err := NewKeyring("0123456789abcdef0123456789abcdef-current", "")
	require.NoError(t, err)

	sealed, id, err := k.Seal([]byte("zotero-secret"), []byte("user-a|zotero.api_key"))
	require.NoError(t, err)
	require.Equal(t, k.KeyID(), id)
	require.NotContains(t, string(sealed), "zotero-secret")

	plain, err := k.Open(sealed, id, []byte("user-a|zotero.api_key"))
	require.NoError(t, err)
	require.Equal(t, "zotero-secret", string(plain))

	_, err = k.Open(sealed, id, []byte("user-b|zotero.api_key"))
	require.ErrorIs(t, err, ErrCorrupt, "a value moved to another row does not open")

	tampered := append([]byte(nil), sealed...)
	tampered[len(tampered)-1] ^= 1
	_, err = k.Open(tampered, id, []byte("user-a|zotero.api_key"))
	require.ErrorIs(t, err, ErrCorrupt)

	again, _, err := k.Seal([]byte("zotero-secret"), []byte("user-a|zotero.api_key"))
	require.NoError(t, err)
	require.NotEqual(t, sealed, again, "every seal uses a fresh nonce")
}

func TestRotation(t *testing.T) {
	t.Parallel()
	oldKey, newKey := "old-key-0123456789abcdef0123456789ab", "new-key-0123456789abcdef0123456789ab"
	before, err := NewKeyring(oldKey, "")
	require.NoError(t, err)
	sealed, oldID, err := before.Seal([]byte("v"), nil)
	require.NoError(t, err)

	during, err := NewKeyring(newKey, oldKey)
	require.NoError(t, err)
	require.Equal(t, oldID, during.OldKeyID())
	require.NotEqual(t, oldID, during.KeyID())
	plain, err := during.Open(sealed, oldID, nil)
	require.NoError(t, err, "reads accept the old key during rotation")
	require.Equal(t, "v", string(plain))

	after, err := NewKeyring(newKey, "")
	require.NoError(t, err)
	_, err = after.Open(sealed, oldID, nil)
	require.ErrorIs(t, err, ErrUnknownKey)

	none, err := NewKeyring("", "")
	require.NoError(t, err)
	_, _, err = none.Seal([]byte("v"), nil)
	require.ErrorIs(t, err, ErrNoKey)
}

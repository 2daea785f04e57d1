package jobs_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/jobs"
)

// A OnePerOwner kind runs once per owner at a time: a second enqueue while the
// first is queued or running is refused (409 through the API), another owner's is
// not, and once the first ends the owner may start again.
func TestOnePerOwnerKindsNeverOverlap(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	a := userCaller(b.userA)
	first := b.create(t, a, "test.solo", map[string]any{})

	status, body := b.do(t, a, http.MethodPost, "/api/jobs", map[string]any{"kind": "test.solo", "args": map[string]any{}})
	require.Equal(t, http.StatusConflict, status, "%s", body)
	require.Contains(t, string(body), "job_already_active")
	require.Contains(t, string(body), "A test.solo job of yours is already queued or running")
	_, err := b.svc.Enqueue(ctx, b.userA, soloArgs{})
	require.ErrorIs(t, err, jobs.ErrAlreadyActive, "the host's own enqueue is held to it too")

	other := b.create(t, userCaller(b.userB), "test.solo", map[string]any{})
	require.NotEqual(t, first.ID, other.ID)

	<-b.kinds.soloStarted
	status, _ = b.do(t, a, http.MethodPost, "/api/jobs/"+strconv.FormatInt(first.ID, 10)+"/cancel", nil)
	require.Less(t, status, 300)
	b.waitState(t, a, first.ID, jobs.StateCancelled)
	again := b.create(t, a, "test.solo", map[string]any{})
	require.NotEqual(t, first.ID, again.ID)
}

package convert

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lectern-research/lectern/sdk/protocol"
)

func TestErrorsRoundTrip(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in       error
		wantCode codes.Code
		want     error
	}{
		{"not found", protocol.NotFound("no paper"), codes.NotFound, protocol.ErrNotFound},
		{"bad request", protocol.BadRequest("bad"), codes.InvalidArgument, protocol.ErrBadRequest},
		{"unauthorized", protocol.Unauthorized("key rejected"), codes.Unauthenticated, protocol.ErrUnauthorized},
		{"unavailable", protocol.Unavailable(errors.New("dial"), "upstream down"), codes.Unavailable, protocol.ErrUnavailable},
		{"unsupported", protocol.Unsupported("no"), codes.Unimplemented, protocol.ErrUnsupported},
		{"rate limited", protocol.RateLimited(3*time.Second, "slow down"), codes.ResourceExhausted, protocol.ErrRateLimited},
		{"wrapped typed", errors.Join(errors.New("ctx"), protocol.NotFound("x")), codes.NotFound, protocol.ErrNotFound},
		{"plain error", errors.New("boom"), codes.Internal, protocol.ErrInternal},
		{"canceled", context.Canceled, codes.Canceled, context.Canceled},
		{"deadline", context.DeadlineExceeded, codes.DeadlineExceeded, context.DeadlineExceeded},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st := ErrToStatus(tc.in)
			require.Equal(t, tc.wantCode, status.Code(st))
			back := StatusToErr(context.Background(), st)
			require.ErrorIs(t, back, tc.want)
		})
	}
}

func TestRetryAfterCrossesTheWire(t *testing.T) {
	t.Parallel()
	back := StatusToErr(context.Background(), ErrToStatus(protocol.RateLimited(1500*time.Millisecond, "slow down")))
	var e *protocol.Error
	require.ErrorAs(t, back, &e)
	require.Equal(t, 1500*time.Millisecond, e.RetryAfter)
	require.Equal(t, "slow down", e.Message)
}

func TestStatusToErrPrefersCallerContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, StatusToErr(ctx, status.Error(codes.Unavailable, "gone")), context.Canceled)
}

func TestBrokenConnectionIsUnavailable(t *testing.T) {
	t.Parallel()
	err := StatusToErr(context.Background(), status.Error(codes.Unavailable, "error reading from server: EOF"))
	require.ErrorIs(t, err, protocol.ErrUnavailable)
}

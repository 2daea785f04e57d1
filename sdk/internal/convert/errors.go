package convert

import (
	"context"
	"errors"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lectern-research/lectern/sdk/internal/pb/pluginv1"
	"github.com/lectern-research/lectern/sdk/protocol"
)

var codeToGRPC = map[protocol.Code]codes.Code{
	protocol.CodeUnavailable:  codes.Unavailable,
	protocol.CodeRateLimited:  codes.ResourceExhausted,
	protocol.CodeBadRequest:   codes.InvalidArgument,
	protocol.CodeUnauthorized: codes.Unauthenticated,
	protocol.CodeNotFound:     codes.NotFound,
	protocol.CodeUnsupported:  codes.Unimplemented,
	protocol.CodeInternal:     codes.Internal,
}

var grpcToCode = map[codes.Code]protocol.Code{
	codes.Unavailable:        protocol.CodeUnavailable,
	codes.ResourceExhausted:  protocol.CodeRateLimited,
	codes.InvalidArgument:    protocol.CodeBadRequest,
	codes.FailedPrecondition: protocol.CodeBadRequest,
	codes.OutOfRange:         protocol.CodeBadRequest,
	codes.Unauthenticated:    protocol.CodeUnauthorized,
	codes.PermissionDenied:   protocol.CodeUnauthorized,
	codes.NotFound:           protocol.CodeNotFound,
	codes.Unimplemented:      protocol.CodeUnsupported,
	codes.Aborted:            protocol.CodeUnavailable,
}

// ErrToStatus turns an implementation's error into the gRPC status the plugin
// returns. Typed errors keep their code and retry-after; context errors become
// Canceled / DeadlineExceeded; anything else is Internal.
func ErrToStatus(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := status.FromError(err); ok && !isTyped(err) {
		return err
	}
	switch {
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	var e *protocol.Error
	if !errors.As(err, &e) {
		e = &protocol.Error{Code: protocol.CodeInternal, Message: err.Error()}
	}
	c, ok := codeToGRPC[e.Code]
	if !ok {
		c = codes.Internal
	}
	msg := e.Message
	if msg == "" && e.Cause != nil {
		msg = e.Cause.Error()
	}
	st := status.New(c, msg)
	if withDetail, derr := st.WithDetails(&pluginv1.ErrorDetail{
		Code:         string(e.Code),
		RetryAfterMs: e.RetryAfter.Milliseconds(),
	}); derr == nil {
		st = withDetail
	}
	return st.Err()
}

func isTyped(err error) bool {
	var e *protocol.Error
	return errors.As(err, &e)
}

// StatusToErr turns the error of a gRPC call into what the host sees: the caller's
// own context error when ctx ended, otherwise a *protocol.Error. A broken connection
// (the plugin died) is CodeUnavailable.
func StatusToErr(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	st, ok := status.FromError(err)
	if !ok {
		return &protocol.Error{Code: protocol.CodeUnavailable, Message: err.Error(), Cause: err}
	}
	switch st.Code() {
	case codes.Canceled:
		return context.Canceled
	case codes.DeadlineExceeded:
		return context.DeadlineExceeded
	}
	for _, d := range st.Details() {
		if detail, ok := d.(*pluginv1.ErrorDetail); ok && detail.GetCode() != "" {
			return &protocol.Error{
				Code:       protocol.Code(detail.GetCode()),
				Message:    st.Message(),
				RetryAfter: time.Duration(detail.GetRetryAfterMs()) * time.Millisecond,
			}
		}
	}
	code, ok := grpcToCode[st.Code()]
	if !ok {
		code = protocol.CodeInternal
	}
	return &protocol.Error{Code: code, Message: st.Message(), Cause: err}
}

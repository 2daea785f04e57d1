package pluginhost

import (
	"context"
	"errors"
	"time"

	"github.com/lectern-research/lectern/sdk/protocol"
)

// callOpts say how a guarded call is bounded.
type callOpts struct {
	// stream calls (Updates) have no timeout and take no concurrency slot.
	stream bool
}

// invoke runs fn against the plugin's current process with the plugin's timeout and
// concurrency limit. When the plugin is not running, or its process dies during the
// call, it returns a protocol.ErrUnavailable error at once; when the timeout passes,
// a protocol.ErrUnavailable error wrapping context.DeadlineExceeded. The caller's own
// cancellation comes back as ctx.Err().
func invoke[P, T any](ctx context.Context, m *managed, o callOpts, fn func(ctx context.Context, p P) (T, error)) (T, error) {
	var zero T
	gen := m.current()
	if gen == nil {
		m.mu.Lock()
		state := m.state
		m.mu.Unlock()
		return zero, protocol.Unavailable(nil, "plugin %s is %s", m.entry.Name, state)
	}
	p, ok := gen.conn.Plugin.(P)
	if !ok {
		return zero, &protocol.Error{Code: protocol.CodeInternal, Message: "plugin " + m.entry.Name + " is not of the expected kind"}
	}
	if !o.stream {
		select {
		case m.sem <- struct{}{}:
			defer func() { <-m.sem }()
		case <-ctx.Done():
			return zero, ctx.Err()
		case <-gen.done:
			return zero, protocol.Unavailable(nil, "plugin %s exited", m.entry.Name)
		}
	}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	timeout := m.entry.CallTimeout
	if !o.stream {
		var tcancel context.CancelFunc
		callCtx, tcancel = context.WithTimeout(callCtx, timeout)
		defer tcancel()
	}
	// A call in flight when the process dies ends at once.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		select {
		case <-gen.done:
			cancel()
		case <-stop:
		}
	}()
	out, err := fn(callCtx, p)
	if err == nil {
		return out, nil
	}
	if ctxErr := ended(ctx); ctxErr != nil {
		return zero, ctxErr
	}
	select {
	case <-gen.done:
		return zero, protocol.Unavailable(err, "plugin %s exited during the call", m.entry.Name)
	default:
	}
	if errors.Is(ended(callCtx), context.DeadlineExceeded) {
		return zero, &protocol.Error{
			Code:    protocol.CodeUnavailable,
			Message: "plugin " + m.entry.Name + " did not answer within " + timeout.Round(time.Millisecond).String(),
			Cause:   context.DeadlineExceeded,
		}
	}
	if protocol.CodeOf(err) == protocol.CodeUnavailable && gen.conn.Exited() {
		return zero, protocol.Unavailable(err, "plugin %s exited during the call", m.entry.Name)
	}
	return zero, err
}

// ended is ctx.Err(), or context.DeadlineExceeded once ctx's deadline has passed.
// A context learns of its deadline from a timer, which a loaded machine may run
// after the plugin's own deadline answer has already come back.
func ended(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

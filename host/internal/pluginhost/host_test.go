package pluginhost

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/sdk/launch"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
)

func TestKillNineRestartsAndFailsTheCallInFlight(t *testing.T) {
	t.Parallel()
	e := exampleEntry(buildExample(t))
	e.Settings = map[string]any{"delay": "10s"} // every call is in flight for a while
	b := setup(t, e)
	waitState(t, b.host, "example", StateRunning)
	src, err := b.host.Source("example")
	require.NoError(t, err)

	m := b.host.plugins["example"]
	type result struct {
		err     error
		elapsed time.Duration
	}
	done := make(chan result, 1)
	go func() {
		began := time.Now()
		_, err := src.Search(context.Background(), &source.SearchRequest{Query: "graph"})
		done <- result{err, time.Since(began)}
	}()
	// The call holds a concurrency slot once it is in flight.
	require.Eventually(t, func() bool { return len(m.sem) == 1 }, 10*time.Second, 5*time.Millisecond)
	oldPID := pid(t, b.host, "example")
	require.NoError(t, syscall.Kill(oldPID, syscall.SIGKILL))

	var res result
	select {
	case res = <-done:
	case <-time.After(e.CallTimeout + 5*time.Second):
		t.Fatal("the call in flight hung after kill -9")
	}
	require.ErrorIs(t, res.err, protocol.ErrUnavailable)
	require.NotErrorIs(t, res.err, context.DeadlineExceeded, "the call must fail because the plugin died, not by its timeout")
	require.Less(t, res.elapsed, e.CallTimeout)

	var st Status
	require.Eventually(t, func() bool {
		st, err = b.host.StatusOf("example")
		require.NoError(t, err)
		return st.Restarts == 1 && st.State == StateRunning
	}, 30*time.Second, 10*time.Millisecond, "the plugin is restarted")
	require.Contains(t, st.LastError, "exited unexpectedly")
	require.NotNil(t, st.LastErrorAt)
	require.NotEqual(t, oldPID, pid(t, b.host, "example"))
	require.NotNil(t, b.logs.find(t, "example", "plugin crashed; restarting"), "the host logs the crash")

	// Later calls succeed (with the delay lifted at run time).
	require.NoError(t, b.host.ApplySettings(t.Context(), "example", map[string]any{"delay": "0s"}))
	page, err := src.Search(t.Context(), &source.SearchRequest{Query: "graph", PageSize: 25})
	require.NoError(t, err)
	require.Len(t, page.Papers, 25)
	require.Len(t, b.host.Sources(), 1)
}

func TestProtocolMismatchIsRefusedNamingBothVersions(t *testing.T) {
	t.Parallel()
	bin := build(t, "host/internal/pluginhost/testdata/badproto")

	_, err := launch.Start(t.Context(), launch.Config{Path: bin, Kind: protocol.KindSource})
	var vm *launch.VersionMismatchError
	require.ErrorAs(t, err, &vm)
	require.Equal(t, 2, vm.Plugin)
	require.Equal(t, 1, vm.Host)
	require.ErrorContains(t, err, "speaks protocol version 2, but this host speaks protocol version 1")

	e := exampleEntry(bin)
	e.Name = "future"
	b := setup(t, e)
	st := waitState(t, b.host, "future", StateFailed)
	require.Contains(t, st.LastError, "protocol version 2")
	require.Contains(t, st.LastError, "protocol version 1")
	require.Zero(t, st.Restarts, "a refused plugin is not restarted")
	require.Empty(t, b.host.Sources())
	rec := b.logs.find(t, "future", "plugin refused")
	require.NotNil(t, rec)
	require.Contains(t, rec["error"], "protocol version 2")
}

func TestCallTimeoutIsATypedError(t *testing.T) {
	t.Parallel()
	e := exampleEntry(buildExample(t))
	e.CallTimeout = 100 * time.Millisecond
	e.Settings = map[string]any{"delay": "5s"}
	b := setup(t, e)
	waitState(t, b.host, "example", StateRunning)
	src, err := b.host.Source("example")
	require.NoError(t, err)

	_, err = src.Search(t.Context(), &source.SearchRequest{Query: "graph"})
	require.ErrorIs(t, err, protocol.ErrUnavailable)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "did not answer within 100ms")

	// The caller's own cancellation is not the plugin's fault.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err = src.Search(ctx, &source.SearchRequest{Query: "graph"})
	require.ErrorIs(t, err, context.Canceled)
	require.NotErrorIs(t, err, protocol.ErrUnavailable)
}

func TestConcurrencyLimitQueuesCalls(t *testing.T) {
	t.Parallel()
	e := exampleEntry(buildExample(t))
	e.MaxConcurrency = 1
	e.Settings = map[string]any{"delay": "3s"}
	b := setup(t, e)
	waitState(t, b.host, "example", StateRunning)
	src, err := b.host.Source("example")
	require.NoError(t, err)
	m := b.host.plugins["example"]

	first := make(chan error, 1)
	go func() {
		_, err := src.Search(context.Background(), &source.SearchRequest{Query: "graph"})
		first <- err
	}()
	require.Eventually(t, func() bool { return len(m.sem) == 1 }, 10*time.Second, 5*time.Millisecond)

	// The only slot is taken: a second call waits for it and gives up with its own
	// deadline, never reaching the plugin.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = src.Search(ctx, &source.SearchRequest{Query: "graph"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, protocol.ErrUnavailable)
	require.NoError(t, <-first)
}

func TestDisableAndEnableAtRunTime(t *testing.T) {
	t.Parallel()
	b := setup(t, exampleEntry(buildExample(t)))
	waitState(t, b.host, "example", StateRunning)
	oldPID := pid(t, b.host, "example")

	require.NoError(t, b.host.SetEnabled("example", false))
	st := waitState(t, b.host, "example", StateDisabled)
	require.False(t, st.Enabled)
	require.Empty(t, b.host.Sources())
	src, err := b.host.Source("example")
	require.NoError(t, err)
	_, err = src.Search(t.Context(), &source.SearchRequest{Query: "graph"})
	require.ErrorIs(t, err, protocol.ErrUnavailable)
	require.Eventually(t, func() bool { return errors.Is(syscall.Kill(oldPID, 0), syscall.ESRCH) }, 10*time.Second, 10*time.Millisecond,
		"a disabled plugin's process ends")

	require.NoError(t, b.host.SetEnabled("example", true))
	waitState(t, b.host, "example", StateRunning)
	_, err = src.Search(t.Context(), &source.SearchRequest{Query: "graph"})
	require.NoError(t, err)
	require.Zero(t, b.host.Status()[0].Restarts, "a requested stop is not a crash")
}

func TestSettingsAtRunTime(t *testing.T) {
	t.Parallel()
	e := exampleEntry(buildExample(t))
	e.Settings = map[string]any{"corpus_size": int64(30)}
	b := setup(t, e)
	waitState(t, b.host, "example", StateRunning)
	src, err := b.host.Source("example")
	require.NoError(t, err)
	count := func() int64 {
		page, err := src.Search(t.Context(), &source.SearchRequest{Query: "part"})
		require.NoError(t, err)
		return page.TotalEstimate
	}
	require.EqualValues(t, 30, count())

	require.NoError(t, b.host.ApplySettings(t.Context(), "example", map[string]any{"corpus_size": float64(60)}))
	require.EqualValues(t, 60, count(), "applied without a restart")
	st, err := b.host.StatusOf("example")
	require.NoError(t, err)
	require.Equal(t, float64(60), st.Settings["corpus_size"])
	require.Zero(t, st.Restarts)

	err = b.host.ApplySettings(t.Context(), "example", map[string]any{"corpus_size": "lots"})
	require.ErrorIs(t, err, protocol.ErrBadRequest)
	require.EqualValues(t, 60, count(), "refused settings change nothing")

	var se *SettingsError
	require.ErrorAs(t, b.host.ApplySettings(t.Context(), "example", map[string]any{"api_key": "x"}), &se)

	// A nil override falls back to plugins.toml.
	require.NoError(t, b.host.ApplySettings(t.Context(), "example", map[string]any{"corpus_size": nil}))
	require.EqualValues(t, 30, count())
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	bin := buildExample(t)
	outOfRange := exampleEntry(bin)
	outOfRange.Name = "too-old"
	r, err := ParseRange(">= 2.0.0")
	require.NoError(t, err)
	outOfRange.Version = r
	wrongKind := exampleEntry(bin)
	wrongKind.Name = "wrong-kind"
	wrongKind.Kind = protocol.KindLLM
	badSettings := exampleEntry(bin)
	badSettings.Name = "bad-settings"
	badSettings.Settings = map[string]any{"colour": "blue"}
	missing := exampleEntry(bin + "-missing")
	missing.Name = "missing"

	b := setup(t, outOfRange, wrongKind, badSettings, missing)
	tests := []struct {
		name, want string
	}{
		{"too-old", `version 0.1.0, outside the accepted range ">= 2.0.0"`},
		{"wrong-kind", `is a "source" plugin, but it is configured as "llm"`},
		{"bad-settings", `unknown setting "colour"`},
		{"missing", "no such file"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := waitState(t, b.host, tc.name, StateFailed)
			require.Contains(t, st.LastError, tc.want)
		})
	}
}

func TestPluginLogsReachTheHostTagged(t *testing.T) {
	t.Parallel()
	b := setup(t, exampleEntry(buildExample(t)))
	waitState(t, b.host, "example", StateRunning)
	// The example logs "configured" through sdklog when the host configures it.
	var rec map[string]any
	require.Eventually(t, func() bool { rec = b.logs.find(t, "example", "configured"); return rec != nil }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, "INFO", rec["level"], "the plugin's level is kept")
	require.Equal(t, "source", rec["kind"])
	require.Equal(t, "0s", rec["delay"])
}

func TestCloseStopsEveryPlugin(t *testing.T) {
	t.Parallel()
	bin := buildExample(t)
	one, two := exampleEntry(bin), exampleEntry(bin)
	two.Name = "example-two"
	b := setup(t, one, two)
	waitState(t, b.host, "example", StateRunning)
	waitState(t, b.host, "example-two", StateRunning)
	pids := []int{pid(t, b.host, "example"), pid(t, b.host, "example-two")}
	b.host.Close()
	for _, p := range pids {
		require.Eventually(t, func() bool { return errors.Is(syscall.Kill(p, 0), syscall.ESRCH) }, 10*time.Second, 10*time.Millisecond)
	}
	for _, st := range b.host.Status() {
		require.Equal(t, StateStopped, st.State)
	}
}

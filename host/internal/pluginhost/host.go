package pluginhost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/lectern-research/lectern/sdk/launch"
	"github.com/lectern-research/lectern/sdk/protocol"
)

// State is where a plugin is in its life.
type State string

// Plugin states.
const (
	// StateDisabled: not started, by plugins.toml or an admin.
	StateDisabled State = "disabled"
	// StateStarting: being started.
	StateStarting State = "starting"
	// StateRunning: started, described, configured and healthy.
	StateRunning State = "running"
	// StateRestarting: crashed or failed to start; waiting out its backoff.
	StateRestarting State = "restarting"
	// StateFailed: refused (another protocol version, kind or version range, settings
	// it rejects, missing binary); not retried until an admin changes it.
	StateFailed State = "failed"
	// StateStopped: the host is shutting down.
	StateStopped State = "stopped"
)

// Options configure a Host.
type Options struct {
	// Logger receives the host's messages about plugins and the plugins' own log
	// lines (tagged plugin=<name>). Default slog.Default().
	Logger *slog.Logger
	// LogLevel is passed to plugins (debug, info, warn, error). Default: unset
	// (plugins log at info).
	LogLevel string
	// Store holds the admin's run-time overrides; Start reads them. Default nil: no
	// overrides.
	Store *Store
	// StartTimeout bounds a plugin's handshake and Describe. Default
	// launch.DefaultStartTimeout.
	StartTimeout time.Duration
	// HealthInterval is how often a running plugin is pinged. Default 5s.
	HealthInterval time.Duration
	// ExitPoll is how often the supervisor checks whether a plugin process ended.
	// Default 100ms.
	ExitPoll time.Duration
	// BackoffMin and BackoffMax bound the exponential restart backoff. Defaults
	// 250ms and 30s.
	BackoffMin, BackoffMax time.Duration
	// StableAfter is how long a plugin must run for its backoff to start over.
	// Default 1m.
	StableAfter time.Duration
}

func (o *Options) defaults() {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.StartTimeout <= 0 {
		o.StartTimeout = launch.DefaultStartTimeout
	}
	if o.HealthInterval <= 0 {
		o.HealthInterval = 5 * time.Second
	}
	if o.ExitPoll <= 0 {
		o.ExitPoll = 100 * time.Millisecond
	}
	if o.BackoffMin <= 0 {
		o.BackoffMin = 250 * time.Millisecond
	}
	if o.BackoffMax <= 0 {
		o.BackoffMax = 30 * time.Second
	}
	if o.StableAfter <= 0 {
		o.StableAfter = time.Minute
	}
}

// Host supervises the configured plugins. Build it with New, call Start once and
// Close on shutdown. Its methods are safe for concurrent use.
type Host struct {
	opts    Options
	log     *slog.Logger
	plugins map[string]*managed
	order   []string

	mu      sync.Mutex
	started bool
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// New returns a Host for entries (from LoadFile). Nothing starts before Start.
func New(entries []Entry, opts Options) *Host {
	opts.defaults()
	h := &Host{opts: opts, log: opts.Logger, plugins: map[string]*managed{}}
	for _, e := range entries {
		m := &managed{
			host:     h,
			entry:    e,
			log:      opts.Logger.With("plugin", e.Name, "kind", string(e.Kind)),
			enabled:  e.Enabled,
			sem:      make(chan struct{}, e.MaxConcurrency),
			wake:     make(chan struct{}, 1),
			started:  make(chan struct{}),
			settings: map[string]any{},
		}
		m.state = StateDisabled
		h.plugins[e.Name] = m
		h.order = append(h.order, e.Name)
	}
	return h
}

// Start applies the stored run-time overrides, starts every enabled plugin and
// returns once each has made its first start attempt (successful or not). Plugins
// that fail are retried or reported in Status; Start itself fails only when the
// overrides cannot be read. ctx bounds only the wait: the plugins live until Close.
func (h *Host) Start(ctx context.Context) error {
	h.mu.Lock()
	if h.started {
		h.mu.Unlock()
		return errors.New("pluginhost: Start called twice")
	}
	h.started = true
	h.mu.Unlock()

	if h.opts.Store != nil {
		overrides, err := h.opts.Store.List(ctx)
		if err != nil {
			return err
		}
		for name, o := range overrides {
			if m, ok := h.plugins[name]; ok {
				m.applyOverride(o)
			}
		}
	}
	life, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h.mu.Lock()
	h.cancel = cancel
	h.mu.Unlock()
	for _, name := range h.order {
		m := h.plugins[name]
		h.wg.Add(1)
		go func() {
			defer h.wg.Done()
			m.run(life)
		}()
	}
	for _, name := range h.order {
		select {
		case <-h.plugins[name].started:
		case <-ctx.Done():
			return nil
		}
	}
	return nil
}

// Close stops every plugin and waits for them to end.
func (h *Host) Close() {
	h.mu.Lock()
	cancel := h.cancel
	h.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	h.wg.Wait()
}

// ErrUnknownPlugin is returned for a name plugins.toml does not list.
var ErrUnknownPlugin = errors.New("pluginhost: unknown plugin")

func (h *Host) get(name string) (*managed, error) {
	m, ok := h.plugins[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownPlugin, name)
	}
	return m, nil
}

// Status is what the host knows about one plugin.
type Status struct {
	// Name, Kind and Path come from plugins.toml.
	Name string        `json:"name"`
	Kind protocol.Kind `json:"kind"`
	Path string        `json:"path"`
	// VersionRange is the accepted version range; "" for any.
	VersionRange string `json:"version_range"`
	// Version is the version the running (or last running) plugin reported.
	Version string `json:"version"`
	// ProtocolVersion is the protocol version it reported.
	ProtocolVersion int `json:"protocol_version"`
	// Capabilities it announced.
	Capabilities []string `json:"capabilities"`
	// Description it gave.
	Description string `json:"description"`
	// State is where the plugin is in its life.
	State State `json:"state"`
	// Enabled is the effective enabled flag (plugins.toml or the admin's override).
	Enabled bool `json:"enabled"`
	// Restarts counts restarts after a crash or failed start since the host started.
	Restarts int `json:"restarts"`
	// LastError is the most recent failure; "" when none.
	LastError string `json:"last_error"`
	// LastErrorAt is when LastError happened.
	LastErrorAt *time.Time `json:"last_error_at"`
	// StartedAt is when the current process started; nil when not running.
	StartedAt *time.Time `json:"started_at"`
	// Settings are the effective non-secret settings.
	Settings map[string]any `json:"settings"`
}

// Status reports every plugin, in plugins.toml order.
func (h *Host) Status() []Status {
	out := make([]Status, 0, len(h.order))
	for _, name := range h.order {
		out = append(out, h.plugins[name].status())
	}
	return out
}

// StatusOf reports one plugin.
func (h *Host) StatusOf(name string) (Status, error) {
	m, err := h.get(name)
	if err != nil {
		return Status{}, err
	}
	return m.status(), nil
}

// SetEnabled starts or stops a plugin at run time. It does not persist the choice
// (AdminAPI does).
func (h *Host) SetEnabled(name string, enabled bool) error {
	m, err := h.get(name)
	if err != nil {
		return err
	}
	m.mu.Lock()
	changed := m.enabled != enabled
	m.enabled = enabled
	m.mu.Unlock()
	if changed {
		m.log.Info("plugin enabled flag changed", "enabled", enabled)
		m.poke()
	}
	return nil
}

// ApplySettings replaces a plugin's run-time setting overrides, which are merged
// over its plugins.toml settings; a key with a nil value is dropped from the
// overrides, so the plugins.toml value (if any) applies again. A running plugin is
// reconfigured at once: if it refuses the settings (protocol.ErrBadRequest) nothing
// changes and the error is returned. A plugin that is not running gets them at its
// next start; a failed one is retried with them.
func (h *Host) ApplySettings(ctx context.Context, name string, overrides map[string]any) error {
	m, err := h.get(name)
	if err != nil {
		return err
	}
	if err := checkSettingNames(overrides); err != nil {
		return err
	}
	overrides = withoutNil(overrides)
	effective := merge(m.entry.Settings, overrides)
	m.cfgMu.Lock()
	defer m.cfgMu.Unlock()
	if gen := m.current(); gen != nil {
		cctx, cancel := context.WithTimeout(ctx, m.entry.CallTimeout)
		_, err := gen.conn.Plugin.Configure(cctx, &protocol.ConfigureRequest{Settings: effective})
		cancel()
		if err != nil {
			return fmt.Errorf("pluginhost: %s refused the settings: %w", name, err)
		}
	}
	m.mu.Lock()
	m.settings = maps.Clone(overrides)
	failed := m.state == StateFailed
	m.mu.Unlock()
	m.log.Info("plugin settings changed", "keys", slices.Sorted(maps.Keys(overrides)))
	if failed {
		m.poke()
	}
	return nil
}

// SettingsError refuses a setting name that looks like a credential.
type SettingsError struct {
	// Key is the refused setting.
	Key string
}

// Error explains why.
func (e *SettingsError) Error() string {
	return fmt.Sprintf("setting %q looks like a credential: secrets reach a plugin per call from the encrypted user configuration, never as plugin settings", e.Key)
}

func checkSettingNames(settings map[string]any) error {
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		if secretKeyRE.MatchString(k) {
			return &SettingsError{Key: k}
		}
	}
	return nil
}

// merge overlays overrides on base.
func merge(base, overrides map[string]any) map[string]any {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]any{}
	}
	maps.Copy(out, overrides)
	return out
}

// withoutNil returns m without its nil values.
func withoutNil(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if v != nil {
			out[k] = v
		}
	}
	return out
}

// refusal marks a start failure that retrying cannot fix.
type refusal struct{ err error }

func (r *refusal) Error() string { return r.err.Error() }
func (r *refusal) Unwrap() error { return r.err }

// VersionRangeError refuses a plugin whose version is outside plugins.toml's range.
type VersionRangeError struct {
	// Name is the plugin; Version is what it reported; Range is the accepted range.
	Name, Version, Range string
}

// Error names the version and the range.
func (e *VersionRangeError) Error() string {
	return fmt.Sprintf("plugin %s is version %s, outside the accepted range %q of plugins.toml", e.Name, e.Version, e.Range)
}

func isRefusal(err error) bool {
	var r *refusal
	var vm *launch.VersionMismatchError
	var km *launch.KindMismatchError
	return errors.As(err, &r) || errors.As(err, &vm) || errors.As(err, &km)
}

// generation is one run of a plugin process. done closes when it ends.
type generation struct {
	conn    *launch.Conn
	started time.Time
	done    chan struct{}
}

// managed is one plugin and its supervisor.
type managed struct {
	host  *Host
	entry Entry
	log   *slog.Logger
	sem   chan struct{}
	wake  chan struct{}

	started     chan struct{} // closed after the first start attempt
	startedOnce sync.Once

	cfgMu sync.Mutex // serialises Configure calls

	mu        sync.Mutex
	enabled   bool
	settings  map[string]any // admin overrides
	state     State
	gen       *generation
	info      *protocol.DescribeResponse
	restarts  int
	lastErr   string
	lastErrAt time.Time
}

func (m *managed) applyOverride(o Override) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if o.Enabled != nil {
		m.enabled = *o.Enabled
	}
	if o.Settings != nil {
		m.settings = maps.Clone(o.Settings)
	}
}

func (m *managed) poke() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

func (m *managed) markStarted() { m.startedOnce.Do(func() { close(m.started) }) }

func (m *managed) current() *generation {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state != StateRunning {
		return nil
	}
	return m.gen
}

func (m *managed) isEnabled() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.enabled
}

func (m *managed) setState(s State) {
	m.mu.Lock()
	m.state = s
	m.mu.Unlock()
}

func (m *managed) fail(err error) {
	m.mu.Lock()
	m.lastErr = err.Error()
	m.lastErrAt = time.Now().UTC()
	m.mu.Unlock()
}

func (m *managed) effectiveSettings() map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return merge(m.entry.Settings, m.settings)
}

func (m *managed) status() Status {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := Status{
		Name:         m.entry.Name,
		Kind:         m.entry.Kind,
		Path:         m.entry.Path,
		VersionRange: m.entry.Version.String(),
		State:        m.state,
		Enabled:      m.enabled,
		Restarts:     m.restarts,
		LastError:    m.lastErr,
		Settings:     merge(m.entry.Settings, m.settings),
		Capabilities: []string{},
	}
	if m.info != nil {
		s.Version, s.ProtocolVersion, s.Description = m.info.Version, m.info.ProtocolVersion, m.info.Description
		s.Capabilities = slices.Clone(m.info.Capabilities)
	}
	if !m.lastErrAt.IsZero() {
		t := m.lastErrAt
		s.LastErrorAt = &t
	}
	if m.state == StateRunning && m.gen != nil {
		t := m.gen.started
		s.StartedAt = &t
	}
	return s
}

// wait sleeps d (forever when d is 0) or until poked; it reports false when ctx
// ended.
func (m *managed) wait(ctx context.Context, d time.Duration) bool {
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-m.wake:
	case <-timer:
	}
	return true
}

type endReason int

const (
	endStopping endReason = iota
	endDisabled
	endExited
	endUnhealthy
)

// run is the supervisor loop of one plugin.
func (m *managed) run(ctx context.Context) {
	opts := &m.host.opts
	backoff := opts.BackoffMin
	defer m.setState(StateStopped)
	defer m.markStarted()
	for ctx.Err() == nil {
		if !m.isEnabled() {
			m.setState(StateDisabled)
			m.markStarted()
			if !m.wait(ctx, 0) {
				return
			}
			backoff = opts.BackoffMin
			continue
		}
		m.setState(StateStarting)
		gen, err := m.start(ctx)
		m.markStarted()
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			m.fail(err)
			if isRefusal(err) {
				// Logged first: whoever sees the failed state finds the reason logged.
				m.log.Error("plugin refused", "error", err)
				m.setState(StateFailed)
				if !m.wait(ctx, 0) {
					return
				}
				backoff = opts.BackoffMin
				continue
			}
			m.mu.Lock()
			m.restarts++
			m.state = StateRestarting
			m.mu.Unlock()
			m.log.Warn("plugin failed to start; retrying", "error", err, "backoff", backoff.String())
			if !m.wait(ctx, backoff) {
				return
			}
			backoff = min(backoff*2, opts.BackoffMax)
			continue
		}
		m.log.Info("plugin started", "version", gen.conn.Info.Version, "protocol_version", gen.conn.Info.ProtocolVersion,
			"capabilities", gen.conn.Info.Capabilities)
		reason, cause := m.watch(ctx, gen)
		m.mu.Lock()
		m.gen = nil
		m.mu.Unlock()
		close(gen.done)
		gen.conn.Kill()
		switch reason {
		case endStopping:
			m.log.Info("plugin stopped")
			return
		case endDisabled:
			m.log.Info("plugin disabled; stopped it")
			continue
		}
		if time.Since(gen.started) >= opts.StableAfter {
			backoff = opts.BackoffMin
		}
		m.fail(cause)
		m.mu.Lock()
		m.restarts++
		m.state = StateRestarting
		m.mu.Unlock()
		m.log.Error("plugin crashed; restarting", "error", cause, "backoff", backoff.String())
		if !m.wait(ctx, backoff) {
			return
		}
		backoff = min(backoff*2, opts.BackoffMax)
	}
}

// start launches the plugin, checks its version range and configures it.
func (m *managed) start(ctx context.Context) (*generation, error) {
	opts := &m.host.opts
	if _, err := os.Stat(m.entry.Path); err != nil {
		return nil, &refusal{fmt.Errorf("plugin binary %s: %w (build it with make build)", m.entry.Path, err)}
	}
	sctx, cancel := context.WithTimeout(ctx, opts.StartTimeout)
	defer cancel()
	stdio := lineWriter(func(line string) {
		m.log.Warn("plugin wrote to its standard output or error outside its logger", "line", line)
	})
	conn, err := launch.Start(sctx, launch.Config{
		Path:         m.entry.Path,
		Kind:         m.entry.Kind,
		StartTimeout: opts.StartTimeout,
		SHA256:       m.entry.SHA256,
		LogLevel:     opts.LogLevel,
		Logger:       newHCLog(m.log),
		SyncStdout:   stdio,
		SyncStderr:   stdio,
	})
	if err != nil {
		var vm *launch.VersionMismatchError
		if errors.As(err, &vm) {
			vm.Path = m.entry.Name + " (" + m.entry.Path + ")"
		}
		return nil, err
	}
	m.mu.Lock()
	m.info = conn.Info
	m.mu.Unlock()
	if !m.entry.Version.Allows(conn.Info.Version) {
		conn.Kill()
		return nil, &refusal{&VersionRangeError{Name: m.entry.Name, Version: conn.Info.Version, Range: m.entry.Version.String()}}
	}
	m.cfgMu.Lock()
	cctx, ccancel := context.WithTimeout(ctx, m.entry.CallTimeout)
	_, err = conn.Plugin.Configure(cctx, &protocol.ConfigureRequest{Settings: m.effectiveSettings()})
	ccancel()
	if err != nil {
		m.cfgMu.Unlock()
		conn.Kill()
		if errors.Is(err, protocol.ErrBadRequest) {
			return nil, &refusal{fmt.Errorf("plugin %s refused its settings: %w", m.entry.Name, err)}
		}
		return nil, fmt.Errorf("configure plugin %s: %w", m.entry.Name, err)
	}
	gen := &generation{conn: conn, started: time.Now().UTC(), done: make(chan struct{})}
	m.mu.Lock()
	m.gen = gen
	m.state = StateRunning
	m.mu.Unlock()
	m.cfgMu.Unlock()
	return gen, nil
}

// watch waits until the plugin must stop or has died.
func (m *managed) watch(ctx context.Context, gen *generation) (endReason, error) {
	opts := &m.host.opts
	exitTick := time.NewTicker(opts.ExitPoll)
	defer exitTick.Stop()
	healthTick := time.NewTicker(opts.HealthInterval)
	defer healthTick.Stop()
	for {
		select {
		case <-ctx.Done():
			return endStopping, nil
		case <-m.wake:
			if !m.isEnabled() {
				return endDisabled, nil
			}
		case <-exitTick.C:
			if gen.conn.Exited() {
				return endExited, errors.New("plugin process exited unexpectedly")
			}
		case <-healthTick.C:
			if err := m.ping(gen); err != nil {
				if gen.conn.Exited() {
					return endExited, errors.New("plugin process exited unexpectedly")
				}
				return endUnhealthy, fmt.Errorf("health check failed: %w", err)
			}
		}
	}
}

// ping checks the plugin's gRPC health within the health interval.
func (m *managed) ping(gen *generation) error {
	res := make(chan error, 1)
	go func() { res <- gen.conn.Ping() }()
	t := time.NewTimer(m.host.opts.HealthInterval)
	defer t.Stop()
	select {
	case err := <-res:
		return err
	case <-t.C:
		return fmt.Errorf("no answer within %s", m.host.opts.HealthInterval)
	}
}

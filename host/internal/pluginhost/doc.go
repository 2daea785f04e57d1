// Package pluginhost runs Lectern's plugins: it reads plugins.toml, starts each
// enabled plugin binary with hashicorp/go-plugin (gRPC, automatic mutual TLS) through
// the SDK's launch package, forwards the plugins' log lines into the host's log
// tagged with the plugin's name, watches their health, restarts a crashed plugin with
// exponential backoff, refuses a plugin of another protocol version (naming both),
// applies a timeout and a concurrency limit to every call, and stops the plugins on
// shutdown.
//
// The rest of the host reaches plugins through the Host: Sources lists the healthy
// paper sources; LLM, RefManager and Messenger return one plugin of those kinds by
// name. Every client it hands out is guarded: a call gets the plugin's timeout, waits
// for a free slot of its concurrency limit, and, when the plugin dies mid-call,
// returns a protocol.ErrUnavailable error at once instead of hanging.
//
// Run-time state an admin changes (enabled flag, settings overrides) is stored in
// the plugin_settings table (migration 0003) and applied without restarting the
// host; AdminAPI serves those operations over HTTP.
//
// hclog, which go-plugin requires, appears only in this package (hclog.go), bridged
// to log/slog.
package pluginhost

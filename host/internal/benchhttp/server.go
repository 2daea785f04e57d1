package benchhttp

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// server is one `lectern serve` process: the production binary, on the bench's own
// data folder, its log in a file.
type server struct {
	cmd     *exec.Cmd
	base    string
	logPath string
	// logStart is the log's size when this process started: its lines come after.
	logStart int64
	exited   chan error
}

// serverConfig says how to start the host.
type serverConfig struct {
	// Binary is bin/lectern.
	Binary string
	// Dir is the bench's cache folder: data/ (LECTERN_DATA_DIR), plugins.toml, serve.log.
	Dir string
	// Env is added to the environment (after the bench's own settings).
	Env []string
}

// startServer starts `lectern serve` on a free loopback port and waits until it
// answers /readyz. The host runs as `make run` runs it, with three differences:
// its own data folder, no plugins (the sources would try the network; the builtin
// model is in the host), and sign-in mail written to its log.
func startServer(ctx context.Context, cfg serverConfig) (*server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	plugins := filepath.Join(cfg.Dir, "plugins.toml")
	if err := os.WriteFile(plugins, []byte("# bench-http: no plugins\n"), 0o644); err != nil {
		return nil, fmt.Errorf("write %s: %w", plugins, err)
	}
	logPath := filepath.Join(cfg.Dir, "serve.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open the server log: %w", err)
	}
	defer logFile.Close()
	st, err := logFile.Stat()
	if err != nil {
		return nil, err
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	cmd := exec.Command(cfg.Binary, "serve", "--addr", addr)
	cmd.Env = append(os.Environ(),
		"LECTERN_DATA_DIR="+filepath.Join(cfg.Dir, "data"),
		"LECTERN_PLUGINS_FILE="+plugins,
		"DEV_SMTP_LOG_ONLY=true",
		"PUBLIC_BASE_URL=http://"+addr,
		// The server would otherwise back up the benchmark's database when it
		// starts (the built-in database's backup loop): a dump of gigabytes
		// during the measurement.
		"LECTERN_BACKUP_WATCH=false",
	)
	cmd.Env = append(cmd.Env, cfg.Env...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s serve: %w", cfg.Binary, err)
	}
	s := &server{cmd: cmd, base: "http://" + addr, logPath: logPath, logStart: st.Size(), exited: make(chan error, 1)}
	go func() { s.exited <- cmd.Wait() }()
	if err := s.waitReady(ctx, 3*time.Minute); err != nil {
		_ = s.stop() // the readiness error says more
		return nil, err
	}
	return s, nil
}

// waitReady polls /readyz until it answers 200.
func (s *server) waitReady(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		select {
		case err := <-s.exited:
			return fmt.Errorf("lectern serve exited while starting (%v); see %s", err, s.logPath)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		resp, err := http.Get(s.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("lectern serve was not ready within %s; see %s", within, s.logPath)
}

// stop asks the server to shut down (SIGTERM) and waits for it, killing it after
// its own shutdown grace has passed. It returns how the process ended.
func (s *server) stop() error {
	if s.cmd.Process == nil {
		return nil
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		return err
	case <-time.After(45 * time.Second):
		_ = s.cmd.Process.Kill()
		return fmt.Errorf("lectern serve did not stop within 45 s and was killed: %w", <-s.exited)
	}
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer ln.Close()
	addr, ok := ln.Addr().(*net.TCPAddr)
	if !ok {
		return 0, fmt.Errorf("find a free port: %v is not TCP", ln.Addr())
	}
	return addr.Port, nil
}

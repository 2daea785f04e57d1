package benchhttp

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lectern-research/lectern/host/internal/pgembed"
	"github.com/lectern-research/lectern/host/internal/store"
)

// seedVersion names the generated data set; a cache seeded by another version is
// seeded again.
const seedVersion = "bench-http v2: 10k papers, 100k passages, 200 users, 1k cards and a Pulse deck each, fixture PDFs"

// options are the command's flags.
type options struct {
	binary      string
	dir         string
	fixtures    string
	connections []int
	duration    time.Duration
	warmup      time.Duration
	reseed      bool
	// only, when set, drives these routes of the mix alone, comma-separated (to
	// read their own capacity).
	only string
	// mix is "reads" (the closed loop of the mixed read set) or "load" (virtual
	// users with writes, issue 23).
	mix string
	// users are the load test's levels: virtual users, each with a session.
	users              []int
	thinkMin, thinkMax time.Duration
}

// Main runs the benchmark (lectern-bench-http [flags]) and returns the exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		return 2
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if err := run(ctx, o, stdout, log); err != nil {
		fmt.Fprintf(stderr, "bench-http: %v\n", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("lectern-bench-http", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fixtures := os.Getenv("LECTERN_FIXTURES")
	if fixtures == "" {
		fixtures = filepath.Join("..", "shared", "fixtures")
	}
	o := options{}
	fs.StringVar(&o.binary, "lectern", "bin/lectern", "the host binary to serve with")
	fs.StringVar(&o.dir, "dir", filepath.Join(".lectern", "bench-http"), "cache folder: the seeded database and the server's log")
	fs.StringVar(&o.fixtures, "fixtures", filepath.Join(fixtures, "pdfs"), "folder of the PDFs to upload (default: $LECTERN_FIXTURES/pdfs)")
	conns := fs.String("connections", "50,200", "load levels: connections, comma-separated")
	fs.DurationVar(&o.duration, "duration", 30*time.Second, "how long each level runs")
	fs.DurationVar(&o.warmup, "warmup", 10*time.Second, "load before the first level, not counted")
	fs.BoolVar(&o.reseed, "reseed", false, "throw the cached database away and seed again")
	fs.StringVar(&o.only, "only", "", "drive only these routes of the mix (names as printed, comma-separated), or its floors (\"signed-in floor\", \"no-auth floor\"), to read their own capacity")
	fs.StringVar(&o.mix, "mix", "reads", "reads: the mixed read set as a closed loop at each --connections; load: virtual users with writes at each --users")
	users := fs.String("users", "200", "--mix load: levels, in virtual users (each signed in as a seeded user), comma-separated")
	fs.DurationVar(&o.thinkMin, "think-min", time.Second, "--mix load: shortest think time between a user's actions")
	fs.DurationVar(&o.thinkMax, "think-max", 5*time.Second, "--mix load: longest think time (drawn uniformly between the two)")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.mix != "reads" && o.mix != "load" {
		fmt.Fprintf(stderr, "lectern-bench-http: --mix: %q is neither reads nor load\n", o.mix)
		return o, errors.New("bad --mix")
	}
	if o.thinkMin <= 0 || o.thinkMax < o.thinkMin {
		fmt.Fprintln(stderr, "lectern-bench-http: --think-min must be positive and at most --think-max")
		return o, errors.New("bad think time")
	}
	for _, s := range strings.Split(*users, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 10_000 {
			fmt.Fprintf(stderr, "lectern-bench-http: --users: %q is not a number from 1 to 10000\n", s)
			return o, errors.New("bad --users")
		}
		o.users = append(o.users, n)
	}
	for _, s := range strings.Split(*conns, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 10_000 {
			fmt.Fprintf(stderr, "lectern-bench-http: --connections: %q is not a number from 1 to 10000\n", s)
			return o, errors.New("bad --connections")
		}
		o.connections = append(o.connections, n)
	}
	return o, nil
}

// run seeds the cache when it must, serves, signs the users in, warms up and
// drives each level, printing its table.
func run(ctx context.Context, o options, stdout io.Writer, log *slog.Logger) error {
	marker := filepath.Join(o.dir, "seeded")
	seeded := !o.reseed && readMarker(marker) == seedVersion
	if !seeded {
		if err := os.RemoveAll(o.dir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(filepath.Join(o.dir, "data"), 0o755); err != nil {
		return err
	}
	// The bench starts the cluster, so it can seed while the host runs on it (the
	// host adopts it) and stops it at the end.
	cluster, err := pgembed.Start(ctx, pgembed.Options{Dir: filepath.Join(o.dir, "data", "pg"), Durable: true, Install: true, Logger: log})
	if err != nil {
		return err
	}
	defer func() {
		if err := cluster.Release(context.WithoutCancel(ctx)); err != nil {
			log.Error("stop the bench's PostgreSQL", "error", err)
		}
	}()
	cfg := serverConfig{Binary: o.binary, Dir: o.dir}
	srv, err := startServer(ctx, cfg)
	if err != nil {
		return err
	}
	stop := func() {
		if err := srv.stop(); err != nil {
			log.Warn("lectern serve ended with an error", "error", err, "log", srv.logPath)
		}
	}
	defer func() { stop() }()
	if !seeded {
		if err := seedCache(ctx, o, cluster, srv, log); err != nil {
			return err
		}
		if err := os.WriteFile(marker, []byte(seedVersion), 0o644); err != nil {
			return err
		}
		// Measure a host that starts on the seeded data, as after a restart.
		stop()
		if srv, err = startServer(ctx, cfg); err != nil {
			return err
		}
	}
	if o.mix == "load" {
		return runLoad(ctx, o, cluster, srv, stdout, log)
	}
	cookies, err := srv.signIn(ctx, Users)
	if err != nil {
		return err
	}
	routes, err := selectRoutes(o.only)
	if err != nil {
		return err
	}
	c, m := newCorpus(), newMix(routes)
	printHeader(stdout, o, routes)
	if err := srv.waitWarm(ctx, 10*time.Minute); err != nil {
		return err
	}
	// The first passage search loads the vector store's partition; each user's
	// first, one at a time, before any load (when the load searches).
	if slices.ContainsFunc(routes, func(r route) bool { return r.Name == "passage search" }) {
		if err := srv.firstSearches(ctx, c, cookies); err != nil {
			return err
		}
	}
	if o.warmup > 0 {
		lv := m.attack(srv.base, c, cookies, 10, o.warmup)
		fmt.Fprintf(stdout, "warm-up: %d requests at 10 connections, %d non-2xx\n", lv.Overall.Requests, sum(lv.Non2xx))
	}
	for _, n := range o.connections {
		fmt.Fprintf(stdout, "\nload average before: %s", loadAverage())
		m.attack(srv.base, c, cookies, n, o.duration).print(stdout, m.routes)
		fmt.Fprintf(stdout, "load average after: %s", loadAverage())
	}
	return nil
}

// seedCache fills a fresh cache: the generated corpus straight into PostgreSQL,
// then the fixture PDFs through the host's upload (which needs the users signed in).
func seedCache(ctx context.Context, o options, cluster *pgembed.Cluster, srv *server, log *slog.Logger) error {
	log.Info("seeding the bench database (once; later runs reuse it)", "dir", o.dir)
	pool, err := store.Open(ctx, cluster.ConnString("lectern"))
	if err != nil {
		return err
	}
	err = Seed(ctx, pool, log)
	pool.Close()
	if err != nil {
		return err
	}
	cookies, err := srv.signIn(ctx, Users)
	if err != nil {
		return err
	}
	n, err := srv.uploadFixtures(ctx, o.fixtures, cookies, log)
	if err != nil {
		return err
	}
	log.Info("fixture PDFs read", "pdfs", n, "from", o.fixtures)
	return nil
}

// selectRoutes is the mixed read set, or only the routes named (comma-separated,
// of the mix or of floorRoutes), with their weights.
func selectRoutes(only string) ([]route, error) {
	if only == "" {
		return mixedReads, nil
	}
	known := slices.Concat(mixedReads, floorRoutes)
	var out []route
	for _, name := range strings.Split(only, ",") {
		name = strings.TrimSpace(name)
		i := slices.IndexFunc(known, func(r route) bool { return r.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("--only %q names no route of the mix or its floors", name)
		}
		out = append(out, known[i])
	}
	return out, nil
}

func readMarker(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return string(b)
}

// printHeader says what is measured on what.
func printHeader(w io.Writer, o options, routes []route) {
	version := "unknown"
	if out, err := exec.Command(o.binary, "version").Output(); err == nil {
		version = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	}
	fmt.Fprintf(w, "bench-http: %s\nhost: %s; %d CPUs (GOMAXPROCS %d); the load generator runs on the same machine\n",
		seedVersion, version, runtime.NumCPU(), runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "mixed read set (route weight):")
	for _, r := range routes {
		fmt.Fprintf(w, " %s %d;", r.Name, r.Weight)
	}
	fmt.Fprintln(w)
}

// loadAverage is /proc/loadavg's first three fields.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown\n"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown\n"
	}
	return strings.Join(f[:3], " ") + "\n"
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

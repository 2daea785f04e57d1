package opstest

import (
	"bufio"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"

	"github.com/lectern-research/lectern/host/internal/config"
)

// The services the stack must run (issue 22 item 6).
var stackServices = []string{"api", "worker", "dashboard", "bot", "backup", "postgres", "qdrant", "llm-gateway", "local-model"}

// appServices are Lectern's own containers: the backup volume is read-only to them.
var appServices = []string{"api", "worker", "dashboard", "bot"}

const defaultSubnet = "10.137.241.0/24"

func deployDir(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "deploy"))
	require.NoError(t, err)
	return dir
}

// TestDeployStack loads deploy/compose.yaml as compose would (interpolated with
// deploy/versions.env) and checks every invariant of the stack.
func TestDeployStack(t *testing.T) {
	t.Parallel()
	dir := deployDir(t)
	compose, versions := readFile(t, filepath.Join(dir, "compose.yaml")), readFile(t, filepath.Join(dir, "versions.env"))
	stack, err := loadStack(compose, versions, nil)
	require.NoError(t, err)
	require.Empty(t, checkStack(stack, map[string]string{"versions.env": versions}))

	// The pins and the subnet come from versions.env.
	env := parseEnvFile(versions)
	require.Equal(t, env["LOCAL_MODEL_IMAGE"], stack.service("local-model")["image"])
	require.Equal(t, defaultSubnet, env["SERVICE_NET_SUBNET"])
	require.Equal(t, defaultSubnet, stack.subnet())
	require.Equal(t, "127.0.0.0/8,::1/128,"+defaultSubnet, stack.env("api")["OWNER_OVERRIDE_ALLOWED_CIDRS"])
	require.Equal(t, []any{"3001:3000"}, stack.service("dashboard")["ports"])

	// Every Lectern container's environment passes the host's own production
	// checks, with its _FILE secrets standing in as files.
	for _, name := range []string{"api", "worker", "dashboard", "bot", "backup"} {
		vars := stack.env(name)
		require.Equal(t, "production", vars["ENVIRONMENT"], name)
		for k, v := range vars {
			if !strings.HasSuffix(k, "_FILE") {
				continue
			}
			value := randHex(t) + randHex(t) + randHex(t) + randHex(t) + randHex(t)
			if k == "DATABASE_URL_FILE" {
				value = "postgres://lectern:" + value + "@postgres:5432/lectern?sslmode=disable"
			}
			path := filepath.Join(t.TempDir(), filepath.Base(v))
			require.NoError(t, os.WriteFile(path, []byte(value), 0o600))
			vars[k] = path
		}
		_, err := config.Load(func(k string) (string, bool) { v, ok := vars[k]; return v, ok })
		require.NoError(t, err, "%s would refuse to start", name)
	}
}

// TestDeployStackFollowsSubnet: SERVICE_NET_SUBNET moves the network and the owner
// override's allowlist together.
func TestDeployStackFollowsSubnet(t *testing.T) {
	t.Parallel()
	dir := deployDir(t)
	versions := strings.ReplaceAll(readFile(t, filepath.Join(dir, "versions.env")), "SERVICE_NET_SUBNET="+defaultSubnet, "")
	stack, err := loadStack(readFile(t, filepath.Join(dir, "compose.yaml")), versions, map[string]string{"SERVICE_NET_SUBNET": "10.9.8.0/24"})
	require.NoError(t, err)
	require.Equal(t, "10.9.8.0/24", stack.subnet())
	for _, svc := range []string{"api", "worker", "bot", "backup"} {
		require.Equal(t, "127.0.0.0/8,::1/128,10.9.8.0/24", stack.env(svc)["OWNER_OVERRIDE_ALLOWED_CIDRS"], svc)
	}
	require.Empty(t, checkStack(stack, nil))

	// Without versions.env the images do not resolve: compose stops with the reason.
	_, err = loadStack(readFile(t, filepath.Join(dir, "compose.yaml")), "", nil)
	require.ErrorContains(t, err, "docker compose --env-file deploy/versions.env")
}

// TestDeployStackRefusesPlantedSecrets: the check is not vacuous; each planted
// breach of an invariant is found.
func TestDeployStackRefusesPlantedSecrets(t *testing.T) {
	t.Parallel()
	dir := deployDir(t)
	compose, versions := readFile(t, filepath.Join(dir, "compose.yaml")), readFile(t, filepath.Join(dir, "versions.env"))
	apiEnv := "      DASHBOARD_ENABLED: \"false\"\n"
	require.Contains(t, compose, apiEnv)
	for _, tc := range []struct {
		name              string
		compose, versions string
		want              string
	}{
		{"a secret option in an environment block",
			strings.Replace(compose, apiEnv, apiEnv+"      SERVICE_API_KEY: 4f9c2a7e1b8d3f6a0c5e9b2d7f1a4c8e3b6d0f9a\n", 1), versions, "SERVICE_API_KEY"},
		{"an empty secret option is still a secret in the environment",
			strings.Replace(compose, apiEnv, apiEnv+"      SMTP_PASS: \"\"\n", 1), versions, "SMTP_PASS"},
		{"a password in a URL",
			strings.Replace(compose, apiEnv, apiEnv+"      LECTERN_EXTRA: postgres://lectern:hunter2@postgres/lectern\n", 1), versions, "password"},
		{"a random token under an innocent name",
			strings.Replace(compose, apiEnv, apiEnv+"      LECTERN_EXTRA: Zk3u9QfL2m7XcV1bN8pR4tY6wE0aS5dG\n", 1), versions, "token"},
		{"a secret in an env file", compose, versions + "GATEWAY_SALT_KEY=0123456789abcdef0123456789abcdef\n", "GATEWAY_SALT_KEY"},
		{"an age identity in an env file", compose, versions + "OPERATOR=AGE-SECRET-KEY-1QQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQQ\n", "age identity"},
		{"a _FILE outside /run/secrets",
			strings.Replace(compose, "SERVICE_API_KEY_FILE: /run/secrets/service_api_key", "SERVICE_API_KEY_FILE: /etc/lectern/key", 1), versions, "/run/secrets"},
		{"a _FILE whose secret the service lacks",
			strings.Replace(compose, "INFRA_INGEST_KEY_FILE: /run/secrets/infra_ingest_key", "INFRA_INGEST_KEY_FILE: /run/secrets/smtp_pass", 1), versions, "smtp_pass"},
		{"the backup volume writable by the app",
			strings.Replace(compose, "- backups:/backups:ro", "- backups:/backups", 1), versions, "read-only"},
		{"the local model on every interface",
			strings.Replace(compose, `"127.0.0.1:11434:11434"`, `"11434:11434"`, 1), versions, "127.0.0.1"},
		{"a second network",
			strings.Replace(compose, "networks:\n  lectern:\n", "networks:\n  other: {}\n  lectern:\n", 1), versions, "one network"},
		{"a trusted proxy other than the dashboard",
			strings.Replace(compose, "TRUSTED_PROXY_HOSTS: dashboard", "TRUSTED_PROXY_HOSTS: \"*\"", 1), versions, "TRUSTED_PROXY_HOSTS"},
		{"a secret file outside deploy/secrets",
			strings.Replace(compose, "{ file: ./secrets/gateway_salt_key }", "{ file: /root/salt }", 1), versions, "./secrets/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stack, err := loadStack(tc.compose, tc.versions, nil)
			require.NoError(t, err)
			problems := checkStack(stack, map[string]string{"versions.env": tc.versions})
			require.NotEmpty(t, problems)
			require.Contains(t, strings.Join(problems, "\n"), tc.want)
		})
	}
}

// TestInitSecrets: deploy/init-secrets makes every secret the stack declares, mode
// 600 in a mode-700 folder, keeps them on a second run, and derives database_url.
func TestInitSecrets(t *testing.T) {
	t.Parallel()
	requireTools(t, "age-keygen", "od")
	dir := deployDir(t)
	stack, err := loadStack(readFile(t, filepath.Join(dir, "compose.yaml")), readFile(t, filepath.Join(dir, "versions.env")), nil)
	require.NoError(t, err)
	out := filepath.Join(t.TempDir(), "secrets")
	cmd := exec.Command(filepath.Join(dir, "init-secrets"), out)
	cmd.Env = append(os.Environ(), fmt.Sprintf("SECRETS_UID=%d", os.Getuid()))
	stdout, err := cmd.Output()
	require.NoError(t, err)
	require.Regexp(t, `^age1[0-9a-z]+\n$`, string(stdout), "only the public recipient is printed")

	fi, err := os.Stat(out)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
	first := map[string]string{}
	for name := range stack.mapAt("secrets") {
		path := filepath.Join(out, name)
		fi, err := os.Stat(path)
		require.NoError(t, err, "init-secrets does not make %s", name)
		require.Equal(t, os.FileMode(0o600), fi.Mode().Perm(), name)
		first[name] = readFile(t, path)
		require.NotEmpty(t, first[name], name)
		require.NotContains(t, string(stdout), first[name], "%s was printed", name)
	}
	u, err := url.Parse(first["database_url"])
	require.NoError(t, err)
	pw, _ := u.User.Password()
	require.Equal(t, first["database_password"], pw)

	require.NoError(t, exec.Command(filepath.Join(dir, "init-secrets"), out).Run())
	for name, v := range first {
		require.Equal(t, v, readFile(t, filepath.Join(out, name)), "a second run changed %s", name)
	}
	// The folder is never committed.
	require.NoError(t, exec.Command("git", "-C", dir, "check-ignore", "-q", "secrets/service_api_key").Run(), "deploy/secrets is not git-ignored")
}

// stack is an interpolated compose document.
type stack map[string]any

// loadStack interpolates compose as docker compose does, from the env file's values
// and extra (which win), and parses it.
func loadStack(compose, envFile string, extra map[string]string) (stack, error) {
	env := parseEnvFile(envFile)
	for k, v := range extra {
		env[k] = v
	}
	var doc map[string]any
	if err := yaml.Unmarshal([]byte(compose), &doc); err != nil {
		return nil, fmt.Errorf("parse compose.yaml: %w", err)
	}
	resolved, err := interpolateTree(doc, env)
	if err != nil {
		return nil, err
	}
	return stack(resolved.(map[string]any)), nil
}

func (s stack) mapAt(key string) map[string]any {
	m, _ := s[key].(map[string]any)
	return m
}

func (s stack) service(name string) map[string]any {
	m, _ := s.mapAt("services")[name].(map[string]any)
	return m
}

func (s stack) env(name string) map[string]string {
	return envOf(s.service(name))
}

func (s stack) subnet() string {
	for _, n := range s.mapAt("networks") {
		nm, _ := n.(map[string]any)
		ipam, _ := nm["ipam"].(map[string]any)
		cfgs, _ := ipam["config"].([]any)
		for _, c := range cfgs {
			if cm, ok := c.(map[string]any); ok {
				return fmt.Sprint(cm["subnet"])
			}
		}
	}
	return ""
}

// envOf reads a service's environment, in map or list form.
func envOf(svc map[string]any) map[string]string {
	out := map[string]string{}
	switch env := svc["environment"].(type) {
	case map[string]any:
		for k, v := range env {
			if v == nil {
				out[k] = ""
			} else {
				out[k] = fmt.Sprint(v)
			}
		}
	case []any:
		for _, item := range env {
			k, v, _ := strings.Cut(fmt.Sprint(item), "=")
			out[k] = v
		}
	}
	return out
}

// secretsOf is where a service's secrets are mounted: target path -> secret name.
func secretsOf(svc map[string]any) map[string]string {
	out := map[string]string{}
	list, _ := svc["secrets"].([]any)
	for _, item := range list {
		switch v := item.(type) {
		case string:
			out["/run/secrets/"+v] = v
		case map[string]any:
			src := fmt.Sprint(v["source"])
			target := "/run/secrets/" + src
			if tg, ok := v["target"].(string); ok && tg != "" {
				target = tg
				if !strings.HasPrefix(tg, "/") {
					target = "/run/secrets/" + tg
				}
			}
			out[target] = src
		}
	}
	return out
}

var (
	secretNameRe  = regexp.MustCompile(`(?i)(PASSWORD|PASS|SECRET|TOKEN|_KEY|SALT)$`)
	urlPasswordRe = regexp.MustCompile(`://[^/\s:@]+:([^@\s]+)@`)
	tokenRe       = regexp.MustCompile(`^[A-Za-z0-9+/=_-]{24,}$`)
)

// secretOptionNames are the host's secret options (config.Options, Secret).
func secretOptionNames() map[string]bool {
	out := map[string]bool{}
	for _, o := range config.Options() {
		if o.Secret {
			out[o.Name] = true
		}
	}
	return out
}

// secretValueProblem says why a value looks like a secret, or "".
func secretValueProblem(v string) string {
	switch {
	case strings.Contains(v, "AGE-SECRET-KEY-1"):
		return "holds an age identity"
	case urlPasswordRe.MatchString(v) && !strings.HasPrefix(urlPasswordRe.FindStringSubmatch(v)[1], "$"):
		return "holds a password in a URL"
	case tokenRe.MatchString(v) && !strings.HasPrefix(v, "/") && mixed(v):
		return "holds what looks like a key or token"
	}
	return ""
}

// mixed reports whether s mixes digits with letters, as random tokens do and words
// do not.
func mixed(s string) bool {
	return strings.ContainsAny(s, "0123456789") && strings.ContainsAny(strings.ToLower(s), "abcdefghijklmnopqrstuvwxyz")
}

// varProblem says why NAME=VALUE in an environment block or env file breaks the rule
// "no secret in any env file, compose file or environment block", or "".
func varProblem(name, value string, secretOptions map[string]bool) string {
	if strings.HasSuffix(name, "_FILE") {
		return ""
	}
	if secretOptions[name] || secretNameRe.MatchString(name) {
		return "sets the secret " + name + " directly; deliver it as a compose secret read through " + name + "_FILE"
	}
	if p := secretValueProblem(value); p != "" {
		return name + " " + p
	}
	return ""
}

// checkStack returns every breach of the stack's invariants, in words.
func checkStack(s stack, envFiles map[string]string) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	secretOptions := secretOptionNames()

	for name, content := range envFiles {
		for k, v := range parseEnvFile(content) {
			if p := varProblem(k, v, secretOptions); p != "" {
				add("env file %s: %s", name, p)
			}
		}
	}

	declared := s.mapAt("secrets")
	for name, v := range declared {
		m, _ := v.(map[string]any)
		if f := fmt.Sprint(m["file"]); !strings.HasPrefix(f, "./secrets/") || filepath.Base(f) != name {
			add("secret %s: its file must be ./secrets/%s (made by deploy/init-secrets), not %s", name, name, f)
		}
	}

	networks := s.mapAt("networks")
	if len(networks) != 1 || networks["lectern"] == nil {
		add("the stack must have one network, lectern; it has %d", len(networks))
	}
	subnet := s.subnet()
	if subnet == "" {
		add("the lectern network has no subnet (SERVICE_NET_SUBNET)")
	}

	services := s.mapAt("services")
	for _, want := range stackServices {
		if services[want] == nil {
			add("service %s is missing", want)
		}
	}
	names := make([]string, 0, len(services))
	for name := range services {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		svc := s.service(name)
		problems = append(problems, checkService(name, svc, declared, subnet, secretOptions)...)
	}
	return problems
}

// checkService checks one service: its environment, secrets, network, ports and
// volumes.
func checkService(name string, svc map[string]any, declared map[string]any, subnet string, secretOptions map[string]bool) []string {
	var problems []string
	add := func(format string, args ...any) { problems = append(problems, name+": "+fmt.Sprintf(format, args...)) }
	env := envOf(svc)
	mounts := secretsOf(svc)
	for k, v := range env {
		if p := varProblem(k, v, secretOptions); p != "" {
			add("%s", p)
		}
		if strings.HasSuffix(k, "_FILE") && secretNameRe.MatchString(strings.TrimSuffix(k, "_FILE")) || strings.HasSuffix(k, "_FILE") && secretOptions[strings.TrimSuffix(k, "_FILE")] {
			if !strings.HasPrefix(v, "/run/secrets/") {
				add("%s must point into /run/secrets, not %s", k, v)
			} else if mounts[v] == "" {
				add("%s names %s, but the service mounts no secret %s", k, v, strings.TrimPrefix(v, "/run/secrets/"))
			}
		}
	}
	for _, src := range mounts {
		if declared[src] == nil {
			add("uses the secret %s, which the stack does not declare", src)
		}
	}
	for _, field := range []string{"command", "entrypoint"} {
		walkStrings(svc[field], func(v string) {
			if p := secretValueProblem(v); p != "" {
				add("%s %s", field, p)
			}
		})
	}

	nets, _ := svc["networks"].([]any)
	if len(nets) != 1 || nets[0] != "lectern" {
		add("must be on the lectern network only")
	}
	if name == "api" || name == "worker" || name == "bot" || name == "backup" {
		if got, want := env["OWNER_OVERRIDE_ALLOWED_CIDRS"], "127.0.0.0/8,::1/128,"+subnet; got != want {
			add("OWNER_OVERRIDE_ALLOWED_CIDRS is %q, want loopback plus the subnet: %q", got, want)
		}
		if env["TRUSTED_PROXY_HOSTS"] != "dashboard" {
			add("TRUSTED_PROXY_HOSTS must be dashboard, not %q", env["TRUSTED_PROXY_HOSTS"])
		}
	}
	problems = append(problems, checkPorts(name, svc)...)
	problems = append(problems, checkVolumes(name, svc)...)
	return problems
}

func checkPorts(name string, svc map[string]any) []string {
	ports, _ := svc["ports"].([]any)
	var got []string
	for _, p := range ports {
		got = append(got, fmt.Sprint(p))
	}
	switch name {
	case "dashboard":
		if !slices.Equal(got, []string{"3001:3000"}) {
			return []string{fmt.Sprintf("dashboard: must publish host 3001 to container 3000 only, not %v", got)}
		}
	case "local-model":
		for _, p := range got {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				return []string{fmt.Sprintf("local-model: the runtime's port must bind to 127.0.0.1 only, not %s", p)}
			}
		}
	default:
		if len(got) > 0 {
			return []string{fmt.Sprintf("%s: publishes %v; only the dashboard and the local model may publish a port", name, got)}
		}
	}
	return nil
}

func checkVolumes(name string, svc map[string]any) []string {
	vols, _ := svc["volumes"].([]any)
	var problems []string
	for _, v := range vols {
		parts := strings.Split(fmt.Sprint(v), ":")
		if parts[0] == "restore-inbox" && name != "backup" {
			problems = append(problems, name+": only the backup sidecar mounts the restore inbox")
		}
		if parts[0] == "backups" && slices.Contains(appServices, name) && (len(parts) < 3 || parts[2] != "ro") {
			problems = append(problems, name+": the backup volume must be read-only to the application")
		}
	}
	return problems
}

func walkStrings(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case []any:
		for _, e := range x {
			walkStrings(e, fn)
		}
	}
}

// parseEnvFile reads KEY=VALUE lines, skipping blanks and comments.
func parseEnvFile(content string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(content))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if ok {
			out[strings.TrimSpace(k)] = strings.Trim(strings.TrimSpace(v), `"'`)
		}
	}
	return out
}

// interpolateTree applies compose's variable interpolation to every string.
func interpolateTree(v any, env map[string]string) (any, error) {
	switch x := v.(type) {
	case string:
		return interpolate(x, env)
	case []any:
		for i := range x {
			r, err := interpolateTree(x[i], env)
			if err != nil {
				return nil, err
			}
			x[i] = r
		}
	case map[string]any:
		for k := range x {
			r, err := interpolateTree(x[k], env)
			if err != nil {
				return nil, err
			}
			x[k] = r
		}
	}
	return v, nil
}

var varRe = regexp.MustCompile(`\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// interpolate resolves $$, ${VAR}, ${VAR:-default}, ${VAR-default}, ${VAR:?error},
// ${VAR?error} and $VAR as docker compose does.
func interpolate(s string, env map[string]string) (string, error) {
	var firstErr error
	out := varRe.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		sub := varRe.FindStringSubmatch(m)
		name, op, arg := sub[1], sub[2], sub[3]
		if name == "" {
			name = sub[4]
		}
		val, set := env[name]
		switch op {
		case ":-":
			if val == "" {
				return arg
			}
		case "-":
			if !set {
				return arg
			}
		case ":?", "?":
			if (op == ":?" && val == "") || !set {
				if firstErr == nil {
					firstErr = fmt.Errorf("required variable %s is missing: %s", name, arg)
				}
			}
		}
		return val
	})
	return out, firstErr
}

package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/migrations"
)

// hostDir is host/, seen from this package's directory.
const hostDir = "../.."

// exception lets one more package name a table in SQL, for the reason given.
type exception struct {
	Table   string
	Package string // directory under host/, e.g. "internal/learning"
	Reason  string
}

// exceptions are the packages allowed to name a table they do not own.
var exceptions = []exception{
	// chunk_embeddings (owned by vectorstore/embedded) hangs off paper_chunks and has
	// no paper_id column: loading a model's vectors with their papers, inserting a
	// vector only for a passage that still exists, and deleting a paper's vectors
	// each stay one statement joined on paper_chunks (atomic, and as fast as the
	// benchmarks in docs/benchmarks.md). It only reads paper_chunks.
	// The re-embed job's queries (passages without a vector of a model) live with
	// chunk_embeddings for the same reason.
	{"paper_chunks", "internal/vectorstore/embedded", "chunk_embeddings is keyed by paper_chunks' id; read-only joins"},
}

// benchSeedTables are the tables the HTTP benchmark's seeding tool (benchhttp.Seed,
// make bench-http) fills in bulk with generated rows: 100k passages have no
// product path without their PDFs, and row by row through the owners would take
// the rerun from minutes to an hour. It runs only in the bench's own cache
// database, never in the host.
var benchSeedTables = []string{"papers", "paper_chunks", "users", "user_library", "paper_user_state",
	"decks", "cards", "projects", "tasks", "milestones", "project_papers", "pulse_decks", "pulse_cards"}

// benchCheckTables are the tables the load test (make load) reads after its run
// to check that every write it was acknowledged is stored: a check from outside
// the host, on the bench's own cache database.
var benchCheckTables = []string{"review_logs", "recommendation_feedback"}

func init() {
	for _, t := range benchSeedTables {
		exceptions = append(exceptions, exception{t, "internal/benchhttp", "bench-only bulk seeding (make bench-http)"})
	}
	for _, t := range benchCheckTables {
		exceptions = append(exceptions, exception{t, "internal/benchhttp", "the load test's check for lost writes (make load)"})
	}
}

// tableRef finds a table named after a SQL keyword that takes one.
var tableRef = regexp.MustCompile(`(?i)\b(?:FROM|JOIN|INTO|UPDATE|TABLE|COPY)\s+(?:ONLY\s+)?(?:public\.)?([a-z_][a-z0-9_]*)`)

// schemaTables returns the tables the migrations create.
func schemaTables(t *testing.T) []string {
	t.Helper()
	create := regexp.MustCompile(`(?i)CREATE\s+TABLE\s+(?:IF\s+NOT\s+EXISTS\s+)?(?:public\.)?([a-z_][a-z0-9_]*)`)
	var tables []string
	err := fs.WalkDir(migrations.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".sql") {
			return err
		}
		b, err := fs.ReadFile(migrations.FS, path)
		if err != nil {
			return err
		}
		for _, m := range create.FindAllStringSubmatch(string(b), -1) {
			tables = append(tables, strings.ToLower(m[1]))
		}
		return nil
	})
	require.NoError(t, err)
	slices.Sort(tables)
	return slices.Compact(tables)
}

// sqlNames returns, for each package under host/ (its directory relative to host/),
// the tables its non-test Go files name in SQL: after FROM, JOIN, INTO, UPDATE,
// TABLE or COPY in a string literal, or as pgx.Identifier{"table"}.
func sqlNames(t *testing.T, tables []string) map[string]map[string]bool {
	t.Helper()
	known := map[string]bool{}
	for _, tb := range tables {
		known[tb] = true
	}
	out := map[string]map[string]bool{} // table -> packages
	add := func(table, pkg string) {
		table = strings.ToLower(table)
		if !known[table] {
			return
		}
		if out[table] == nil {
			out[table] = map[string]bool{}
		}
		out[table][pkg] = true
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir(hostDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(hostDir, filepath.Dir(path))
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(rel)
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if n.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(n.Value)
				if err != nil {
					return true
				}
				for _, m := range tableRef.FindAllStringSubmatch(s, -1) {
					add(m[1], pkg)
				}
			case *ast.CompositeLit:
				sel, ok := n.Type.(*ast.SelectorExpr)
				if !ok || sel.Sel.Name != "Identifier" || len(n.Elts) == 0 {
					return true
				}
				if lit, ok := n.Elts[len(n.Elts)-1].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if s, err := strconv.Unquote(lit.Value); err == nil {
						add(s, pkg)
					}
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestOneOwnerPerTable fails when a table of the schema is named in SQL by more
// than one package under host/, apart from the listed exceptions, and when an
// exception no longer applies.
func TestOneOwnerPerTable(t *testing.T) {
	t.Parallel()
	tables := schemaTables(t)
	require.Contains(t, tables, "papers", "the migrations were not read")
	names := sqlNames(t, tables)
	require.NotEmpty(t, names["papers"], "no SQL was found under host/")

	allowed := map[[2]string]bool{}
	for _, e := range exceptions {
		require.NotEmpty(t, e.Reason, "exception %s in %s has no reason", e.Table, e.Package)
		allowed[[2]string{e.Table, e.Package}] = true
		if !names[e.Table][e.Package] {
			t.Errorf("stale exception: %s no longer names %s in SQL; remove it from the list", e.Package, e.Table)
		}
	}
	for _, table := range tables {
		var pkgs []string
		for pkg := range names[table] {
			if !allowed[[2]string{table, pkg}] {
				pkgs = append(pkgs, pkg)
			}
		}
		slices.Sort(pkgs)
		if len(pkgs) > 1 {
			t.Errorf("table %s is named in SQL by %d packages (%s): one package owns a table, the others call its functions",
				table, len(pkgs), strings.Join(pkgs, ", "))
		}
	}
}

// handlerFileExceptions are api.go and handlers.go files still allowed to run SQL,
// each with its reason.
var handlerFileExceptions = map[string]string{}

// TestHandlersRunNoSQL fails when an api.go or handlers.go of a host package runs a
// query on a pool or a transaction itself instead of calling its area's store.
func TestHandlersRunNoSQL(t *testing.T) {
	t.Parallel()
	sqlCall := regexp.MustCompile(`pool\.Query|pool\.Exec|tx\.Exec|tx\.Query`)
	var files []string
	for _, name := range []string{"api.go", "handlers.go"} {
		found, err := filepath.Glob(filepath.Join(hostDir, "internal", "*", name))
		require.NoError(t, err)
		files = append(files, found...)
	}
	require.NotEmpty(t, files)
	seen := map[string]bool{}
	for _, path := range files {
		rel, err := filepath.Rel(hostDir, path)
		require.NoError(t, err)
		rel = filepath.ToSlash(rel)
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		calls := sqlCall.FindAllString(string(b), -1)
		if _, ok := handlerFileExceptions[rel]; ok {
			seen[rel] = true
			if len(calls) == 0 {
				t.Errorf("stale exception: %s runs no SQL any more; remove it from the list", rel)
			}
			continue
		}
		if len(calls) > 0 {
			t.Errorf("%s runs SQL itself (%s); call the area's store instead", rel, strings.Join(calls, ", "))
		}
	}
	for rel := range handlerFileExceptions {
		if !seen[rel] {
			t.Errorf("stale exception: %s does not exist", rel)
		}
	}
}

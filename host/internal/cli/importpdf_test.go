package cli

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
	"github.com/lectern-research/lectern/host/internal/fixturetest"
	"github.com/lectern-research/lectern/host/internal/pgembed"
)

func TestImportAFolderOfPDFs(t *testing.T) {
	t.Parallel()
	pdf := fixturetest.Read(t, "pdfs/hindawi_rrp_2010_157939_with_groundtruth.pdf")
	folder := t.TempDir()
	write := func(name string, b []byte) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(folder, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(folder, name), b, 0o644))
	}
	write("a/paper.pdf", pdf)
	write("b/same-paper-again.PDF", pdf)
	write("cut.pdf", pdf[:len(pdf)/4])
	write("fake.pdf", []byte("<html>not a pdf</html>"))
	write("notes.txt", []byte("ignored"))

	_, dbURL := dbtest.NewEmptyDB(t)
	dataDir := t.TempDir()
	env := lookup(map[string]string{"DATABASE_URL": dbURL, "LECTERN_DATA_DIR": dataDir})
	var out, errOut bytes.Buffer
	require.Equal(t, 0, Run(context.Background(), []string{"migrate"}, env, &out, &errOut), errOut.String())
	pool, err := pgxpool.New(context.Background(), dbURL)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	_, err = pool.Exec(context.Background(), `INSERT INTO users (email) VALUES ('ann@example.org')`)
	require.NoError(t, err)

	out.Reset()
	errOut.Reset()
	code := Run(context.Background(), []string{"import", "--user", "ann@example.org", folder}, env, &out, &errOut)
	require.Equal(t, 1, code, "failures make the exit code non-zero")
	require.Contains(t, out.String(), "4 PDF(s): 1 ingested, 1 duplicate(s), 2 failed")
	require.Contains(t, out.String(), "cut.pdf: The PDF is damaged or cut short")
	require.Contains(t, out.String(), "fake.pdf: the file is not a PDF")
	require.Contains(t, errOut.String(), "4/4")

	var papers, chunks int
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM papers), (SELECT count(*) FROM paper_chunks)`).Scan(&papers, &chunks))
	require.Equal(t, 1, papers, "the failed ones left nothing")
	require.Positive(t, chunks)
	stored, err := filepath.Glob(filepath.Join(dataDir, "pdfs", "*"))
	require.NoError(t, err)
	require.Len(t, stored, 1, "only the PDF that was read stays in the data folder: %v", stored)

	out.Reset()
	code = Run(context.Background(), []string{"import", "--user", "ann@example.org", folder}, env, &out, &errOut)
	require.Equal(t, 1, code)
	require.Contains(t, out.String(), "4 PDF(s): 0 ingested, 2 duplicate(s), 2 failed", "a second import adds nothing")
	require.NoError(t, pool.QueryRow(context.Background(), `SELECT count(*) FROM papers`).Scan(&papers))
	require.Equal(t, 1, papers)

	require.Equal(t, 2, Run(context.Background(), []string{"import", folder}, env, &out, &errOut), "--user is required")
}

// TestImportBesideServeLeavesItUp is issue 14's "running `lectern import` next to
// `make run` leaves /readyz at 200": serve runs on the embedded cluster of a data
// folder, import runs on the same folder (adopting the running server) and ends,
// and the server is still up and ready. Serve, which started the cluster, stops it.
func TestImportBesideServeLeavesItUp(t *testing.T) {
	t.Parallel()
	// Not t.TempDir: when the tests run as root, the postgres user must be able to
	// pass through every parent folder.
	dataDir, err := os.MkdirTemp("", "lectern-import-test-")
	require.NoError(t, err)
	require.NoError(t, os.Chmod(dataDir, 0o711))
	t.Cleanup(func() { os.RemoveAll(dataDir) })
	pid := filepath.Join(dataDir, "pg", "data", "postmaster.pid")

	base, _, stop := startServe(t, map[string]string{"LECTERN_DATA_DIR": dataDir})
	ready := func() int {
		t.Helper()
		resp, err := http.Get(base + "/readyz")
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusOK, ready())

	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://"+pgembed.SuperUser+"@/lectern?sslmode=disable&host="+filepath.Join(dataDir, "pg", "run"))
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `INSERT INTO users (email) VALUES ('ann@example.org')`)
	pool.Close()
	require.NoError(t, err)

	var out, errOut bytes.Buffer
	env := lookup(map[string]string{"LECTERN_DATA_DIR": dataDir})
	code := Run(ctx, []string{"import", "--user", "ann@example.org", t.TempDir()}, env, &out, &errOut)
	require.Equal(t, 0, code, "stdout %s\nstderr %s", out.String(), errOut.String())
	require.Contains(t, out.String(), "0 PDF(s): 0 ingested")
	require.Contains(t, errOut.String(), "adopting running PostgreSQL cluster")

	require.FileExists(t, pid, "import left the server it did not start running")
	require.Equal(t, http.StatusOK, ready(), "/readyz after the import")

	require.Equal(t, 0, stop())
	require.NoFileExists(t, pid, "serve stops the cluster it started")
}

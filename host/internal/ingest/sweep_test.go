package ingest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// TestSweepRemovesWhatAStoppedProcessLeft: the sweep at start removes a staged
// upload whose process is gone and a PDF whose paper was never committed, and
// keeps a staged upload another process is still writing, a PDF a paper refers to,
// and a PDF whose paper a transaction is creating right now.
func TestSweepRemovesWhatAStoppedProcessLeft(t *testing.T) {
	t.Parallel()
	b := setup(t)
	ctx := context.Background()
	store := b.api.store
	require.NoError(t, os.MkdirAll(store.dir, 0o700))
	write := func(name string, content []byte) string {
		path := filepath.Join(store.dir, name)
		require.NoError(t, os.WriteFile(path, content, 0o600))
		return path
	}

	// Kept by a paper (no job reads it: this is not a readable PDF).
	kept := []byte("%PDF-1.4\n% kept: Ann's paper refers to it\n%%EOF\n")
	stKept, err := store.Stage(bytes.NewReader(kept), -1)
	require.NoError(t, err)
	require.NoError(t, pgx.BeginFunc(ctx, b.pool, func(tx pgx.Tx) error {
		if err := stKept.KeepTx(ctx, tx); err != nil {
			return err
		}
		_, err := CreateUploadTx(ctx, tx, b.ann, "Kept", "kept.pdf", stKept.Sum, stKept.Size)
		return err
	}))
	stKept.Discard()
	// Left by a killed process: moved to its address, its transaction never committed.
	orphan := write(digest([]byte("orphan"))+".pdf", []byte("%PDF-1.4\n% orphan\n"))
	// Left by a killed process in the middle of writing it.
	dead := write("upload-111.part", []byte("%PDF-1.4\n% cut short"))
	// Being written by another process that holds its staging lock: flock(1) stands
	// in for it, a real process on this machine.
	alive := write("upload-222.part", []byte("%PDF-1.4\n% still coming"))
	holder := exec.Command("flock", "-x", "-n", alive, "sleep", "60")
	require.NoError(t, holder.Start(), "flock(1) is needed to hold a lock from another process")
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	require.Eventually(t, func() bool {
		f, err := os.Open(alive)
		require.NoError(t, err)
		defer f.Close()
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			return true
		}
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}, 10*time.Second, 10*time.Millisecond, "the other process holds its lock")
	// Being kept right now: a transaction holds the digest's lock and creates its paper.
	inflight := []byte("%PDF-1.4\n% in flight\n%%EOF\n")
	st, err := store.Stage(bytes.NewReader(inflight), -1)
	require.NoError(t, err)
	defer st.Discard()
	tx, err := b.pool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck
	require.NoError(t, st.KeepTx(ctx, tx))
	swept := make(chan SweepResult, 1)
	go func() {
		res, err := store.Sweep(ctx, b.pool)
		require.NoError(t, err)
		swept <- res
	}()
	time.Sleep(300 * time.Millisecond) // the sweep waits for the digest's lock
	_, err = CreateUploadTx(ctx, tx, b.ann, "In flight", "inflight.pdf", st.Sum, st.Size)
	require.NoError(t, err)
	require.NoError(t, tx.Commit(ctx))

	var res SweepResult
	select {
	case res = <-swept:
	case <-time.After(30 * time.Second):
		t.Fatal("the sweep did not end")
	}
	require.Equal(t, SweepResult{Staged: 1, Unreferenced: 1}, res)
	for _, gone := range []string{orphan, dead} {
		_, err := os.Stat(gone)
		require.ErrorIs(t, err, os.ErrNotExist, "%s is swept", filepath.Base(gone))
	}
	for _, stays := range []string{alive, store.Path(digest(kept)), store.Path(digest(inflight))} {
		_, err := os.Stat(stays)
		require.NoError(t, err, "%s stays", filepath.Base(stays))
	}

	// A staged upload of this process holds its lock too, under its .part name.
	st2, err := store.Stage(strings.NewReader("%PDF-1.4\n% staged here\n"), -1)
	require.NoError(t, err)
	require.True(t, strings.HasSuffix(st2.tmp, partSuffix))
	res, err = store.Sweep(ctx, b.pool)
	require.NoError(t, err)
	require.Zero(t, res.Staged)
	_, err = os.Stat(st2.tmp)
	require.NoError(t, err, "a staged upload in progress stays")
	st2.Discard()
}

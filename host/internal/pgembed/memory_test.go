package pgembed

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDefaultSharedBuffersMB(t *testing.T) {
	for _, c := range []struct{ mem, want int }{
		{0, 128},          // memory unknown: PostgreSQL's default
		{512, 128},        // a small VPS keeps the default
		{4096, 512},       // an eighth
		{24 * 1024, 1024}, // capped
	} {
		require.Equal(t, c.want, DefaultSharedBuffersMB(c.mem), "memory %d MB", c.mem)
	}
}

func TestMemoryFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		return p
	}
	meminfo := write("meminfo", "MemTotal:       24683656 kB\nMemFree:         1024 kB\n")
	require.Equal(t, 24105, meminfoMB(meminfo))
	require.Zero(t, meminfoMB(write("garbled", "MemTotal: lots\n")))
	require.Zero(t, meminfoMB(filepath.Join(dir, "missing")))

	require.Equal(t, 2048, cgroupLimitMB(write("limited", "2147483648\n")))
	require.Zero(t, cgroupLimitMB(write("unlimited", "max\n")), "no limit")
	require.Zero(t, cgroupLimitMB(filepath.Join(dir, "missing")))
}

// Package fixturetest finds the shared third-party fixtures (recorded API responses,
// real PDFs, review logs) for tests. They live outside the repository, in
// ../shared/fixtures beside the checkout, or wherever LECTERN_FIXTURES says; they are
// never copied in. When the folder is absent the test is skipped with a message
// naming it. This package is for tests only.
package fixturetest

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir returns the fixtures folder, or skips t when it is absent.
func Dir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("LECTERN_FIXTURES")
	if dir == "" {
		_, file, _, _ := runtime.Caller(0)
		// host/internal/fixturetest/fixturetest.go -> repository root -> ../shared/fixtures
		dir = filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared", "fixtures")
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Skipf("fixtures folder %s is absent (set LECTERN_FIXTURES to the shared fixtures folder)", dir)
	}
	return dir
}

// Read returns the content of a fixture file, path relative to the fixtures folder.
func Read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(Dir(t), path))
	if err != nil {
		t.Fatalf("fixture %s: %v", path, err)
	}
	return b
}

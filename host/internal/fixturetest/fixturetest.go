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
	dir := dir()
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Skipf("fixtures folder %s is absent (set LECTERN_FIXTURES to the shared fixtures folder)", dir)
	}
	return dir
}

// Lookup returns the content of a fixture file, path relative to the fixtures
// folder, and false when it cannot be read. It never skips: fuzz targets seed
// from the fixtures when they are there and fuzz on their own seeds when not.
func Lookup(path string) ([]byte, bool) {
	b, err := os.ReadFile(filepath.Join(dir(), path))
	return b, err == nil
}

// Find returns the fixtures folder and whether it is there, without skipping.
func Find() (string, bool) {
	d := dir()
	fi, err := os.Stat(d)
	return d, err == nil && fi.IsDir()
}

// dir is where the fixtures folder is: $LECTERN_FIXTURES, else ../shared/fixtures
// beside the checkout.
func dir() string {
	if d := os.Getenv("LECTERN_FIXTURES"); d != "" {
		return d
	}
	_, file, _, _ := runtime.Caller(0)
	// host/internal/fixturetest/fixturetest.go -> repository root -> ../shared/fixtures
	return filepath.Join(filepath.Dir(file), "..", "..", "..", "..", "shared", "fixtures")
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

package plugintest

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/lectern-research/lectern/sdk/paper"
)

// MaxFuzzInput bounds the inputs the decoders' fuzz targets feed on. The HTTP
// clients of the plugins read at most sourcehttp.DefaultMaxBody (32 MiB) of an
// answer; a fuzz input never comes near that, so the bound only keeps one input
// from taking the engine's whole time slice.
const MaxFuzzInput = 1 << 20

// AddFixtureSeeds adds the content of every file of the shared fixtures folder sub
// whose name ends in one of exts (and that fits in MaxFuzzInput) as a seed of f, and returns how many it added. It
// never skips: without the fixtures folder a fuzz target runs on the seeds of its
// own testdata, so `make fuzz` works in a bare checkout too.
func AddFixtureSeeds(f *testing.F, sub string, exts ...string) int {
	f.Helper()
	dir, ok := fixturesDir(sub)
	if !ok {
		return 0
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.Fatalf("plugintest: read fixtures folder: %v", err)
	}
	n := 0
	for _, e := range entries {
		if e.IsDir() || !slices.ContainsFunc(exts, func(ext string) bool { return strings.HasSuffix(e.Name(), ext) }) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			f.Fatalf("plugintest: read fixture: %v", err)
		}
		if len(b) > MaxFuzzInput {
			continue // the targets pass over such inputs; as a seed it would only slow the engine
		}
		f.Add(b)
		n++
	}
	return n
}

// CheckPapers fails t when papers a decoder made out of an input of inputLen bytes
// break what the host relies on: each passes paper.Validate (with Source set to
// source when the decoder leaves it to the serve helper), every text is valid
// UTF-8, and all the text together is bounded by the input (four times its size
// plus a few hundred bytes per paper for the URLs a decoder builds from an id), so
// no small answer can grow into a large allocation.
func CheckPapers(t testing.TB, source string, inputLen int, papers []paper.Paper) {
	t.Helper()
	total := 0
	for i := range papers {
		p := papers[i]
		if p.Source == "" {
			p.Source = source
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("paper %d of %d is malformed: %v", i+1, len(papers), err)
		}
		n, bad := textBytes(reflect.ValueOf(p))
		if bad != "" {
			t.Fatalf("paper %d of %d holds invalid UTF-8: %q", i+1, len(papers), bad)
		}
		total += n
	}
	if limit := 4*inputLen + 512*len(papers); total > limit {
		t.Fatalf("%d papers hold %d bytes of text from an input of %d bytes (limit %d)", len(papers), total, inputLen, limit)
	}
}

// CheckText fails t when a decoded text s is not valid UTF-8.
func CheckText(t testing.TB, what, s string) {
	t.Helper()
	if !utf8.ValidString(s) {
		t.Fatalf("%s is not valid UTF-8: %q", what, s)
	}
}

// CheckStrings fails t when any string inside v (its exported fields, slices and
// pointers, followed all the way down) is not valid UTF-8: a decoded value the
// plugin hands to the host over gRPC, whose strings must be.
func CheckStrings(t testing.TB, what string, v any) {
	t.Helper()
	if _, bad := textBytes(reflect.ValueOf(v)); bad != "" {
		t.Fatalf("%s holds invalid UTF-8: %q", what, bad)
	}
}

// textBytes sums the lengths of the strings inside v and returns the first one
// that is not valid UTF-8.
func textBytes(v reflect.Value) (n int, bad string) {
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		if !utf8.ValidString(s) {
			return len(s), s
		}
		return len(s), ""
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 0, ""
		}
		return textBytes(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				continue
			}
			m, b := textBytes(v.Field(i))
			n += m
			if b != "" && bad == "" {
				bad = b
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			m, b := textBytes(v.Index(i))
			n += m
			if b != "" && bad == "" {
				bad = b
			}
		}
	}
	return n, bad
}

package httpx

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"
)

// A request whose database went away is a dependency down, said in a sentence,
// not an internal error.
func TestInternalOfALostDatabaseIs503(t *testing.T) {
	t.Parallel()
	lost := Internal(fmt.Errorf("learning: review batch: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}))
	require.Equal(t, http.StatusServiceUnavailable, lost.Status)
	require.Equal(t, "unavailable", lost.Code)
	require.Equal(t, "The database could not be reached, so nothing was changed; try again in a moment.", lost.Detail)

	bug := Internal(errors.New("learning: nil card"))
	require.Equal(t, http.StatusInternalServerError, bug.Status)
	require.Equal(t, "internal_error", bug.Code)
}

type jsonInner struct {
	N int `json:"n,string"`
}

type jsonKey string

func (k jsonKey) MarshalText() ([]byte, error) { return []byte("k:" + string(k)), nil }

type jsonOdd struct{}

func (jsonOdd) MarshalJSON() ([]byte, error) { return []byte(` { "spaced" : [1, 2] } `), nil }

// TestJSONWritesWhatEncodingJSONWrites: responses are encoded by goccy/go-json and
// must be byte for byte what encoding/json writes, on what the API returns: html
// characters, line separators, bad UTF-8, raw messages, times, uuids, text-keyed
// maps, embedded structs, omitempty, the string option and a loose MarshalJSON.
func TestJSONWritesWhatEncodingJSONWrites(t *testing.T) {
	type embedded struct {
		Inner string `json:"inner"`
	}
	type value struct {
		embedded
		*jsonInner
		ID      uuid.UUID             `json:"id"`
		Maybe   *uuid.UUID            `json:"maybe,omitempty"`
		At      time.Time             `json:"at"`
		Text    string                `json:"text"`
		Raw     json.RawMessage       `json:"raw"`
		Keys    map[jsonKey]int       `json:"keys"`
		Floats  []float64             `json:"floats"`
		Empty   []string              `json:"empty"`
		Nil     []string              `json:"nil"`
		Skip    string                `json:"-"`
		Odd     jsonOdd               `json:"odd"`
		Any     map[string]any        `json:"any"`
		Bytes   []byte                `json:"bytes"`
		Zero    int                   `json:"zero,omitempty"`
		Pointer *float64              `json:"pointer"`
		Nested  map[string][]embedded `json:"nested"`
	}
	f := 1e21
	v := value{
		embedded:  embedded{Inner: "in"},
		jsonInner: &jsonInner{N: 7},
		ID:        uuid.MustParse("0b6f4a32-5a4e-4a53-9a8e-0c1c2b3d4e5f"),
		At:        time.Date(2026, 11, 28, 9, 30, 1, 123456789, time.FixedZone("x", 3600)),
		Text:      "<b>&</b> \u2028\u2029 \x00 \t \"q\" é \xff\xfe end",
		Raw:       json.RawMessage(`{"b": 1,  "a": [true, null]}`),
		Keys:      map[jsonKey]int{"b": 2, "a": 1},
		Floats:    []float64{0, -0.5, 1e-7, 123456789, 1e20, 1e21, 3.14159},
		Empty:     []string{},
		Odd:       jsonOdd{},
		Any:       map[string]any{"z": 1.5, "a": []any{"x", nil, true}, "m": map[string]any{}},
		Bytes:     []byte("bytes\x00"),
		Pointer:   &f,
		Nested:    map[string][]embedded{"k": {{Inner: "</script>"}}},
	}
	for _, x := range []any{v, &v, map[string]any{"items": []value{v, {}}, "now": v.At, "next": nil}, "plain", 42, nil} {
		rec := httptest.NewRecorder()
		JSON(rec, http.StatusOK, x) // panics when the two disagree
		require.Equal(t, http.StatusOK, rec.Code)
		require.True(t, json.Valid(rec.Body.Bytes()))
	}
}

// TestTheJSONCheckCatchesADifference: the test-binary check of JSON is not inert.
func TestTheJSONCheckCatchesADifference(t *testing.T) {
	require.Panics(t, func() { sameAsEncodingJSON(map[string]int{"a": 1}, []byte(`{"a":2}`+"\n"), nil) })
	require.Panics(t, func() { sameAsEncodingJSON(map[string]int{"a": 1}, nil, errors.New("refused")) })
	require.Panics(t, func() { sameAsEncodingJSON(math.NaN(), []byte("NaN\n"), nil) })
	require.NotPanics(t, func() { sameAsEncodingJSON(math.NaN(), nil, errors.New("refused")) })
	require.NotPanics(t, func() { sameAsEncodingJSON(map[string]int{"a": 1}, []byte(`{"a":1}`+"\n"), nil) })
}

// TestJSONSendsItsLength: a JSON response carries its length and is not chunked,
// whatever its size, and an empty body is said to be empty.
func TestJSONSendsItsLength(t *testing.T) {
	big := make([]string, 5000)
	for i := range big {
		big[i] = "card"
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/nan" {
			JSON(w, http.StatusOK, math.NaN()) // refused by the encoder
			return
		}
		JSON(w, http.StatusCreated, map[string]any{"items": big})
	}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.Greater(t, len(body), 30_000)
	require.Equal(t, int64(len(body)), resp.ContentLength)
	require.Empty(t, resp.TransferEncoding)

	resp, err = http.Get(srv.URL + "/nan")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Zero(t, resp.ContentLength)
}

// Command pdfcompare measures PDF text extractors on the shared fixture PDFs
// for docs/benchmarks.md ("PDF extraction"): it extracts every PDF with each
// candidate, keeps the best of -reps timings, and with -score compares the text
// with the ground truth (CERMINE's full text of the Hindawi paper, PaperMage's
// parse of arXiv 2304.02623) and checks reading-order probes on the two-column
// papers. It is its own module so that the candidates' dependencies stay out of
// Lectern's go.mod; run it with GOWORK=off (see docs/benchmarks.md).
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/klippa-app/go-pdfium"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	lpdf "github.com/ledongthuc/pdf"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
)

func pdftotext(path string, args ...string) ([]string, error) {
	cmd := exec.Command("pdftotext", append(append([]string{"-enc", "UTF-8"}, args...), path, "-")...)
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return nil, err
	}
	pages := strings.Split(out.String(), "\f")
	if len(pages) > 0 && strings.TrimSpace(pages[len(pages)-1]) == "" {
		pages = pages[:len(pages)-1]
	}
	return pages, nil
}

func ledong(path string) ([]string, error) {
	f, r, err := lpdf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var pages []string
	for i := 1; i <= r.NumPage(); i++ {
		p := r.Page(i)
		if p.V.IsNull() {
			pages = append(pages, "")
			continue
		}
		s, err := p.GetPlainText(nil)
		if err != nil {
			return nil, err
		}
		pages = append(pages, s)
	}
	return pages, nil
}

func pdfiumText(inst pdfium.Pdfium, path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	doc, err := inst.OpenDocument(&requests.OpenDocument{File: &b})
	if err != nil {
		return nil, err
	}
	defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: doc.Document})
	pc, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc.Document})
	if err != nil {
		return nil, err
	}
	var pages []string
	for i := 0; i < pc.PageCount; i++ {
		t, err := inst.GetPageText(&requests.GetPageText{Page: requests.Page{ByIndex: &requests.PageByIndex{Document: doc.Document, Index: i}}})
		if err != nil {
			return nil, err
		}
		pages = append(pages, t.Text)
	}
	return pages, nil
}

type result struct {
	Extractor string   `json:"extractor"`
	File      string   `json:"file"`
	Pages     []string `json:"pages"`
	Seconds   float64  `json:"seconds"`
	Err       string   `json:"err,omitempty"`
}

func main() {
	dir := flag.String("dir", "", "pdf folder")
	out := flag.String("out", "out.json", "output")
	cacheDir := flag.String("cache", "", "wazero compilation cache dir (empty: none)")
	reps := flag.Int("reps", 3, "repetitions for timing")
	scoreOnly := flag.Bool("score", false, "score out.json only")
	flag.Parse()
	if *scoreOnly {
		score(*out, *dir)
		return
	}
	files, _ := filepath.Glob(filepath.Join(*dir, "*.pdf"))
	var results []result

	// pdfium init timing
	t0 := time.Now()
	cfg := webassembly.Config{MinIdle: 1, MaxIdle: 1, MaxTotal: 1}
	if *cacheDir != "" {
		cc, err := wazero.NewCompilationCacheWithDir(*cacheDir)
		if err != nil {
			panic(err)
		}
		cfg.RuntimeConfig = wazero.NewRuntimeConfig().WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).WithCompilationCache(cc)
	}
	pool, err := webassembly.Init(cfg)
	if err != nil {
		panic(err)
	}
	inst, err := pool.GetInstance(30 * time.Second)
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(os.Stderr, "pdfium init (compile+instantiate): %.3fs cache=%q\n", time.Since(t0).Seconds(), *cacheDir)

	type ex struct {
		name string
		f    func(string) ([]string, error)
	}
	exs := []ex{
		{"pdftotext", func(p string) ([]string, error) { return pdftotext(p) }},
		{"pdftotext-bbox-layout", pdftotextBBox},
		{"pdftotext-layout", func(p string) ([]string, error) { return pdftotext(p, "-layout") }},
		{"pdftotext-raw", func(p string) ([]string, error) { return pdftotext(p, "-raw") }},
		{"go-pdfium-wasm", func(p string) ([]string, error) { return pdfiumText(inst, p) }},
		{"ledongthuc-pdf", ledong},
	}
	for _, f := range files {
		for _, e := range exs {
			var pages []string
			var err error
			best := 1e9
			for r := 0; r < *reps; r++ {
				s := time.Now()
				func() {
					defer func() {
						if rec := recover(); rec != nil {
							err = fmt.Errorf("panic: %v", rec)
						}
					}()
					pages, err = e.f(f)
				}()
				if d := time.Since(s).Seconds(); d < best {
					best = d
				}
				if err != nil {
					break
				}
			}
			r := result{Extractor: e.name, File: filepath.Base(f), Pages: pages, Seconds: best}
			if err != nil {
				r.Err = err.Error()
			}
			fmt.Fprintf(os.Stderr, "%-18s %-55s pages=%3d %.3fs %s\n", e.name, filepath.Base(f), len(pages), best, r.Err)
			results = append(results, r)
		}
	}
	b, _ := json.Marshal(results)
	os.WriteFile(*out, b, 0o644)
}

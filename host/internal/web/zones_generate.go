//go:build ignore

// zones_generate writes static/zones.txt, the time zone names the profile form offers,
// from the tz database the Go toolchain ships ($GOROOT/lib/time/zoneinfo.zip, the
// same data time/tzdata embeds). Run it with `go generate ./host/internal/web`
// after a Go upgrade.
package main

import (
	"archive/zip"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// areas are the tz database's geographic areas; names outside them (EST5EDT,
// US/Eastern, Etc/GMT+5) are old aliases a person does not look for.
var areas = []string{"Africa", "America", "Antarctica", "Arctic", "Asia", "Atlantic",
	"Australia", "Europe", "Indian", "Pacific"}

func main() {
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		log.Fatal(err)
	}
	zr, err := zip.OpenReader(filepath.Join(strings.TrimSpace(string(goroot)), "lib", "time", "zoneinfo.zip"))
	if err != nil {
		log.Fatal(err)
	}
	defer zr.Close()
	names := []string{"UTC"}
	for _, f := range zr.File {
		area, _, ok := strings.Cut(f.Name, "/")
		if ok && slices.Contains(areas, area) && !f.FileInfo().IsDir() {
			names = append(names, f.Name)
		}
	}
	slices.Sort(names)
	if err := os.WriteFile(filepath.Join("static", "zones.txt"), []byte(strings.Join(names, "\n")+"\n"), 0o644); err != nil {
		log.Fatal(err)
	}
}

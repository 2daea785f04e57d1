package cli

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
)

// servingTools are the programs serve calls at run time, with the Debian package that
// installs them: ingest extracts every uploaded PDF with them (docs/ingest.md).
var servingTools = []struct{ program, pkg string }{
	{"pdftotext", "poppler-utils"},
	{"pdfinfo", "poppler-utils"},
}

// checkServingTools refuses to serve when a program of servingTools is not on PATH,
// in one sentence naming the programs and the package to install, instead of
// failing every upload later.
func checkServingTools() error {
	var missing, pkgs []string
	for _, tool := range servingTools {
		if _, err := exec.LookPath(tool.program); err != nil {
			missing = append(missing, tool.program)
			if !slices.Contains(pkgs, tool.pkg) {
				pkgs = append(pkgs, tool.pkg)
			}
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return fmt.Errorf("%s not found on PATH, and PDF uploads need them: install the Debian package %s (as root: apt-get install -y %s; `make run` does it for you)",
		strings.Join(missing, " and "), strings.Join(pkgs, " "), strings.Join(pkgs, " "))
}

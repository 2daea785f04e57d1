package main

import (
	"bytes"
	"encoding/xml"
	"os/exec"
	"strings"
)

type bxDoc struct {
	Pages []struct {
		Flows []struct {
			Blocks []struct {
				Lines []struct {
					Words []string `xml:"word"`
				} `xml:"line"`
			} `xml:"block"`
		} `xml:"flow"`
	} `xml:"body>doc>page"`
}

func pdftotextBBox(path string) ([]string, error) {
	cmd := exec.Command("pdftotext", "-bbox-layout", "-enc", "UTF-8", path, "-")
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		return nil, err
	}
	var d bxDoc
	raw := bytes.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\r' && r != '\t' {
			return -1
		}
		return r
	}, out.Bytes())
	dec := xml.NewDecoder(bytes.NewReader(raw))
	dec.Strict = false
	dec.Entity = xml.HTMLEntity
	if err := dec.Decode(&d); err != nil {
		return nil, err
	}
	var pages []string
	for _, p := range d.Pages {
		var sb strings.Builder
		for _, f := range p.Flows {
			for _, b := range f.Blocks {
				for _, l := range b.Lines {
					sb.WriteString(strings.Join(l.Words, " "))
					sb.WriteByte('\n')
				}
				sb.WriteByte('\n')
			}
		}
		pages = append(pages, sb.String())
	}
	return pages, nil
}

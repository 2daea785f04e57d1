#!/bin/sh
# Typesets the evaluation set's own papers (*.ms, groff -ms) into the PDFs that
# `lectern eval rag --set fulltext` ingests beside the shared fixture PDFs. Needs
# groff and ghostscript (Debian: apt-get install groff ghostscript). The PDFs are
# committed, so only a change to a .ms file needs this; check the gold pages of
# fulltext.json afterwards (go test ./host/internal/evals -run TestFullTextGold).
set -eu
cd "$(dirname "$0")"
for src in *.ms; do
	name=${src%.ms}
	groff -ms -t -Tps "$src" > "$name.ps"
	ps2pdf -dPDFSETTINGS=/prepress "$name.ps" "$name.pdf"
	rm "$name.ps"
done

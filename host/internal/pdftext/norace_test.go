//go:build !race

package pdftext

// rssFactor scales maxHostRSS; 1 without the race detector.
const rssFactor = 1

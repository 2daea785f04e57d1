//go:build race

package pdftext

// rssFactor scales maxHostRSS: the race detector multiplies a program's memory
// (measured 37 MB -> 107 MB for the dense PDF's extraction).
const rssFactor = 4

//go:build !unix

package embedded

// allocBlock returns n zeroed bytes from the Go heap where anonymous mappings are
// not available.
func allocBlock(n int) []byte { return make([]byte, n) }

// freeBlock leaves the block to the garbage collector.
func freeBlock([]byte) {}

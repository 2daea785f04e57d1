//go:build unix

package embedded

import (
	"fmt"
	"syscall"
)

// allocBlock returns n zeroed bytes mapped outside the Go heap (anonymous, private
// memory), so the garbage collector neither scans them nor counts them in the
// heap whose growth paces it. Pages take memory when first written.
func allocBlock(n int) []byte {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		// As make does when memory runs out: nothing sensible is left to do.
		panic(fmt.Sprintf("embedded: map %d bytes for vector codes: %v", n, err))
	}
	return b
}

// freeBlock returns a block from allocBlock to the system. Nothing may use it after.
func freeBlock(b []byte) {
	if err := syscall.Munmap(b); err != nil {
		panic(fmt.Sprintf("embedded: unmap vector codes: %v", err))
	}
}

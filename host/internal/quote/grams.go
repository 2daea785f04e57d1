package quote

import "strings"

// gramLen is the length in bytes of the grams the index files positions
// under. The strings searched for are longer: a quote has at least
// MinLetters runes and a piece of it at least 17.
const gramLen = 8

const gramBits = 16

// grams files every rune start of a string under the hash of the gramLen
// bytes there, so that the occurrences of a string are found by checking the
// few positions filed under its first gram instead of scanning the text.
type grams struct {
	// pos[head[h]:head[h+1]] are the positions of bucket h, in order.
	head []int32
	pos  []int32
}

func gramHash(s string) int {
	_ = s[7]
	v := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	return int(v * 0x9E3779B97F4A7C15 >> (64 - gramBits))
}

func newGrams(s string) grams {
	n := max(len(s)-gramLen+1, 0)
	head := make([]int32, 1<<gramBits+1)
	for i := range n {
		if s[i]&0xC0 != 0x80 {
			head[gramHash(s[i:])+1]++
		}
	}
	for h := 1; h < len(head); h++ {
		head[h] += head[h-1]
	}
	pos := make([]int32, head[len(head)-1])
	next := make([]int32, 1<<gramBits)
	copy(next, head)
	for i := range n {
		if s[i]&0xC0 != 0x80 {
			h := gramHash(s[i:])
			pos[next[h]] = int32(i)
			next[h]++
		}
	}
	return grams{head: head, pos: pos}
}

// occurrences calls yield with the byte offset of each occurrence of sub
// (starting with a rune start) in s, in order, until yield returns false.
func (g *grams) occurrences(s, sub string, yield func(int) bool) {
	if len(sub) < gramLen { // not filed; scan
		for off := 0; off < len(s); {
			k := strings.Index(s[off:], sub)
			if k < 0 || !yield(off+k) {
				return
			}
			off += k + 1
		}
		return
	}
	h := gramHash(sub)
	for _, p := range g.pos[g.head[h]:g.head[h+1]] {
		if strings.HasPrefix(s[p:], sub) && !yield(int(p)) {
			return
		}
	}
}

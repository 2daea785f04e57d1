package pluginhost

import (
	"fmt"
	"strconv"
	"strings"
)

// Range is a plugin version constraint: comma-separated comparisons, all of which
// must hold, for example ">= 0.1.0, < 2.0.0" or "= 1.4.2". The zero Range accepts
// every version.
type Range struct {
	text  string
	terms []term
}

type term struct {
	op string
	v  semver
}

type semver struct {
	major, minor, patch int
	pre                 string
}

// ParseRange parses a constraint.
func ParseRange(s string) (Range, error) {
	r := Range{text: strings.TrimSpace(s)}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			return Range{}, fmt.Errorf("empty comparison in %q", s)
		}
		op := "="
		for _, candidate := range []string{">=", "<=", "!=", ">", "<", "="} {
			if strings.HasPrefix(part, candidate) {
				op = candidate
				part = strings.TrimSpace(part[len(candidate):])
				break
			}
		}
		v, err := parseSemver(part)
		if err != nil {
			return Range{}, err
		}
		r.terms = append(r.terms, term{op: op, v: v})
	}
	return r, nil
}

func parseSemver(s string) (semver, error) {
	orig := s
	s = strings.TrimPrefix(s, "v")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		s = s[:i]
	}
	var v semver
	if i := strings.IndexByte(s, '-'); i >= 0 {
		v.pre, s = s[i+1:], s[:i]
	}
	parts := strings.Split(s, ".")
	if len(parts) != 3 {
		return semver{}, fmt.Errorf("%q is not a semantic version (MAJOR.MINOR.PATCH)", orig)
	}
	nums := [3]*int{&v.major, &v.minor, &v.patch}
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 {
			return semver{}, fmt.Errorf("%q is not a semantic version (MAJOR.MINOR.PATCH)", orig)
		}
		*nums[i] = n
	}
	return v, nil
}

func (a semver) compare(b semver) int {
	for _, d := range []int{a.major - b.major, a.minor - b.minor, a.patch - b.patch} {
		if d != 0 {
			return d
		}
	}
	switch {
	case a.pre == b.pre:
		return 0
	case a.pre == "":
		return 1
	case b.pre == "":
		return -1
	}
	return strings.Compare(a.pre, b.pre)
}

// Allows reports whether version satisfies the range. An unparsable version is
// refused by any non-empty range.
func (r Range) Allows(version string) bool {
	if len(r.terms) == 0 {
		return true
	}
	v, err := parseSemver(version)
	if err != nil {
		return false
	}
	for _, t := range r.terms {
		c := v.compare(t.v)
		ok := map[string]bool{">=": c >= 0, "<=": c <= 0, ">": c > 0, "<": c < 0, "=": c == 0, "!=": c != 0}[t.op]
		if !ok {
			return false
		}
	}
	return true
}

// String is the constraint as written; "" for any version.
func (r Range) String() string { return r.text }

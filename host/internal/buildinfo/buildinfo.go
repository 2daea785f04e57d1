// Package buildinfo says which build of Lectern is running.
package buildinfo

import "runtime/debug"

// version is set at link time: -ldflags "-X github.com/lectern-research/lectern/host/internal/buildinfo.version=v1.2.3".
var version string

// Version is the release version, or the VCS revision of a development build.
func Version() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "-dirty"
			}
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	return "devel-" + rev + modified
}

package pgembed

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// DefaultSharedBuffersMB is the shared_buffers a private cluster gets on a machine
// (or container) of memMB megabytes: an eighth of it, from PostgreSQL's own 128 MB
// to 1 GB. PostgreSQL's advice for a server of its own is a quarter; this one
// shares the machine with the host's vector index, PDF extraction and the
// researcher's other work. 128 MB held less than the hot rows of a lab's
// libraries and passages (docs/benchmarks.md, "Ninth session"). Unknown memory
// (0) keeps 128 MB.
func DefaultSharedBuffersMB(memMB int) int {
	return min(max(memMB/8, 128), 1024)
}

// memoryMB is the memory this process may use, in megabytes: the machine's, or
// its cgroup's limit when lower; 0 when neither can be read.
func memoryMB() int {
	total := meminfoMB("/proc/meminfo")
	if limit := cgroupLimitMB("/sys/fs/cgroup/memory.max"); limit > 0 && (total == 0 || limit < total) {
		return limit
	}
	return total
}

// meminfoMB reads MemTotal from a /proc/meminfo file; 0 when it cannot.
func meminfoMB(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:")
		if !ok {
			continue
		}
		kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
		if err != nil {
			return 0
		}
		return kb / 1024
	}
	return 0
}

// cgroupLimitMB reads a cgroup v2 memory.max file; 0 when there is no limit
// ("max") or it cannot be read.
func cgroupLimitMB(path string) int {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 {
		return 0
	}
	return int(n >> 20)
}

package verify

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"runtime"

	"github.com/tfdoctor/doctor/host"
)

// ChildMain runs one rung in this process: it reads the request line from
// stdin, does the GPU work, and prints one JSON line with the result to
// stdout. doctor's hidden __rung command calls it; the ladder runs it in a
// child process so that a hang inside the driver can be killed. It returns
// the process exit code: 0 whenever a result was printed.
func ChildMain(stdin io.Reader, stdout io.Writer) int {
	br := bufio.NewReader(stdin)
	line, err := br.ReadString('\n')
	var req childRequest
	if err == nil || line != "" {
		err = json.Unmarshal([]byte(line), &req)
	}
	if err != nil {
		fmt.Fprintf(stdout, "doctor %s: expects a JSON request on standard input: %v\n", ChildCommandName, err)
		return 2
	}
	// The request's "go" line lets the rung past its gate; EOF does too
	// (the parent is gone: finish quickly rather than wait forever).
	gate := func() {
		if req.Gate {
			_, _ = br.ReadString('\n')
		}
	}
	r := runChild(req, gate)
	if err := json.NewEncoder(stdout).Encode(childResponse{Rung: r}); err != nil {
		return 3
	}
	return 0
}

func runChild(req childRequest, gate func()) (r host.Rung) {
	// CUDA's current context belongs to an OS thread; keep this goroutine
	// on one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer func() {
		if p := recover(); p != nil {
			r = host.Rung{Name: req.Rung, Status: host.RungFail, Cause: causeComputeFailed,
				Summary: "the rung failed inside doctor", Error: fmt.Sprintf("internal error: %v", p)}
		}
	}()
	if req.Size == 0 {
		req.Size = DefaultSize
	}
	if req.Runs == 0 {
		req.Runs = DefaultRuns
	}
	if req.LibCUDA == "" {
		req.LibCUDA = "libcuda.so.1"
	}
	e := currentEnv()
	switch req.Rung {
	case host.RungDriver:
		return runDriver(req, e)
	case host.RungLibraries:
		return runLibraries(req, e, gate)
	}
	return host.Rung{Name: req.Rung, Status: host.RungFail, Cause: causeComputeFailed,
		Summary: "unknown rung", Error: fmt.Sprintf("unknown rung %q", req.Rung)}
}

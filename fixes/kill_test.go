package fixes

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestMain lets the test binary act as a fix run that the kill test
// SIGKILLs at a random moment.
func TestMain(m *testing.M) {
	if os.Getenv("DOCTOR_FIX_CHILD") == "1" {
		os.Exit(childFixRun())
	}
	os.Exit(m.Run())
}

// childFixRun is `doctor --fix --yes` for CUDA_VISIBLE_DEVICES, with the
// lock held, over the home and conda prefix in its environment.
func childFixRun() int {
	mach := NewMachine(os.Getenv("ROOT"), os.Environ(), nil)
	mach.IsRoot = func() bool { return true }
	lock, err := AcquireLock(mach.StateDir())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	defer lock.Release()
	plans, _, err := Build(mach, report(cvdFix), nil)
	if err != nil {
		return 3
	}
	s := &Session{M: mach, W: io.Discard, In: nil, Yes: true}
	// Tell the parent where the run is, so that it can kill it at a chosen
	// step (and a random moment within it).
	s.stepHook = func(p *Plan, i int) error { fmt.Printf("step %d\n", i); return nil }
	fmt.Println("started")
	res := s.Run(context.Background(), plans)
	if res.Outcomes[0].State != "applied" {
		return 1
	}
	return 0
}

// startChild starts a fix run and returns once it has planned and is
// about to apply, with its progress lines.
func startChild(t *testing.T, e *env) (*exec.Cmd, *bufio.Reader) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{"DOCTOR_FIX_CHILD=1", "ROOT=" + e.root, "HOME=" + e.home, "XDG_STATE_HOME=" + e.state,
		"CONDA_PREFIX=" + e.m.Env["CONDA_PREFIX"], "CUDA_VISIBLE_DEVICES=-1", "PATH=" + os.Getenv("PATH")}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	line, _ := r.ReadString('\n')
	if line != "started\n" {
		_ = cmd.Wait()
		t.Fatalf("child did not start: %q", line)
	}
	return cmd, r
}

// A fix run killed at any moment leaves every file either old or new, the
// lock free, and undo restores the whole tree byte for byte (no temporary
// file left behind either).
func TestKilledMidway(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns many runs")
	}
	const nFiles, runs = 20, 12
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	midway := 0
	for iter := 0; iter < runs; iter++ {
		e := newEnv(t)
		files := seedCVD(t, e, nFiles)
		orig := e.tree(e.home, e.dir+"/prefix")
		c, progress := startChild(t, e)
		// Kill it when it reaches a random step (or past the last), after
		// a random moment: inside a backup, a journal write or the edit.
		k := rng.Intn(len(files) + 1)
		want := fmt.Sprintf("step %d\n", k)
		for {
			line, err := progress.ReadString('\n')
			if err != nil || line == want {
				break
			}
		}
		time.Sleep(time.Duration(rng.Int63n(int64(4 * time.Millisecond))))
		_ = c.Process.Signal(syscall.SIGKILL)
		_ = c.Wait()

		changed := 0
		for _, f := range files {
			got := e.read(f.path)
			switch got {
			case f.new:
				changed++
			case f.old:
			default:
				t.Fatalf("iteration %d: %s is neither old nor new: %q", iter, f.path, got)
			}
		}
		if changed > 0 && changed < len(files) {
			midway++
		}
		lock, err := AcquireLock(e.m.StateDir())
		if err != nil {
			t.Fatalf("iteration %d: the killed run's lock was not released: %v", iter, err)
		}
		if _, err := Undo(e.m.StateDir(), io.Discard, time.Now()); err != nil {
			t.Fatalf("iteration %d: undo: %v", iter, err)
		}
		lock.Release()
		sameTree(t, fmt.Sprintf("iteration %d (%d/%d files changed when killed)", iter, changed, len(files)), orig, e.tree(e.home, e.dir+"/prefix"))
		if t.Failed() {
			return
		}
	}
	t.Logf("%d of %d runs were killed with some files changed and others not", midway, runs)
	if midway == 0 {
		t.Log("no run was killed half-way this time (timing); the old-or-new and undo checks still held")
	}
}

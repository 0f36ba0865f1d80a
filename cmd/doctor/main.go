// Command doctor finds out why TensorFlow does not see or does not use an
// NVIDIA GPU on Linux and WSL2, repairs what it safely can, and proves the
// repair with a GPU matmul. `doctor --help` documents every flag, exit code
// and environment variable.
package main

import (
	"context"
	"os"

	"github.com/tfdoctor/doctor/internal/iostreams"
)

func main() {
	ctx, caught, stop := notifySignals(context.Background(), os.Stderr, signalGrace)
	code := Main(ctx, os.Args, iostreams.System())
	stop()
	if c := caught(); c != 0 {
		code = c // 130 after SIGINT, 143 after SIGTERM, whatever the command returned
	}
	os.Exit(code)
}

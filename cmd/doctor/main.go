// Command doctor finds out why TensorFlow does not see or does not use an
// NVIDIA GPU on Linux and WSL2, repairs what it safely can, and proves the
// repair with a GPU matmul. `doctor --help` documents every flag, exit code
// and environment variable.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/tfdoctor/doctor/internal/iostreams"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Main(ctx, os.Args, iostreams.System())
	stop()
	os.Exit(code)
}

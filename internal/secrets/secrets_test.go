package secrets

import (
	"strings"
	"testing"
)

func TestScrub(t *testing.T) {
	cases := []struct{ in, want string }{
		{"https://user:password@pypi.example.com/simple", "https://<redacted>@pypi.example.com/simple"},
		{"git clone https://ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/x/y", "git clone https://<redacted>@github.com/x/y"},
		{"python train.py --wandb-key=abc123def --epochs 3", "python train.py --wandb-key=<redacted> --epochs 3"},
		{"python train.py --api-key abc123def --epochs 3", "python train.py --api-key <redacted> --epochs 3"},
		{"NVIDIA_NGC_PASS=hunter2 HF_TOKEN='x y' ok=1", "NVIDIA_NGC_PASS=<redacted> HF_TOKEN=<redacted> ok=1"},
		{`{"password": "hunter2"}`, `{"password": <redacted>}`},
		{"password: hunter2", "password: <redacted>"},
		{"Authorization: Bearer abcdefghijklmnop", "Authorization: Bearer <redacted>"},
		{"token hf_abcdefghijklmnopqrstuvwxyz here", "token <redacted> here"},
		{"AWS AKIAABCDEFGHIJKLMNOP", "AWS <redacted>"},
		// What must stay: doctor's own evidence.
		{"modprobe: ERROR: could not insert 'nvidia': Key was rejected by service", ""},
		{"export CUDA_VISIBLE_DEVICES=-1", ""},
		{"XLA_FLAGS=--xla_gpu_cuda_data_dir=/usr/local/cuda", ""},
		{"https://developer.nvidia.com/cuda-downloads", ""},
		{"LD_LIBRARY_PATH=/usr/local/cuda/lib64:/opt/x", ""},
		{"GPU 0: NVIDIA H200 (UUID: GPU-91faaf4a-9cbf-4e2b-8c1d-0123456789ab)", ""},
		{"pip install --upgrade pip", ""},
		{"pip install --no-cache-dir --bypass-proxy tensorflow", ""},
		{"I tensorflow/core/common_runtime/direct_session.cc:123] Created session", ""},
		{"W external/xla/key_value_store.cc:12] keys", ""},
		{`{"password":"hunter2"}`, `{"password":<redacted>}`},
	}
	for _, c := range cases {
		want := c.want
		if want == "" {
			want = c.in
		}
		if got := Scrub(c.in); got != want {
			t.Errorf("Scrub(%q)\n = %q\nwant %q", c.in, got, want)
		}
		if got := Scrub(Scrub(c.in)); got != want {
			t.Errorf("Scrub twice (%q) = %q", c.in, got)
		}
	}
}

func TestName(t *testing.T) {
	for _, n := range []string{"NVIDIA_NGC_PASS", "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "--wandb-key", "DB_PASSWORD", "KEY", "OPENAI_API_KEY", "MY_KEY_FILE"} {
		if !Name(n) {
			t.Errorf("%s is not a secret name", n)
		}
	}
	for _, n := range []string{"CUDA_VISIBLE_DEVICES", "PATH", "TF_FORCE_GPU_ALLOW_GROWTH", "KEYBOARD", "MONKEY"} {
		if Name(n) {
			t.Errorf("%s is a secret name", n)
		}
	}
	_ = strings.ToLower
}

package rules

import (
	"strings"
	"testing"
)

// A PyTorch or JAX user whose framework is missing is not told that
// TensorFlow is missing, nor handed a TensorFlow install.
func TestFrameworkMissingIsNotTensorFlow(t *testing.T) {
	for _, path := range []string{
		"testdata/explain/logs/framework_not_installed/torch_missing.log",
		"testdata/explain/logs/framework_not_installed/jax_missing.log",
	} {
		r := explainFile(t, path)
		if r.RootCause == nil || r.RootCause.Cause != "framework_not_installed" {
			t.Fatalf("%s: root cause %+v", path, r.RootCause)
		}
		for _, f := range r.Findings {
			if !f.Failing() {
				continue
			}
			if strings.Contains(f.Title, "TensorFlow") || strings.Contains(f.Detail, "TensorFlow") {
				t.Errorf("%s: finding %q / %q names TensorFlow", path, f.Title, f.Detail)
			}
			for _, x := range f.Fixes {
				if x.ID == "pip-install-tensorflow" || strings.Contains(strings.Join(x.Steps, " "), "tensorflow") {
					t.Errorf("%s: fix %s installs TensorFlow: %q", path, x.ID, x.Steps)
				}
			}
		}
	}
	// TensorFlow's own absence keeps its label and its fix.
	r := explainFile(t, "testdata/explain/logs/tf_not_installed/module_missing.log")
	if r.RootCause == nil || r.RootCause.Cause != "tf_not_installed" {
		t.Fatalf("tensorflow missing: root cause %+v", r.RootCause)
	}
}

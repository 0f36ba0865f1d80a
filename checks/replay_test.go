package checks_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tfdoctor/doctor/checks"
	"github.com/tfdoctor/doctor/host"
	"github.com/tfdoctor/doctor/knowledge"
)

// withCompat judges with the shipped compatibility table changed by edit.
func withCompat(t *testing.T, edit func(map[string]any)) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(knowledge.CompatJSON(), &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc)
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	restore, err := knowledge.ReplaceCompat(b)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(restore)
}

func findingByID(fs []checks.Finding, id string) *checks.Finding {
	for i := range fs {
		if fs[i].ID == id {
			return &fs[i]
		}
	}
	return nil
}

// The snapshot records facts; the checks judge them with the knowledge of
// the doctor that reads it. A recorded snapshot replayed through a changed
// table gets another verdict (DESIGN.md: `doctor --from` with a newer rule
// set re-judges).
func TestReplayThroughAChangedTableRejudges(t *testing.T) {
	// A recorded environment without cuDNN: the table says TensorFlow
	// needs libcudnn before it registers a GPU, so it is an error.
	s := loadUpper(t, "tf215-cudnn-missing")
	if f := findingByID(checks.Run(checks.CUDALibraries, s), "libs.cuda_libraries/cudnn"); f == nil || f.Severity != checks.SevError {
		t.Fatalf("with the shipped table: %+v", f)
	}
	// A table in which cuDNN is not required: the same snapshot is judged
	// again, and the missing cuDNN no longer breaks the chain.
	t.Run("cudnn not required", func(t *testing.T) {
		withCompat(t, func(doc map[string]any) {
			req := doc["sonames"].(map[string]any)["required"].(map[string]any)
			var keep []any
			for _, l := range req["libs"].([]any) {
				if l != "cudnn" {
					keep = append(keep, l)
				}
			}
			req["libs"] = keep
		})
		if f := findingByID(checks.Run(checks.CUDALibraries, s), "libs.cuda_libraries/cudnn"); f != nil {
			t.Errorf("cuDNN still judged required: %+v", f)
		}
	})

	// A table that names a soname the gather never resolved: unknown,
	// reported as not checked, never as missing.
	t.Run("a soname the snapshot lacks", func(t *testing.T) {
		withCompat(t, func(doc map[string]any) {
			for _, r := range doc["sonames"].(map[string]any)["rows"].([]any) {
				r.(map[string]any)["libs"].(map[string]any)["cufft"] = "99"
			}
		})
		fs := checks.Run(checks.CUDALibraries, s)
		if f := findingByID(fs, "libs.cuda_libraries/cufft"); f != nil {
			t.Errorf("an unresolved soname judged missing: %+v", f)
		}
		if f := findingByID(fs, "libs.cuda_libraries/unresolved"); f == nil || !f.Skipped || !strings.Contains(f.Detail, "libcufft.so.99") {
			t.Errorf("no not-checked finding for libcufft.so.99: %+v", fs)
		}
	})

	// A snapshot recorded on the GPU machine by an older doctor (it still
	// holds the needs judged at gather time): TensorFlow is not installed,
	// and the release doctor would install follows the table, not the
	// snapshot.
	f, err := os.Open("../testdata/snapshots/h200-live/snapshot.json")
	if err != nil {
		t.Fatal(err)
	}
	old, err := host.ReadSnapshot(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := checks.TFLibraries(old); got.TFVersion != knowledge.TFBuilds()[0].TF || len(got.Needed) == 0 {
		t.Fatalf("old snapshot judged for %s with %d needs", got.TFVersion, len(got.Needed))
	}
	t.Run("a newer release in the table", func(t *testing.T) {
		withCompat(t, func(doc map[string]any) {
			b := doc["tensorflow_builds"].(map[string]any)
			rows := b["rows"].([]any)
			row := map[string]any{}
			for k, v := range rows[0].(map[string]any) {
				row[k] = v
			}
			row["tf"], row["python"] = "2.99.0", "3.10-3.14"
			b["rows"] = append([]any{row}, rows...)
		})
		fs := checks.Run(checks.CUDALibraries, old)
		f := findingByID(fs, "libs.cuda_libraries/needed")
		if f == nil || !strings.Contains(f.Title, "TensorFlow 2.99.0") {
			t.Errorf("replayed with a newer release: %+v", f)
		}
	})
}

package knowledge

import "testing"

// The compatibility table is one: compat_older.json only adds rows
// compat.json does not have (TensorFlow before 2.4, CUDA before 11.0), so
// no fact is kept twice and the two files cannot disagree.
func TestOlderRowsDoNotOverlap(t *testing.T) {
	if len(older.TensorFlowBuilds.Rows) == 0 || len(older.Driver.Rows) == 0 {
		t.Fatal("compat_older.json has no rows")
	}
	for _, r := range older.TensorFlowBuilds.Rows {
		if _, ok := TFBuildFor(r.TF); ok {
			t.Errorf("TensorFlow %s is in both compat.json and compat_older.json", r.TF)
		}
		if len(Version(r.TF)) != 2 || len(Version(r.CUDA)) != 2 || !r.Mark.Verified() || r.Python == "" {
			t.Errorf("malformed row %+v", r)
		}
	}
	ga := map[string]bool{}
	for _, r := range compat.Driver.Rows {
		ga[r.CUDA] = true
	}
	for _, r := range older.Driver.Rows {
		if ga[r.CUDA] {
			t.Errorf("CUDA %s is in both compat.json and compat_older.json", r.CUDA)
		}
		if r.Release != "GA" || len(Version(r.Linux)) < 2 || !r.Mark.Verified() {
			t.Errorf("malformed row %+v", r)
		}
	}
	if b, ok := TFBuildAnyFor("1.15.5"); !ok || b.CUDA != "10.0" {
		t.Errorf("TensorFlow 1.15: %+v %v", b, ok)
	}
	if b, ok := TFBuildAnyFor("2.15.1"); !ok || b.CUDA != "12.2" {
		t.Errorf("TensorFlow 2.15: %+v %v", b, ok)
	}
	d := GADrivers()
	for i := 1; i < len(d); i++ {
		if CompareVersions(Version(d[i-1].CUDA), Version(d[i].CUDA)) <= 0 {
			t.Fatalf("GADrivers not newest first at %s, %s", d[i-1].CUDA, d[i].CUDA)
		}
	}
}

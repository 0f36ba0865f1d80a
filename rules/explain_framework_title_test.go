package rules

import "testing"

// TestTitleWithFrameworkLeadingSpace: a title that starts with a space
// (a signature whose title begins with a captured value that is empty)
// must not panic on its missing first word.
func TestTitleWithFrameworkLeadingSpace(t *testing.T) {
	for fw := range frameworkNames {
		if got := titleWithFramework(fw, " ran out of memory"); got == "" {
			t.Errorf("%s: empty title", fw)
		}
	}
}

package knowledge

import (
	"encoding/json"
	"fmt"
)

// CompatJSON returns the embedded compatibility table as shipped.
func CompatJSON() []byte { return append([]byte(nil), compatJSON...) }

// ReplaceCompat makes b (a data/compat.json document) the compatibility
// table until restore is called. It exists so that a recorded snapshot
// can be judged again with another table (a newer rule set, a changed
// row) and the verdict seen to follow the table. Not safe while checks
// run concurrently.
func ReplaceCompat(b []byte) (restore func(), err error) {
	var probe map[string]json.RawMessage
	if err := json.Unmarshal(b, &probe); err != nil {
		return nil, fmt.Errorf("compat table: %w", err)
	}
	var f *compatFile
	func() {
		defer func() {
			if p := recover(); p != nil {
				err = fmt.Errorf("compat table: %v", p)
			}
		}()
		f = mustLoadCompat(b)
	}()
	if err != nil {
		return nil, err
	}
	old := compat
	compat = f
	return func() { compat = old }, nil
}

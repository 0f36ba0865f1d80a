package host

// Python is the examined Python environment: its interpreter, version,
// installed distributions and TensorFlow build facts. Filled by the python
// collector (see python_collect.go).
type Python struct {
	// Executable is the interpreter that was examined.
	Executable string `json:"executable"`
}

// Libraries is how the CUDA libraries that TensorFlow needs resolve, the way
// the dynamic loader and TensorFlow's dso_loader resolve them.
type Libraries struct{}

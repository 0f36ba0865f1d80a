package host

// Verification is the result of the runtime ladder (package verify): one
// entry per rung, lowest first.
type Verification struct{}

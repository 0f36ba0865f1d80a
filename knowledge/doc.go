// Package knowledge holds what doctor knows about the TensorFlow GPU stack as
// embedded data with sources: the cause labels, NVIDIA Xid codes and the
// compatibility tables. It is a leaf: it imports nothing of ours.
//
// Every table row keeps the verification mark of the source it came from
// (shared/knowledge/knowledge.md): V verified in a primary source, S
// secondary, U unverified. Checks must not raise an error-severity finding on
// an unverified row alone.
package knowledge

// Package kubernetes holds doctor's Kubernetes manifests and their tests.
// It is a Go module of its own so that k8s.io/api, which the tests decode
// the manifests into, never enters the tool's module.
package kubernetes

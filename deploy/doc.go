// Package deploy holds what runs sluice outside a developer's shell, and the tests that keep
// it working: the container image (Dockerfile and Dockerfile.prebuilt at the repository's
// root, built by scripts/release) and the Kubernetes manifests in deploy/kubernetes. It has
// no code of its own; docs/operations.md ("Deploying") is the walk-through.
package deploy

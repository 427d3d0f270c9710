//go:build tools

// The control plane's mains, kept in this module's graph (and go.sum) by a build tag no build
// sets: `npm run kube:build` builds them (build.ts), `npm run kube:bump` moves the release
// (bump.ts). Nothing here is compiled into volhook.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)

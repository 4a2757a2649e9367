// Package forwarder exists only to pin the NDNd forwarder version for ndnsci.
//
// go.mod requires github.com/named-data/ndnd at the pinned version and go.sum
// records the hashes of it and of every dependency; tools.go (build tag "tools")
// imports github.com/named-data/ndnd/cmd/ndnd so that `go mod tidy` keeps them.
// build.sh runs `go build github.com/named-data/ndnd/cmd/ndnd` from here.
package forwarder

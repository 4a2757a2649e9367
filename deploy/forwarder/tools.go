//go:build tools

// Package forwarder pins the NDNd forwarder (github.com/named-data/ndnd) as a
// dependency of this tiny module, so that `go build
// github.com/named-data/ndnd/cmd/ndnd` inside this directory builds exactly the
// version recorded in go.mod and go.sum. See build.sh.
package forwarder

import (
	_ "github.com/named-data/ndnd/cmd/ndnd"
)

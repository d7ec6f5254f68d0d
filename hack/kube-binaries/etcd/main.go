// Command etcd is etcd's server binary, built from go.etcd.io/etcd/server/v3
// at the version Kubernetes pins. It is identical to etcd's own server/main.go.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}

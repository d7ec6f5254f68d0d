// Package podrun runs the containers of a rendered pod spec on this machine,
// without Kubernetes, so that tests can run a hook's real scripts against
// real programs (PostgreSQL from Debian's packages).
//
// A Host holds what the pods of one test share: a short temporary root, the
// PVCs (one directory per claim name, kept across pods like a volume), the
// Secrets and ConfigMaps env and volumes are resolved from, the user the
// processes run as, and exact-value substitutions for the cluster's names
// (a Service's DNS name becomes 127.0.0.1, port 5432 a free port).
//
// A Pod maps every volume of the spec to a directory under the root (a PVC to
// its claim's directory, an emptyDir to a directory of the pod, a ConfigMap
// or Secret to a directory holding its keys as files), and every mount path
// of a container to the directory of its volume: an env value or an argument
// that is a mount path, or starts with one followed by "/", or holds one
// after "=", is rewritten to the host directory. Arguments that span lines
// are scripts, never rewritten: scripts must take their paths from the
// environment.
//
// $(VAR) references are expanded as the kubelet does (expansion.go, a port
// of its own code): an env value with the values declared before it (as this
// machine sees them: mount paths rewritten, Values substituted), the
// container's command and args with its whole env, scripts included; $$ is a
// $, an undefined $(VAR) stays. Lifecycle hooks and Exec are not expanded.
// The image's env (PATH) and the Services' env variables are not declared.
//
// Read-only mounts are enforced by permissions, not by mounts (readonly.go):
// ConfigMap and Secret volumes, and a sealed copy of a PVC or emptyDir made
// at each container start for a readOnly mount (or a PVC whose source is
// readOnly), are owned by root as root (with the fsGroup as group, files
// readable by it) and not writable by the pod's user, who gets EACCES where
// the kubelet's read-only bind mount gives EROFS. Run as another user, they
// are the test user's without a write bit: writes still fail, chmod does
// not. A copy is not a live view: what another mount writes to the volume
// later is not seen through it. Bind mounts were left out: they need root
// and leave mounts behind a killed test. ConfigMap volumes change with
// Pod.UpdateConfigMap.
//
// Processes run as the pod's runAsUser (the container's if set) when the test
// runs as root, as in CI: the user and group are created (useradd, groupadd)
// when the system has no entry for them, since initdb needs one. As any other
// user the processes run as that user and runAsUser is ignored. Volumes are
// owned by that user, as fsGroup would make them.
//
// Several pods of one StatefulSet (StatefulSetPodOrdinal) share 127.0.0.1:
// Host.Env gives every container what a cluster's DNS would (the other pods'
// addresses, by a variable the scripts read) and Process.Kill is a node
// dying under a pod.
//
// The PATH of every container is Host.Path (stub directories first), the
// PostgreSQL bin directory, then the system's.
package podrun

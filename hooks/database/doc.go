// Package database is the Database hook (example.com/v1): a pure function from
// a Metacontroller request (the Database parent and its observed children) to
// the desired children and the parent's status, for PostgreSQL.
//
// Construct it with Hook(key, agentImage): key (at least 32 bytes) is the
// service's credentials key; agentImage is metahooks' own image, which the
// reporter container of every instance runs (instances >= 2 only; without
// it those answer ErrNoAgentImage, a 500). Passwords are HMAC-SHA256(key, context, namespace, name),
// so every replica of the service derives the same ones and nothing is
// stored. The pod's init container sets both passwords from the Secrets at
// every start, so the Secrets, not whatever PGDATA held, are the truth.
//
// The pod's lifecycle is the project's own: scripts/*.sh (scripts.go), run
// with /bin/sh -c, call initdb, pg_ctl, postgres, psql, pg_restore, pg_dump
// and pg_dumpall, never the image's entrypoint (docs/database.md, Pod
// lifecycle and Supported images).
//
// Customize is the customize hook: it names the PVCs data-<n>-<i> and
// backups-<n>-<i> of every ordinal 0 to 8, and selects the pods of the backup Jobs by their labels,
// which Metacontroller then sends as related objects: a failed backup's
// BackupSucceeded message repeats its pod's FAILED: line (backup_failures.go).
//
// Children of Database <n> in its namespace:
//   - StatefulSet <n>: one server pod (0 while hibernating), serviceName
//     <n>-headless, volumeClaimTemplates data (PGDATA in data/pgdata) and
//     backups, both sized at the requested storage; pg_isready startup,
//     readiness and liveness probes; init container "init" (initdb, restore,
//     roles and passwords); resources of the size; a pod-template
//     annotation with the hash of postgresql.conf, so a size change rolls the
//     pod, as does an image change; PVC retention whenDeleted follows
//     spec.deletionPolicy, whenScaled is always Retain;
//   - Service <n> (ClusterIP, 5432) and Service <n>-headless;
//   - Secret <n>-credentials (kubernetes.io/basic-auth, immutable): username
//     (app: owner of database app, not a superuser), password, database,
//     host, port, uri. Once observed, its data is returned unchanged, always;
//   - Secret <n>-superuser (kubernetes.io/basic-auth, immutable): username
//     postgres and its password, for administration and the backup Jobs;
//     kept as observed too;
//   - ConfigMap <n>-config: postgresql.conf of the size and pg_hba.conf
//     (scram-sha-256 for every TCP connection);
//   - CronJob <n>-backup when spec.backup is set: pg_dump -Fc of the database
//     and pg_dumpall --globals-only into PVC backups-<n>-0 as <UTC time>.dump
//     and .globals.sql (written, flushed, renamed), keeping the newest
//     spec.backup.retention scheduled dumps (files named otherwise, final
//     dumps included, are never pruned); suspended while hibernating or
//     deleting;
//   - Job <n>-final-backup, only while a Database with deletionPolicy
//     Snapshot is finalized, once the server is ready.
//
// No PVC is a child. Metacontroller makes every child it creates owned by the
// Database, so garbage collection would delete a PVC child with the Database
// whatever the deletion policy. Both volumes therefore come from the
// StatefulSet's volumeClaimTemplates, and the StatefulSet's PVC retention
// policy, not any answer of this hook, decides whether they outlive it.
//
// Sizes (requests = limits for memory; storage is the data volume, and the
// backups volume, unless spec.storage asks for more), as sizes.go has them
// (TestSizeTables checks it):
//
//	size    CPU req/limit  memory  storage  /dev/shm  max_connections  shared_buffers  effective_cache_size  work_mem  maintenance_work_mem  max_wal_size
//	small   250m / 1       512Mi   5Gi      128Mi     50               128MB           384MB                 2MB       32MB                  1GB
//	medium  1 / 2          2Gi     20Gi     512Mi     100              512MB           1536MB                4MB       128MB                 2GB
//	large   2 / 4          8Gi     100Gi    2Gi       200              2GB             6GB                   8MB       512MB                 8GB
//
// Storage: spec.storage may not be below the preset (422 here, rejected by
// the CRD). volumeClaimTemplates are immutable, so they are copied from the
// observed StatefulSet verbatim: a larger spec.storage later is never put into
// the StatefulSet (the API server would refuse the update); condition
// StorageApplied turns False with reason ExpansionRequired and names every
// PVC to expand: each instance's data volume, and its backups volume when
// that template is smaller than requested too.
//
// Restore (spec.restoreFrom): while it is under way the init container gets
// PVC backups-<source>-0 and, only when PGDATA is empty, loads the dump
// (latest: the newest by its timestamp name) with its globals, by
// pg_restore --create without one transaction. A marker beside PGDATA makes
// any restart after a failed load stop instead of serving partial data. Once the
// observed pod is ready on that template, the machinery is dropped and the
// StatefulSet is annotated example.com/restored-from.
//
// Hibernate: replicas 0, backups suspended, everything else kept.
//
// Finalize: finalized is true only once, under Snapshot, the observed final
// backup Job has succeeded, the observed StatefulSet carries the PVC retention
// policy of the current deletionPolicy (and its controller has seen it), and
// the related PVCs themselves follow it: none owned by the StatefulSet under
// Retain and Snapshot, every one under Delete (its controller changes their
// owners only through a ready pod, so the server is started for it). Without
// related PVCs (no customize hook) Retain and Snapshot never finish on their
// own. Until then every child is kept and resyncAfterSeconds asks to be
// called again; the status says what is waited for and how to finish by hand.
// A failed final backup keeps the Database and says why in status.
//
// High availability (spec.instances 2 to 9; 1 answers exactly as without
// it): the StatefulSet runs them all (partition: the primary updated last),
// with ConfigMap <n>-topology, the record of who is the primary, which the
// hook reads back; Services <n> (on the primary's pod name), <n>-ro and <n>-r;
// PodDisruptionBudget <n>; Secret <n>-replication, the standbys' role;
// ServiceAccount, Role and RoleBinding <n>-instance, the identity of each
// pod's reporter container, allowed to patch pods/status of the Database's
// pods and nothing else (rbac.go, reporter.go). Customize then also asks for
// the pods, on which the reporters publish each instance's role and WAL
// position (ParseInstanceReport, published.go); decideTopology turns them, the pods' readiness and
// the time into failovers and switchovers that lose no acknowledged commit.
// The pods' scripts (scripts/instance.sh) clone, follow, promote, demote and
// rewind as the record says, and nothing else; every standby streams through
// a replication slot of its own (metahooks_instance_<ordinal>), which the
// primary keeps for each member of the record (its instances) and drops for
// the others, bounded by max_slot_wal_keep_size, a quarter of the size's
// storage (docs/database.md, High availability).
//
// Errors: a parent that breaks the schema yields *composite.InvalidError
// (422), a malformed observed child *composite.RequestError (400); no error
// and no status field ever carries credentials. Output depends only on the
// request, the key, the agent image and, for a condition whose status
// changes, on now.
package database

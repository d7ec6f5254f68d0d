package database

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"metahooks/hooks/kube"
)

// postgresqlConf renders the whole postgresql.conf of the Database's size. The
// server is started with -c config_file=/etc/postgresql/postgresql.conf, so
// this file is the configuration: the one initdb writes into PGDATA is unused.
func postgresqlConf(d *database) string {
	p := d.preset
	settings := []struct{ name, value string }{
		{"listen_addresses", "'*'"},
		{"port", strconv.Itoa(port)},
		{"max_connections", strconv.Itoa(p.maxConnections)},
		{"shared_buffers", p.sharedBuffers},
		{"effective_cache_size", p.effectiveCacheSize},
		{"work_mem", p.workMem},
		{"maintenance_work_mem", p.maintenanceWorkMem},
		{"wal_buffers", p.walBuffers},
		{"min_wal_size", p.minWALSize},
		{"max_wal_size", p.maxWALSize},
		{"checkpoint_completion_target", "0.9"},
		{"max_worker_processes", strconv.Itoa(p.maxWorkerProcesses)},
		{"max_parallel_workers", strconv.Itoa(p.maxParallelWorkers)},
		{"max_parallel_workers_per_gather", strconv.Itoa(p.maxParallelPerGather)},
		{"random_page_cost", "1.1"},
		{"effective_io_concurrency", "200"},
		{"dynamic_shared_memory_type", "posix"},
		{"password_encryption", "'scram-sha-256'"},
		// The socket directory (an emptyDir of the pod) is the server's uid's
		// alone: pg_hba.conf trusts the socket, never TCP.
		{"unix_socket_permissions", "0700"},
		// pg_dump locks every table it dumps in one transaction: 256 slots
		// per connection let a backup of tens of thousands of tables run.
		{"max_locks_per_transaction", "256"},
		// What initdb writes into the postgresql.conf this file replaces.
		{"datestyle", "'iso, mdy'"},
		{"default_text_search_config", "'pg_catalog.english'"},
		{"timezone", "'UTC'"},
		{"log_timezone", "'UTC'"},
		{"log_destination", "'stderr'"},
		{"log_min_duration_statement", "'1s'"},
		{"log_checkpoints", "on"},
		{"log_lock_waits", "on"},
	}
	if d.ha.enabled() {
		settings = append(settings,
			// pg_rewind needs hint bits in the WAL to bring a former
			// primary back as a standby.
			struct{ name, value string }{"wal_log_hints", "on"},
			// Queries on standbys (backups among them) are not cancelled
			// by the primary's vacuum.
			struct{ name, value string }{"hot_standby_feedback", "on"},
			// WAL a standby or a rewound former primary still needs is
			// kept that long whatever the slots say (a clone's first
			// connection, a former primary's pg_rewind).
			struct{ name, value string }{"wal_keep_size", p.maxWALSize},
			// Every standby streams through a replication slot of its
			// own on the primary (primary_slot_name, instance.sh): a
			// standby down or behind further than wal_keep_size still
			// catches up. A slot never keeps more than a quarter of the
			// data volume: past that, PostgreSQL invalidates it, so a
			// dead standby cannot fill the primary's disk.
			struct{ name, value string }{"max_slot_wal_keep_size", slotWALKeepSize(p)},
			// One slot per other instance (8 at most) and a temporary
			// one per clone under way (pg_basebackup --wal-method=stream).
			struct{ name, value string }{"max_replication_slots", "20"},
			// A standby retries a lost primary every second, and so
			// notices a promotion request or a new primary_conninfo
			// within a second (the default waits 5 s).
			struct{ name, value string }{"wal_retrieve_retry_interval", "'1s'"},
		)
	}
	// Written piece by piece, not with fmt: this runs on every sync.
	var b strings.Builder
	b.Grow(1536)
	for _, s := range []string{"# Managed by metahooks for Database ", d.namespace, "/", d.name, ", size ", string(d.size), ". Edits are overwritten.\n"} {
		b.WriteString(s)
	}
	for _, s := range settings {
		b.WriteString(s.name)
		b.WriteString(" = ")
		b.WriteString(s.value)
		b.WriteByte('\n')
	}
	return b.String()
}

// slotWALKeepSize is max_slot_wal_keep_size: a quarter of the size's data
// volume (the smallest a volume of that size is: spec.storage may only ask
// for more), in MB. With max_wal_size between checkpoints, WAL then takes at
// most about max_wal_size plus this: small 1 GB + 1280 MB of 5 Gi, medium
// 2 GB + 5120 MB of 20 Gi, large 8 GB + 25600 MB of 100 Gi.
func slotWALKeepSize(p preset) string {
	q := p.storageQuantity()
	return strconv.FormatInt(q.Value()/4>>20, 10) + "MB"
}

// hbaConf is pg_hba.conf: the local socket (private to the pod, see
// unix_socket_permissions) is trusted; every TCP connection, loopback
// included, needs a scram-sha-256 password.
const hbaConf = `# Managed by metahooks. Edits are overwritten.
# TYPE  DATABASE  USER  ADDRESS    METHOD
local   all       all              trust
host    all       all   0.0.0.0/0  scram-sha-256
host    all       all   ::/0       scram-sha-256
`

// hbaReplication is added with instances >= 2: replication connections
// (pg_basebackup, streaming), which "all" does not match, for the
// replication role only, with its scram-sha-256 password.
const hbaReplication = `host    replication  ` + replicationUser + `  0.0.0.0/0  scram-sha-256
host    replication  ` + replicationUser + `  ::/0       scram-sha-256
`

// configData is the data of ConfigMap <name>-config.
func configData(d *database) map[string]string {
	hba := hbaConf
	if d.ha.enabled() {
		hba += hbaReplication
	}
	return map[string]string{configFileName: postgresqlConf(d), hbaFileName: hba}
}

// configMap is ConfigMap <name>-config holding postgresql.conf.
func configMap(d *database) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      d.configMapName(),
			Namespace: d.namespace,
			Labels:    d.objectLabels(),
		},
		Data: configData(d),
	}
}

// configHash is the hash of the ConfigMap data that the pod template carries,
// so a configuration change (a new size) rolls the pod.
func configHash(d *database) string {
	return kube.HashStrings(configData(d))
}

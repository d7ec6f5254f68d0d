package database

import (
	"k8s.io/apimachinery/pkg/api/resource"

	dbv1 "metahooks/api/v1"
)

// preset is what one spec.size means. Quantities are written in their
// canonical form ("1", not "1000m") so that the API server stores exactly what
// the hook sends and no sync ever sees a difference that is only notation.
type preset struct {
	cpuRequest, cpuLimit   string
	memory                 string // request and limit: the server is never OOM-killed for bursting
	storage                string // data volume, and the backups volume
	sharedMemory           string // /dev/shm size limit, for parallel query workers
	maxConnections         int
	sharedBuffers          string
	effectiveCacheSize     string
	workMem                string
	maintenanceWorkMem     string
	walBuffers             string
	minWALSize, maxWALSize string
	maxWorkerProcesses     int
	maxParallelWorkers     int
	maxParallelPerGather   int
}

// presets is the size table documented in doc.go and docs/database.md
// (TestSizeTables keeps them the same: -update rewrites them). Memory
// settings follow the usual PostgreSQL guidance: shared_buffers a quarter of
// the memory, effective_cache_size three quarters, and work_mem small enough
// that max_connections sorts at once stay within the limit.
var presets = map[dbv1.DatabaseSize]preset{
	dbv1.SizeSmall: {
		cpuRequest: "250m", cpuLimit: "1", memory: "512Mi", storage: "5Gi", sharedMemory: "128Mi",
		maxConnections: 50, sharedBuffers: "128MB", effectiveCacheSize: "384MB",
		workMem: "2MB", maintenanceWorkMem: "32MB", walBuffers: "4MB",
		minWALSize: "80MB", maxWALSize: "1GB",
		maxWorkerProcesses: 2, maxParallelWorkers: 1, maxParallelPerGather: 1,
	},
	dbv1.SizeMedium: {
		cpuRequest: "1", cpuLimit: "2", memory: "2Gi", storage: "20Gi", sharedMemory: "512Mi",
		maxConnections: 100, sharedBuffers: "512MB", effectiveCacheSize: "1536MB",
		workMem: "4MB", maintenanceWorkMem: "128MB", walBuffers: "16MB",
		minWALSize: "256MB", maxWALSize: "2GB",
		maxWorkerProcesses: 4, maxParallelWorkers: 2, maxParallelPerGather: 1,
	},
	dbv1.SizeLarge: {
		cpuRequest: "2", cpuLimit: "4", memory: "8Gi", storage: "100Gi", sharedMemory: "2Gi",
		maxConnections: 200, sharedBuffers: "2GB", effectiveCacheSize: "6GB",
		workMem: "8MB", maintenanceWorkMem: "512MB", walBuffers: "16MB",
		minWALSize: "1GB", maxWALSize: "8GB",
		maxWorkerProcesses: 8, maxParallelWorkers: 4, maxParallelPerGather: 2,
	},
}

// storageQuantity is the preset's data volume size.
func (p preset) storageQuantity() resource.Quantity { return resource.MustParse(p.storage) }

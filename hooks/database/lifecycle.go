package database

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// serverEnv is what every container of the server pod needs to find PGDATA,
// the configuration and the socket directory. PGHOST points psql at the
// socket and PGPORT names it (postgresql.conf's port), so
// `kubectl exec <pod> -- psql -U postgres` works.
func serverEnv() []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: "PGDATA", Value: pgdataPath},
		{Name: "PG_CONFIG_FILE", Value: configMountPath + "/" + configFileName},
		{Name: "PG_HBA_FILE", Value: configMountPath + "/" + hbaFileName},
		{Name: "PG_RUN_DIR", Value: runMountPath},
		{Name: "PGHOST", Value: runMountPath},
		{Name: "PGPORT", Value: fmt.Sprint(port)},
	}
}

// initContainer is the init container "init": initScript, in the server's
// image, with the roles and passwords of both Secrets. addRestore gives it
// the backup to load.
func initContainer(d *database) corev1.Container {
	env := append(serverEnv(),
		secretEnv("SUPERUSER", d.superuserSecretName(), "username"),
		secretEnv("SUPERUSER_PASSWORD", d.superuserSecretName(), "password"),
		secretEnv("APP_USER", d.secretName(), "username"),
		secretEnv("APP_PASSWORD", d.secretName(), "password"),
		secretEnv("APP_DATABASE", d.secretName(), "database"),
	)
	return corev1.Container{
		Name:    initContainerName,
		Image:   d.image,
		Command: shellCommand(initScript, "init"),
		Env:     env,
		VolumeMounts: []corev1.VolumeMount{
			{Name: dataVolume, MountPath: dataMountPath},
			{Name: configVolume, MountPath: configMountPath, ReadOnly: true},
			{Name: runVolume, MountPath: runMountPath},
			{Name: shmVolume, MountPath: "/dev/shm"},
		},
		TerminationMessagePolicy: corev1.TerminationMessageFallbackToLogsOnError,
		SecurityContext:          containerSecurityContext(),
	}
}

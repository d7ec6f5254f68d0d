package database

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// MinKeyLength is the shortest credentials key Hook accepts: 32 bytes, the
// HMAC-SHA256 block of security.
const MinKeyLength = 32

// The contexts separate these derivations from each other and from any other
// use of the key.
const (
	passwordContext          = "metahooks/database/v1/password"
	superuserPasswordContext = "metahooks/database/v1/superuser-password"
	replicationContext       = "metahooks/database/v1/replication-password"
	fingerprintContext       = "metahooks/database/v1/key-fingerprint"
)

// KeyFingerprint names a credentials key without giving it away: the first
// 8 bytes of HMAC-SHA256(key, its own context), in hex. The service mixes
// it into the Database routes' ETags, so an answer computed with one key is
// never replayed under another.
func KeyFingerprint(key []byte) []byte {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(fingerprintContext))
	sum := mac.Sum(nil)
	return []byte(hex.EncodeToString(sum[:8]))
}

// derivePassword returns the password of the Database namespace/name with
// UID uid: HMAC-SHA256(key, context, namespace, name, uid), base64url without
// padding (43 characters, safe in a URI). Every replica of the service
// holding the same key derives the same password, so nothing needs to be
// stored or shared.
//
// The UID is an input, so a Database created again under a name (a new UID)
// never gets the password of the one before it, which whoever could read that
// one's Secret knows. Data kept from the earlier Database (a Retain deletion,
// a restore) still opens: the init container sets every role's password from
// the current Secrets at every start, over the pod's local socket. A Secret
// once observed is kept as it is (keptSecret), so this only decides the
// passwords of Secrets not created yet.
func derivePassword(key []byte, namespace, name, uid string) string {
	return derive(key, passwordContext, namespace, name, uid)
}

// deriveSuperuserPassword is derivePassword for the superuser, in its own
// context: knowing one password tells nothing about the other.
func deriveSuperuserPassword(key []byte, namespace, name, uid string) string {
	return derive(key, superuserPasswordContext, namespace, name, uid)
}

func derive(key []byte, context, namespace, name, uid string) string {
	mac := hmac.New(sha256.New, key)
	// Length-prefixed fields, so ("a-b", "c") and ("a", "b-c") never collide.
	for _, field := range []string{context, namespace, name, uid} {
		fmt.Fprintf(mac, "%d:%s", len(field), field)
	}
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// credentialsData is the content of a new credentials Secret.
func credentialsData(d *database, password string) map[string][]byte {
	uri := url.URL{
		Scheme: "postgresql",
		User:   url.UserPassword(username, password),
		Host:   fmt.Sprintf("%s:%d", d.host(), port),
		Path:   "/" + databaseName,
	}
	return map[string][]byte{
		"username": []byte(username),
		"password": []byte(password),
		"database": []byte(databaseName),
		"host":     []byte(d.host()),
		"port":     []byte(fmt.Sprint(port)),
		"uri":      []byte(uri.String()),
	}
}

// credentialsSecret is Secret <name>-credentials. Once a Secret was observed
// its data and type are returned as they are (observed is non-nil), so
// credentials are never regenerated or changed, whatever the key or the hook
// version. The Secret is immutable, so the API server refuses any change to
// its data as well.
func credentialsSecret(d *database, key []byte, observed *corev1.Secret) *corev1.Secret {
	return keptSecret(d, d.secretName(), observed, func() map[string][]byte {
		return credentialsData(d, derivePassword(key, d.namespace, d.name, d.uid))
	})
}

// superuserSecret is Secret <name>-superuser, for administration only: the
// superuser postgres and its password, which the backup Jobs use. Kept as
// observed, like credentialsSecret.
func superuserSecret(d *database, key []byte, observed *corev1.Secret) *corev1.Secret {
	return keptSecret(d, d.superuserSecretName(), observed, func() map[string][]byte {
		return map[string][]byte{
			"username": []byte(superuserName),
			"password": []byte(deriveSuperuserPassword(key, d.namespace, d.name, d.uid)),
		}
	})
}

// replicationSecret is Secret <name>-replication (instances >= 2 only): the
// role the standbys clone, stream and rewind with, and its own password, so
// no standby holds the superuser's. Kept as observed, like credentialsSecret.
func replicationSecret(d *database, key []byte, observed *corev1.Secret) *corev1.Secret {
	if !d.ha.enabled() {
		return nil
	}
	return keptSecret(d, d.replicationSecretName(), observed, func() map[string][]byte {
		return map[string][]byte{
			"username": []byte(replicationUser),
			"password": []byte(derive(key, replicationContext, d.namespace, d.name, d.uid)),
		}
	})
}

// keptSecret is the immutable basic-auth Secret name: the observed one's data
// and type when there is one, else newData().
func keptSecret(d *database, name string, observed *corev1.Secret, newData func() map[string][]byte) *corev1.Secret {
	secretType := corev1.SecretTypeBasicAuth
	var data map[string][]byte
	if observed != nil {
		data = observed.Data
		if observed.Type != "" {
			secretType = observed.Type
		}
	} else {
		data = newData()
	}
	return &corev1.Secret{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: d.namespace,
			Labels:    d.objectLabels(),
		},
		Type:      secretType,
		Immutable: ptr.To(true),
		Data:      data,
	}
}

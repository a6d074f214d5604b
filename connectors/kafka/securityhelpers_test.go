package kafka

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/sluicehq/sluice/component"
	"github.com/sluicehq/sluice/component/componenttest"
	"github.com/sluicehq/sluice/schemas"
	"github.com/twmb/franz-go/pkg/kfake"
)

// testCA is a certificate authority made for a test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "sluice test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// issue returns a certificate signed by the CA for the names (DNS names, or IP addresses) as
// PEM (certificate, then key) and as a tls.Certificate.
func (ca *testCA) issue(t *testing.T, client bool, names ...string) ([]byte, tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: names[0]},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if client {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	keyPEM := pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	return append(certPEM, keyPEM...), pair
}

// writeFile writes data to a file of the test's temporary directory and returns its path.
func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// newCluster starts a kfake cluster with the options for one test, reached over TCP at addr.
func newCluster(t *testing.T, opts ...kfake.Opt) (c *kfake.Cluster, addr string) {
	t.Helper()
	c, err := kfake.NewCluster(append([]kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(2)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, c.ListenAddrs()[0]
}

// flowMap renders properties as a YAML flow mapping with quoted values.
func flowMap(props map[string]string) string {
	var parts []string
	for k, v := range props {
		parts = append(parts, fmt.Sprintf("%s: %q", k, v))
	}
	sort.Strings(parts)
	return "{" + strings.Join(parts, ", ") + "}"
}

// secureRoundTrip writes three rows with a WriteToKafka (exactly once) and reads them back with
// a ReadFromKafka, both connecting to the brokers at addr with the properties, and returns the
// first failure.
func secureRoundTrip(t *testing.T, addr string, props map[string]string) error {
	t.Helper()
	topic := fmt.Sprintf("secure-%d", topicSeq.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := env.Build(t, "", "type: WriteToKafka\nconfig:\n"+configAt(addr, topic, "format: JSON", "producer_config_updates: "+flowMap(props)), people)
	if err := b.Err(); err != nil {
		return err
	}
	s := b.Component.(*sink)
	pipeline := fmt.Sprintf("secure-%s-%d", runID, topicSeq.Add(1))
	if _, err := s.Open(ctx, component.SinkInfo{Pipeline: pipeline, Lanes: 1}); err != nil {
		return err
	}
	defer s.Close(ctx)
	if err := s.Writer(0).Write(ctx, batch(0, 3)); err != nil {
		return err
	}
	if err := s.Writer(0).Flush(ctx, 1); err != nil {
		return err
	}
	cp := component.Commit{Checkpoint: component.Checkpoint{Pipeline: pipeline, Epoch: 1, Next: schemas.Offsets{testSource: {0: 3}}}}
	if err := s.Commit(ctx, cp); err != nil {
		return err
	}
	b = env.Build(t, "", "type: ReadFromKafka\nconfig:\n"+configAt(addr, topic, "format: STRING", "auto_offset_reset_config: earliest",
		"consumer_config: "+flowMap(props)))
	if err := b.Err(); err != nil {
		return err
	}
	src := b.Component.(*source)
	src.StopAtEnd()
	if err := src.Open(ctx, nil); err != nil {
		return err
	}
	defer src.Close()
	out := componenttest.Emitted{}
	if err := componenttest.ReadAll(ctx, src, out.Emit); err != nil {
		return err
	}
	var got []string
	for _, r := range out.Rows(component.Main) {
		got = append(got, r[0].(string))
	}
	sort.Strings(got)
	if want := want(3); strings.Join(got, "\n") != strings.Join(want, "\n") {
		return fmt.Errorf("read back %q, want %q", got, want)
	}
	return nil
}

package kafka

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// secret is a password the tests use; no message may contain it.
const secret = "s3cret-Pa55"

func TestParseJAAS(t *testing.T) {
	cases := []struct {
		text    string
		module  string
		options map[string]string
		err     string
	}{
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="` + secret + `";`,
			"org.apache.kafka.common.security.plain.PlainLoginModule", map[string]string{"username": "alice", "password": secret}, ""},
		{"org.apache.kafka.common.security.scram.ScramLoginModule required\n  username=bob\n  password=\"a \\\"quoted\\\" \\\\ pw\"\n  tokenauth=true;",
			"org.apache.kafka.common.security.scram.ScramLoginModule", map[string]string{"username": "bob", "password": `a "quoted" \ pw`, "tokenauth": "true"}, ""},
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="` + secret + `"`,
			"org.apache.kafka.common.security.plain.PlainLoginModule", map[string]string{"username": "u", "password": secret}, ""},
		{secret, "", nil, "must start with a login module"},
		{`org.apache.kafka.common.security.plain.PlainLoginModule username="u" password="` + secret + `";`, "", nil, "control flag"},
		{`org.apache.kafka.common.security.plain.PlainLoginModule required username "u" password="` + secret + `";`, "", nil, "option 1 is not key=value"},
		{`org.apache.kafka.common.security.plain.PlainLoginModule required password="` + secret, "", nil, `the value of option "password" is not a quoted string`},
		{`a.B required username="u"; a.B required password="` + secret + `";`, "", nil, "more than one login module"},
	}
	for _, c := range cases {
		got, err := parseJAAS(c.text)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || strings.Contains(err.Error(), secret) {
				t.Errorf("parseJAAS(%q) = %v, want an error about %q without the password", c.text, err, c.err)
			}
			continue
		}
		if err != nil || got.module != c.module || !equalMaps(got.options, c.options) {
			t.Errorf("parseJAAS(%q) = %+v, %v", c.text, got, err)
		}
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Mistakes in the security properties are config errors at their position; none repeats a
// password, a key or a value read from the environment.
func TestSecurityConfigErrors(t *testing.T) {
	caFile := writeFile(t, "ca.pem", newTestCA(t).pem)
	jks := writeFile(t, "truststore.jks", []byte{0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2})
	notPEM := writeFile(t, "not.pem", []byte("not a certificate"))
	t.Setenv("SLUICE_TEST_JAAS", "PlainLoginModule required password="+secret)
	plainJAAS := `org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"` + secret + `\";`
	cases := []struct {
		name, props string
		want        string
	}{
		{"no mechanism", `security.protocol: SASL_SSL, sasl.jaas.config: "` + plainJAAS + `"`,
			`pipeline.yaml:7:25: ReadFromKafka: security.protocol SASL_SSL needs sasl.mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512`},
		{"gssapi", `security.protocol: SASL_SSL, sasl.mechanism: GSSAPI`,
			`pipeline.yaml:7:51: ReadFromKafka: consumer_config "sasl.mechanism": must be PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (GSSAPI, OAUTHBEARER and AWS_MSK_IAM are not supported), not "GSSAPI"`},
		{"module mismatch", `security.protocol: SASL_SSL, sasl.mechanism: SCRAM-SHA-256, sasl.jaas.config: "` + plainJAAS + `"`,
			`pipeline.yaml:7:84: ReadFromKafka: sasl.mechanism SCRAM-SHA-256 needs the login module org.apache.kafka.common.security.scram.ScramLoginModule in sasl.jaas.config, not org.apache.kafka.common.security.plain.PlainLoginModule`},
		{"no password", `security.protocol: SASL_PLAINTEXT, sasl.mechanism: PLAIN, sasl.username: u`,
			`pipeline.yaml:7:79: ReadFromKafka: SASL PLAIN needs a username and a password: in sasl.jaas.config (username="..." password="...") or as sasl.username and sasl.password`},
		{"both credentials", `security.protocol: SASL_SSL, sasl.mechanism: PLAIN, sasl.username: u, sasl.jaas.config: "` + plainJAAS + `"`,
			`pipeline.yaml:7:94: ReadFromKafka: give the credentials either in sasl.jaas.config or as sasl.username and sasl.password, not both`},
		{"sasl without protocol", `sasl.mechanism: PLAIN, sasl.password: ` + secret,
			`pipeline.yaml:7:22: ReadFromKafka: sasl.mechanism is given, but security.protocol is PLAINTEXT: use SASL_SSL (or SASL_PLAINTEXT)`},
		{"tls without protocol", `security.protocol: SASL_PLAINTEXT, sasl.mechanism: PLAIN, sasl.username: u, sasl.password: p, ssl.truststore.location: ` + caFile,
			`pipeline.yaml:7:125: ReadFromKafka: ssl.truststore.location is given, but security.protocol is SASL_PLAINTEXT: use SSL or SASL_SSL`},
		{"not pem", `security.protocol: SSL, ssl.truststore.location: ` + notPEM,
			`pipeline.yaml:7:55: ReadFromKafka: consumer_config "ssl.truststore.location": file ` + notPEM + ` holds no PEM certificate (-----BEGIN CERTIFICATE-----)`},
		{"jks", `security.protocol: SSL, ssl.truststore.location: ` + jks,
			`pipeline.yaml:7:55: ReadFromKafka: consumer_config "ssl.truststore.location": file ` + jks + ` is a Java JKS key store, which sluice does not read: convert it to PEM (see docs/kafka.md)`},
		{"jks type", `security.protocol: SSL, ssl.truststore.type: JKS`,
			`pipeline.yaml:7:51: ReadFromKafka: consumer_config "ssl.truststore.type": must be PEM (sluice does not read JKS or PKCS12 stores; convert them to PEM, see docs/kafka.md), not "JKS"`},
		{"missing file", `security.protocol: SSL, ssl.truststore.location: /nonexistent/ca.pem`,
			`pipeline.yaml:7:55: ReadFromKafka: consumer_config "ssl.truststore.location": reading the PEM file: open /nonexistent/ca.pem: no such file or directory`},
		{"key password", `security.protocol: SSL, ssl.key.password: ` + secret,
			`pipeline.yaml:7:48: ReadFromKafka: consumer_config "ssl.key.password": encrypted private keys are not supported: give the key unencrypted in PEM (the value is not shown)`},
		{"bad jaas", `security.protocol: SASL_SSL, sasl.mechanism: PLAIN, sasl.jaas.config: "${env:SLUICE_TEST_JAAS}"`,
			`pipeline.yaml:7:76: ReadFromKafka: consumer_config "sasl.jaas.config": must start with a login module, such as org.apache.kafka.common.security.plain.PlainLoginModule (the value is not shown)`},
		{"unset variable", `security.protocol: SASL_SSL, sasl.mechanism: PLAIN, sasl.username: u, sasl.password: "${env:SLUICE_TEST_NOT_SET}"`,
			`pipeline.yaml:7:91: ReadFromKafka: consumer_config "sasl.password": environment variable SLUICE_TEST_NOT_SET is not set`},
		{"host check", `security.protocol: SSL, ssl.endpoint.identification.algorithm: none`,
			`pipeline.yaml:7:69: ReadFromKafka: consumer_config "ssl.endpoint.identification.algorithm": must be https or empty, not "none"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := "type: ReadFromKafka\nconfig:\n  topic: t\n  bootstrap_servers: x:1\n  format: RAW\n  consumer_config:\n    {" + c.props + "}\n"
			got := buildErrors(t, src)
			if got != c.want {
				t.Errorf("diagnostics:\n%s\nwant:\n%s", got, c.want)
			}
			if strings.Contains(got, secret) {
				t.Error("a diagnostic repeats a secret")
			}
		})
	}
	got := buildErrors(t, "type: WriteToKafka\nconfig: {topic: t, bootstrap_servers: embedded, format: JSON, producer_config_updates: {security.protocol: SSL}}\n", people)
	if want := `pipeline.yaml:2:108: WriteToKafka: the embedded broker speaks PLAINTEXT only, not security.protocol SSL`; got != want {
		t.Errorf("embedded: %s, want %s", got, want)
	}
}

// SASL PLAIN and SCRAM over TCP, with the credentials in sasl.jaas.config (also from the
// environment) or as sasl.username / sasl.password. A wrong password fails at once with a
// message that names the user and the mechanism, never the password.
func TestSASL(t *testing.T) {
	_, addr := newCluster(t, kfake.EnableSASL(),
		kfake.Superuser("PLAIN", "alice", secret), kfake.Superuser("SCRAM-SHA-256", "bob", secret), kfake.Superuser("SCRAM-SHA-512", "carol", secret))
	t.Setenv("SLUICE_TEST_KAFKA_PASSWORD", secret)
	jaas := func(module, user, pass string) string {
		return "org.apache.kafka.common.security." + module + " required username=\"" + user + "\" password=\"" + pass + "\";"
	}
	for name, props := range map[string]map[string]string{
		"PLAIN": {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
			"sasl.jaas.config": jaas("plain.PlainLoginModule", "alice", "${env:SLUICE_TEST_KAFKA_PASSWORD}")},
		"SCRAM-SHA-256": {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-256",
			"sasl.username": "bob", "sasl.password": "${env:SLUICE_TEST_KAFKA_PASSWORD}"},
		"SCRAM-SHA-512": {"security.protocol": "sasl_plaintext", "sasl.mechanism": "scram-sha-512",
			"sasl.jaas.config": jaas("scram.ScramLoginModule", "carol", secret)},
	} {
		t.Run(name, func(t *testing.T) {
			if err := secureRoundTrip(t, addr, props); err != nil {
				t.Fatal(err)
			}
		})
	}

	// kfake drops the connection on bad credentials; a Kafka broker answers
	// SASL_AUTHENTICATION_FAILED first, which is what the client sees in production.
	bad, badAddr := newCluster(t, kfake.EnableSASL(), kfake.Superuser("PLAIN", "alice", secret))
	answerBadPlain(bad, "alice", secret)
	err := secureRoundTrip(t, badAddr, map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
		"sasl.jaas.config": jaas("plain.PlainLoginModule", "alice", "wrong-"+secret)})
	if err == nil || strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), `(SASL PLAIN as user "alice")`) ||
		!strings.Contains(err.Error(), "SASL_AUTHENTICATION_FAILED") {
		t.Errorf("wrong password: %v\nwant SASL_AUTHENTICATION_FAILED for user alice, without the password", err)
	}
}

// answerBadPlain makes the kfake cluster answer a PLAIN authentication with other credentials
// than user/pass as Kafka does: SASL_AUTHENTICATION_FAILED with a message.
func answerBadPlain(c *kfake.Cluster, user, pass string) {
	c.ControlKey(int16(kmsg.SASLAuthenticate), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		auth := req.(*kmsg.SASLAuthenticateRequest).SASLAuthBytes
		if bytes.HasPrefix(auth, []byte("n,")) || bytes.Equal(auth, []byte("\x00"+user+"\x00"+pass)) {
			return nil, nil, false // SCRAM, or the right password: kfake handles it
		}
		resp := req.ResponseKind().(*kmsg.SASLAuthenticateResponse)
		resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
		resp.ErrorMessage = kmsg.StringPtr("Authentication failed: Invalid username or password")
		return resp, nil, true
	})
}

// TLS with a CA from a PEM file or inline, hostname verification (on by default, off with an
// empty ssl.endpoint.identification.algorithm, which still verifies the chain), client
// certificates, and SASL over TLS.
func TestTLS(t *testing.T) {
	ca := newTestCA(t)
	trust := writeFile(t, "ca.pem", ca.pem)
	_, byIP := ca.issue(t, false, "127.0.0.1")
	_, ipAddr := newCluster(t, kfake.TLS(&tls.Config{Certificates: []tls.Certificate{byIP}}))
	for name, props := range map[string]map[string]string{
		"file":   {"security.protocol": "SSL", "ssl.truststore.location": trust},
		"inline": {"security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.certificates": string(ca.pem), "ssl.enabled.protocols": "TLSv1.2,TLSv1.3"},
	} {
		t.Run(name, func(t *testing.T) {
			if err := secureRoundTrip(t, ipAddr, props); err != nil {
				t.Fatal(err)
			}
		})
	}
	for _, c := range []struct {
		name  string
		props map[string]string
		want  string
	}{
		{"plaintext", map[string]string{}, "is TLS missing?"},
		{"system roots", map[string]string{"security.protocol": "SSL"}, "certificate signed by unknown authority"},
	} {
		if err := secureRoundTrip(t, ipAddr, c.props); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}

	// A broker whose certificate names another host, that requires client certificates and
	// SASL.
	_, byName := ca.issue(t, false, "broker.example")
	clientPEM, _ := ca.issue(t, true, "sluice-client")
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	_, named := newCluster(t, kfake.EnableSASL(), kfake.Superuser("SCRAM-SHA-512", "carol", secret),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{byName}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}))
	props := map[string]string{"security.protocol": "SASL_SSL", "sasl.mechanism": "SCRAM-SHA-512", "sasl.username": "carol", "sasl.password": secret,
		"ssl.truststore.location": trust, "ssl.keystore.location": writeFile(t, "client.pem", clientPEM), "ssl.endpoint.identification.algorithm": ""}
	if err := secureRoundTrip(t, named, props); err != nil {
		t.Fatalf("SASL_SSL with a client certificate: %v", err)
	}
	keystore := props["ssl.keystore.location"]
	delete(props, "ssl.keystore.location")
	if err := secureRoundTrip(t, named, props); err == nil || !strings.Contains(err.Error(), "certificate required") {
		t.Errorf("without a client certificate: %v, want the broker to require one", err)
	}
	props["ssl.keystore.location"] = keystore
	delete(props, "ssl.endpoint.identification.algorithm")
	if err := secureRoundTrip(t, named, props); err == nil || !strings.Contains(err.Error(), "x509: cannot validate certificate for 127.0.0.1") ||
		strings.Contains(err.Error(), secret) {
		t.Errorf("with hostname verification: %v, want a hostname mismatch", err)
	}
}

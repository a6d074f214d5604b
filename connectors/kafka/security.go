package kafka

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/component"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
)

// security is how a client connects to the brokers, from Java's security properties: TLS
// (security.protocol SSL, SASL_SSL; ssl.*) and SASL (SASL_PLAINTEXT, SASL_SSL; sasl.*).
// Passwords and keys live here only; nothing prints them.
type security struct {
	protocol  string // PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL; "" (PLAINTEXT) until set
	mechanism string // PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512

	jaas       *jaasLogin // from sasl.jaas.config
	user, pass string     // sasl.username, sasl.password
	userSet    bool       // sasl.username or sasl.password was given

	trust      []byte // PEM certificates of the CAs to trust (none: the system's)
	certChain  []byte // PEM client certificate chain (mutual TLS)
	key        []byte // PEM private key of the client certificate
	noHostname bool   // ssl.endpoint.identification.algorithm is empty
	minTLS     uint16 // from ssl.enabled.protocols; 0: Go's default
	maxTLS     uint16

	// Built by finishSecurity.
	tls      *tls.Config
	sasl     sasl.Mechanism
	saslUser string // for messages
}

// The protocols of security.protocol, and the SASL mechanisms sluice speaks.
var (
	securityProtocols = []string{"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"}
	saslMechanisms    = []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"}
)

func (sec *security) usesTLS() bool  { return strings.HasSuffix(sec.protocol, "SSL") }
func (sec *security) usesSASL() bool { return strings.HasPrefix(sec.protocol, "SASL_") }

// securityProperties are the Java properties of TLS and SASL; they join properties.
var securityProperties = map[string]property{
	"security.protocol": {side: bothSides, apply: func(s *settings, v string) error {
		return oneOf(&s.security.protocol, strings.ToUpper(v), securityProtocols...)
	}},
	"sasl.mechanism": {side: bothSides, apply: func(s *settings, v string) error {
		if err := oneOf(&s.security.mechanism, strings.ToUpper(v), saslMechanisms...); err != nil {
			return &valueError{"PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512 (GSSAPI, OAUTHBEARER and AWS_MSK_IAM are not supported)", v}
		}
		return nil
	}},
	"sasl.jaas.config": {side: bothSides, secret: true, apply: func(s *settings, v string) error {
		login, err := parseJAAS(v)
		s.security.jaas = login
		return err
	}},
	"sasl.username": {side: bothSides, apply: func(s *settings, v string) error {
		s.security.user, s.security.userSet = v, true
		return nil
	}},
	"sasl.password": {side: bothSides, secret: true, apply: func(s *settings, v string) error {
		s.security.pass, s.security.userSet = v, true
		return nil
	}},

	"ssl.truststore.location": {side: bothSides, apply: func(s *settings, v string) error {
		pemData, err := readPEMFile(v, "CERTIFICATE")
		s.security.trust = pemData
		return err
	}},
	"ssl.truststore.certificates": {side: bothSides, apply: func(s *settings, v string) error {
		if !hasPEM([]byte(v), "CERTIFICATE") {
			return errors.New("must hold PEM certificates (-----BEGIN CERTIFICATE-----)")
		}
		s.security.trust = []byte(v)
		return nil
	}},
	"ssl.truststore.type":     {side: bothSides, apply: pemStoreType},
	"ssl.truststore.password": {side: bothSides, secret: true, apply: func(*settings, string) error { return nil }},
	"ssl.keystore.location": {side: bothSides, apply: func(s *settings, v string) error {
		pemData, err := readPEMFile(v, "CERTIFICATE")
		if err == nil && !hasPEM(pemData, "PRIVATE KEY") {
			err = fmt.Errorf("file %s holds no unencrypted PEM private key (-----BEGIN PRIVATE KEY-----) next to the certificate", v)
		}
		s.security.certChain, s.security.key = pemData, pemData
		return err
	}},
	"ssl.keystore.certificate.chain": {side: bothSides, apply: func(s *settings, v string) error {
		if !hasPEM([]byte(v), "CERTIFICATE") {
			return errors.New("must hold PEM certificates (-----BEGIN CERTIFICATE-----)")
		}
		s.security.certChain = []byte(v)
		return nil
	}},
	"ssl.keystore.key": {side: bothSides, secret: true, apply: func(s *settings, v string) error {
		if !hasPEM([]byte(v), "PRIVATE KEY") {
			return errors.New("must hold an unencrypted PEM private key (-----BEGIN PRIVATE KEY-----); the value is not shown")
		}
		s.security.key = []byte(v)
		return nil
	}},
	"ssl.keystore.type": {side: bothSides, apply: pemStoreType},
	"ssl.key.password": {side: bothSides, secret: true, apply: func(*settings, string) error {
		return errors.New("encrypted private keys are not supported: give the key unencrypted in PEM (the value is not shown)")
	}},
	"ssl.keystore.password": {side: bothSides, secret: true, apply: func(*settings, string) error { return nil }},
	"ssl.endpoint.identification.algorithm": {side: bothSides, apply: func(s *settings, v string) error {
		switch strings.ToLower(v) {
		case "https":
			s.security.noHostname = false
		case "":
			s.security.noHostname = true
		default:
			return &valueError{"https or empty", v}
		}
		return nil
	}},
	"ssl.enabled.protocols": {side: bothSides, apply: func(s *settings, v string) error {
		s.security.minTLS, s.security.maxTLS = 0, 0
		for _, p := range strings.Split(v, ",") {
			var version uint16
			switch strings.TrimSpace(p) {
			case "TLSv1.2":
				version = tls.VersionTLS12
			case "TLSv1.3":
				version = tls.VersionTLS13
			default:
				return &valueError{"a list of TLSv1.2 and TLSv1.3", v}
			}
			if s.security.minTLS == 0 || version < s.security.minTLS {
				s.security.minTLS = version
			}
			s.security.maxTLS = max(s.security.maxTLS, version)
		}
		return nil
	}},
	"ssl.protocol": {side: bothSides, apply: func(s *settings, v string) error {
		var p string
		return oneOf(&p, v, "TLS", "TLSv1.2", "TLSv1.3")
	}},
}

func init() {
	for name, p := range securityProperties {
		properties[name] = p
	}
}

// pemStoreType accepts the PEM store type and explains that the Java ones are not read.
func pemStoreType(_ *settings, v string) error {
	if !strings.EqualFold(v, "PEM") {
		return &valueError{"PEM (sluice does not read JKS or PKCS12 stores; convert them to PEM, see docs/kafka.md)", v}
	}
	return nil
}

// readPEMFile reads a PEM file that must hold a block of the given type; Java's JKS and PKCS12
// stores are recognised and refused with what to do instead.
func readPEMFile(path, blockType string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading the PEM file: %w", err)
	}
	switch {
	case bytes.HasPrefix(data, []byte{0xfe, 0xed, 0xfe, 0xed}):
		return nil, fmt.Errorf("file %s is a Java JKS key store, which sluice does not read: convert it to PEM (see docs/kafka.md)", path)
	case len(data) > 0 && data[0] == 0x30:
		return nil, fmt.Errorf("file %s is a binary (PKCS12 or DER) store, which sluice does not read: convert it to PEM (see docs/kafka.md)", path)
	case !hasPEM(data, blockType):
		return nil, fmt.Errorf("file %s holds no PEM %s (-----BEGIN %s-----)", path, strings.ToLower(blockType), blockType)
	}
	return data, nil
}

// hasPEM reports whether data holds a PEM block whose type ends with blockType (PRIVATE KEY
// matches RSA PRIVATE KEY and EC PRIVATE KEY too).
func hasPEM(data []byte, blockType string) bool {
	for {
		var b *pem.Block
		b, data = pem.Decode(data)
		if b == nil {
			return false
		}
		if strings.HasSuffix(b.Type, blockType) && !strings.Contains(b.Type, "ENCRYPTED") {
			return true
		}
	}
}

// finishSecurity checks the security properties together, once all are read, and builds the
// TLS config and the SASL mechanism; problems are reported at the property they are about.
// Messages never hold a password or key.
func finishSecurity(ctx *component.Context, key string, s *settings) bool {
	sec := &s.security
	if sec.protocol == "" {
		sec.protocol = "PLAINTEXT"
	}
	fail := func(name, format string, args ...any) bool {
		ctx.Errorf(settingPos(ctx, s, key, name), "%s: %s", ctx.Describe(), fmt.Sprintf(format, args...))
		return false
	}
	if _, ok := embeddedDir(s.bootstrap); ok && sec.protocol != "PLAINTEXT" {
		return fail("security.protocol", "the embedded broker speaks PLAINTEXT only, not security.protocol %s", sec.protocol)
	}
	if name := firstGiven(s, "sasl."); name != "" && !sec.usesSASL() {
		return fail(name, "%s is given, but security.protocol is %s: use SASL_SSL (or SASL_PLAINTEXT)", name, sec.protocol)
	}
	if name := firstGiven(s, "ssl."); name != "" && !sec.usesTLS() {
		return fail(name, "%s is given, but security.protocol is %s: use SSL or SASL_SSL", name, sec.protocol)
	}
	if sec.usesSASL() {
		m, ok := sec.mechanismFor(func(name, msg string) { fail(name, "%s", msg) })
		if !ok {
			return false
		}
		sec.sasl = m
	}
	if sec.usesTLS() {
		cfg, name, err := sec.tlsConfig()
		if err != nil {
			return fail(name, "%v", err)
		}
		sec.tls = cfg
	}
	return true
}

// firstGiven returns the first (by name) property with the prefix that the config gives, or "".
func firstGiven(s *settings, prefix string) string {
	var names []string
	for name := range s.origin {
		if strings.HasPrefix(name, prefix) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return ""
	}
	return names[0]
}

// mechanismFor builds the SASL mechanism from sasl.mechanism and the credentials of
// sasl.jaas.config or sasl.username / sasl.password, reporting problems through fail.
func (sec *security) mechanismFor(fail func(name, msg string)) (sasl.Mechanism, bool) {
	if sec.mechanism == "" {
		fail("security.protocol", fmt.Sprintf("security.protocol %s needs sasl.mechanism: PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", sec.protocol))
		return nil, false
	}
	user, pass, token := sec.user, sec.pass, false
	switch {
	case sec.jaas != nil && sec.userSet:
		fail("sasl.jaas.config", "give the credentials either in sasl.jaas.config or as sasl.username and sasl.password, not both")
		return nil, false
	case sec.jaas != nil:
		want := "PlainLoginModule"
		if sec.mechanism != "PLAIN" {
			want = "ScramLoginModule"
		}
		if !strings.HasSuffix(sec.jaas.module, "."+want) {
			fail("sasl.jaas.config", fmt.Sprintf("sasl.mechanism %s needs the login module org.apache.kafka.common.security.%s.%s in sasl.jaas.config, not %s",
				sec.mechanism, strings.ToLower(strings.TrimSuffix(want, "LoginModule")), want, sec.jaas.module))
			return nil, false
		}
		user, pass, token = sec.jaas.options["username"], sec.jaas.options["password"], strings.EqualFold(sec.jaas.options["tokenauth"], "true")
	}
	if user == "" || pass == "" {
		name := "sasl.jaas.config"
		if sec.jaas == nil {
			name = "sasl.username"
		}
		fail(name, fmt.Sprintf("SASL %s needs a username and a password: in sasl.jaas.config (username=\"...\" password=\"...\") or as sasl.username and sasl.password", sec.mechanism))
		return nil, false
	}
	sec.saslUser = user
	switch sec.mechanism {
	case "PLAIN":
		return plain.Auth{User: user, Pass: pass}.AsMechanism(), true
	case "SCRAM-SHA-256":
		return scram.Auth{User: user, Pass: pass, IsToken: token}.AsSha256Mechanism(), true
	}
	return scram.Auth{User: user, Pass: pass, IsToken: token}.AsSha512Mechanism(), true
}

// tlsConfig builds the TLS config: the trusted CAs (else the system's), the client
// certificate, the versions, and hostname verification unless it is turned off (the chain is
// verified still). A problem comes with the property it is about.
func (sec *security) tlsConfig() (*tls.Config, string, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if sec.minTLS != 0 {
		cfg.MinVersion, cfg.MaxVersion = sec.minTLS, sec.maxTLS
	}
	var roots *x509.CertPool
	if sec.trust != nil {
		roots = x509.NewCertPool()
		if !roots.AppendCertsFromPEM(sec.trust) {
			return nil, "ssl.truststore.location", errors.New("the trusted certificates are not valid PEM certificates")
		}
		cfg.RootCAs = roots
	}
	if sec.certChain != nil || sec.key != nil {
		if sec.certChain == nil || sec.key == nil {
			return nil, "ssl.keystore.location", errors.New("a client certificate needs both its chain and its private key (ssl.keystore.location, or ssl.keystore.certificate.chain and ssl.keystore.key)")
		}
		cert, err := tls.X509KeyPair(sec.certChain, sec.key)
		if err != nil {
			// X509KeyPair's messages describe the PEM blocks, never the key's bytes.
			return nil, "ssl.keystore.location", fmt.Errorf("the client certificate and key do not load: %w", err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	if sec.noHostname {
		// Verify the chain as usual, but not the name: Java's empty
		// ssl.endpoint.identification.algorithm.
		cfg.InsecureSkipVerify = true
		cfg.VerifyConnection = func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return errors.New("the broker sent no certificate")
			}
			opts := x509.VerifyOptions{Roots: roots, Intermediates: x509.NewCertPool()}
			for _, c := range cs.PeerCertificates[1:] {
				opts.Intermediates.AddCert(c)
			}
			_, err := cs.PeerCertificates[0].Verify(opts)
			return err
		}
	}
	return cfg, "", nil
}

// opts returns the client options of the security settings.
func (sec *security) opts() []kgo.Opt {
	var opts []kgo.Opt
	if sec.tls != nil {
		opts = append(opts, kgo.DialTLSConfig(sec.tls))
	}
	if sec.sasl != nil {
		opts = append(opts, kgo.SASL(sec.sasl))
	}
	return opts
}

// jaasLogin is a parsed sasl.jaas.config: one login module and its options.
type jaasLogin struct {
	module  string
	options map[string]string
}

// parseJAAS reads Java's JAAS configuration syntax as Kafka takes it in sasl.jaas.config:
//
//	org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";
//
// Values are quoted (with \" and \\ escapes) or bare words. Errors never repeat the text.
func parseJAAS(text string) (*jaasLogin, error) {
	p := &jaasParser{s: text}
	module := p.word()
	if module == "" || !strings.Contains(module, ".") {
		return nil, errors.New("must start with a login module, such as org.apache.kafka.common.security.plain.PlainLoginModule (the value is not shown)")
	}
	switch flag := strings.ToLower(p.word()); flag {
	case "required", "requisite", "sufficient", "optional":
	default:
		return nil, errors.New("the login module must be followed by its control flag, required (the value is not shown)")
	}
	login := &jaasLogin{module: module, options: map[string]string{}}
	for {
		p.space()
		if p.done() || p.peek() == ';' {
			break
		}
		key := p.word()
		p.space()
		if key == "" || p.done() || p.peek() != '=' {
			return nil, fmt.Errorf("option %d is not key=value (the value is not shown)", len(login.options)+1)
		}
		p.i++
		value, ok := p.value()
		if !ok {
			return nil, fmt.Errorf("the value of option %q is not a quoted string or a word (the value is not shown)", key)
		}
		login.options[key] = value
	}
	if !p.done() {
		p.i++ // the ;
		p.space()
	}
	if !p.done() {
		return nil, errors.New("holds more than one login module, or text after the ';' (the value is not shown)")
	}
	return login, nil
}

type jaasParser struct {
	s string
	i int
}

func (p *jaasParser) done() bool { return p.i >= len(p.s) }
func (p *jaasParser) peek() byte { return p.s[p.i] }

func (p *jaasParser) space() {
	for !p.done() && strings.IndexByte(" \t\r\n", p.peek()) >= 0 {
		p.i++
	}
}

// word reads a run of letters, digits and . _ - $ after spaces.
func (p *jaasParser) word() string {
	p.space()
	start := p.i
	for !p.done() {
		c := p.peek()
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._-$", c) >= 0 {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}

// value reads a quoted string or a bare word.
func (p *jaasParser) value() (string, bool) {
	p.space()
	if p.done() {
		return "", false
	}
	if p.peek() != '"' {
		w := p.word()
		return w, w != ""
	}
	var b strings.Builder
	for p.i++; !p.done(); p.i++ {
		switch c := p.peek(); c {
		case '"':
			p.i++
			return b.String(), true
		case '\\':
			if p.i++; p.done() {
				return "", false
			}
			b.WriteByte(p.peek())
		default:
			b.WriteByte(c)
		}
	}
	return "", false
}

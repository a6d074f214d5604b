package bigquery

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"time"
)

// The client libraries retry a refused connection on their own, silently, until their
// context ends (the table's read: tableTimeout, 2 minutes), so a BigQuery that is down at
// start would hold the run without a word and past --startup-timeout. Open first dials the
// addresses the sink talks to, once each: a service that is down fails Open at once with an
// error that names it (component.Unreachable), and the runner waits for it as for Kafka and
// Iceberg (docs/operations.md, "Services that are down").

// reachTimeout bounds one dial: a host that drops packets answers nothing.
const reachTimeout = 10 * time.Second

// reach dials the BigQuery API and the Storage Write API, through the proxy the environment
// names for them (HTTPS_PROXY, as the clients use), and reports the first that cannot be
// reached.
func (s *sink) reach(ctx context.Context) error {
	api := s.p.cfg.Endpoint
	if api == "" {
		api = "https://bigquery.googleapis.com"
	}
	if err := dialOnce(ctx, api); err != nil {
		return fmt.Errorf("%s: read table %s from the BigQuery API at %s: %w", s.what, s.p.ref, s.p.apiAddress(), err)
	}
	storage, given := s.p.cfg.StorageEndpoint, "storage_endpoint"
	if storage == "" {
		storage, given = "bigquerystorage.googleapis.com:443", "its default address"
	}
	if err := dialOnce(ctx, "https://"+storage); err != nil {
		return fmt.Errorf("%s: reach the BigQuery Storage Write API at %s (%s): %w", s.what, storage, given, err)
	}
	return nil
}

// dialOnce opens and closes one TCP connection to the host of rawURL (or to its proxy).
func dialOnce(ctx context.Context, rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil // not a URL to dial: the client reports it
	}
	if proxy, err := http.ProxyFromEnvironment(&http.Request{URL: u}); err == nil && proxy != nil {
		u = proxy
	}
	host := u.Host
	if u.Port() == "" {
		port := "443"
		if u.Scheme == "http" {
			port = "80"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	d := net.Dialer{Timeout: reachTimeout}
	conn, err := d.DialContext(ctx, "tcp", host)
	if err != nil {
		return err
	}
	return conn.Close()
}

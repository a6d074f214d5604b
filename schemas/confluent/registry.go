package confluent

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/sluicehq/sluice/internal/outage"
	"github.com/twmb/franz-go/pkg/sr"
)

// Registry is a client of a Confluent schema registry (franz-go's pkg/sr). Credentials
// come from the URL's user info or from basic.auth.user.info; they are sent as basic auth and
// never appear in messages: shown is the URLs without them.
type Registry struct {
	cl    *sr.Client
	tr    *http.Transport
	shown string
	watch *outage.Watch // logs the registry's outages
}

// Timeout bounds one request to the registry.
const Timeout = 10 * time.Second

// Attempts is how often a registry request that failed for a reason other than a
// definite answer (an unreachable registry, a server error) is tried.
var Attempts = 3

// ErrUnavailable marks failures of the registry itself (unreachable, a server error,
// credentials refused): they stop the pipeline instead of failing one record.
var ErrUnavailable = errors.New("the schema registry is unavailable")

// authError is the registry refusing the credentials (401) or what they ask for (403): a
// definite answer, not tried again, that stops the pipeline as ErrUnavailable does.
// It shows the URL without credentials, and never the registry's reply, which may quote them.
type authError struct {
	status   int
	at, what string
}

func (e *authError) Error() string {
	hint := "check basic.auth.user.info (or the user info of the URL)"
	if e.status == http.StatusForbidden {
		hint = "the credentials of basic.auth.user.info (or of the URL) are not allowed this"
	}
	return fmt.Sprintf("%d %s from the schema registry at %s, %s: %s", e.status, http.StatusText(e.status), e.at, e.what, hint)
}

// Is makes a refusal ErrUnavailable: the records are not to blame.
func (e *authError) Is(target error) bool { return target == ErrUnavailable }

// NewRegistry returns a client of the registries at urls (comma-separated http or https
// URLs, possibly with user info); userInfo ("user:password", from basic.auth.user.info)
// overrides the URLs' credentials. Its errors never repeat a credential.
func NewRegistry(urls, userInfo string) (*Registry, error) {
	var clean, shown []string
	var user, pass string
	for _, raw := range strings.Split(urls, ",") {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%q is not an http or https URL", redactURL(raw))
		}
		if u.User != nil {
			p, _ := u.User.Password()
			if user != "" && (user != u.User.Username() || pass != p) {
				return nil, errors.New("the URLs carry different credentials")
			}
			user, pass = u.User.Username(), p
			u.User = nil
		}
		clean, shown = append(clean, u.String()), append(shown, u.String())
	}
	if len(clean) == 0 {
		return nil, errors.New("no URL given")
	}
	if userInfo != "" {
		var ok bool
		if user, pass, ok = strings.Cut(userInfo, ":"); !ok {
			return nil, errors.New("basic.auth.user.info must be user:password")
		}
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	opts := []sr.ClientOpt{sr.URLs(clean...), sr.HTTPClient(&http.Client{Transport: tr, Timeout: Timeout}), sr.UserAgent("sluice")}
	if user != "" || pass != "" {
		opts = append(opts, sr.BasicAuth(user, pass))
	}
	cl, err := sr.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("schema registry client: %w", err)
	}
	joined := strings.Join(shown, ",")
	return &Registry{cl: cl, tr: tr, shown: joined, watch: outage.For("schema registry", joined,
		fmt.Sprintf("each request %d times; a record whose schema was not fetched yet stops the pipeline", Attempts))}, nil
}

// redactURL removes the user info from a URL-like text that may not parse, also one without
// a scheme (user:password@host), which url.Parse does not read as user info.
func redactURL(s string) string {
	prefix, rest := "", s
	if scheme, after, ok := strings.Cut(s, "://"); ok {
		prefix, rest = scheme+"://", after
	}
	host, path, hasPath := strings.Cut(rest, "/")
	if i := strings.LastIndex(host, "@"); i >= 0 {
		host = "***@" + host[i+1:]
	}
	if hasPath {
		return prefix + host + "/" + path
	}
	return prefix + host
}

// close drops the idle connections of the client.
func (g *Registry) Close() { g.tr.CloseIdleConnections() }

// notFound reports whether err is the registry's answer that what was asked for does not exist.
func NotFound(err error) bool {
	var re *sr.ResponseError
	return errors.As(err, &re) && re.StatusCode == http.StatusNotFound
}

// do runs a request, trying again after failures that are not a definite answer; those that
// remain wrap ErrUnavailable.
func (g *Registry) do(ctx context.Context, what string, req func(ctx context.Context) error) error {
	var err error
	for attempt := range Attempts {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("schema registry at %s: %s: %w: %w", g.shown, what, ErrUnavailable, ctx.Err())
			case <-time.After(time.Duration(attempt) * 500 * time.Millisecond):
			}
		}
		if err = req(ctx); err == nil {
			g.watch.OK()
			return nil
		}
		var re *sr.ResponseError
		if errors.As(err, &re) && (re.StatusCode == http.StatusUnauthorized || re.StatusCode == http.StatusForbidden) {
			g.watch.OK() // the registry is there; it refuses the credentials, which waiting does not change
			return &authError{status: re.StatusCode, at: g.shown, what: what}
		}
		if errors.As(err, &re) && re.StatusCode < 500 && re.StatusCode != http.StatusTooManyRequests {
			g.watch.OK() // a definite answer: the registry is there
			return fmt.Errorf("schema registry at %s: %s: %w", g.shown, what, err)
		}
		if ctx.Err() == nil {
			g.watch.Failed(err)
		}
	}
	// Unreachable or failing, not refusing: a run may wait for it at start.
	return fmt.Errorf("schema registry at %s: %s: %w: %w", g.shown, what, ErrUnavailable, transient{err})
}

// transient marks a registry failure that waiting may end (outage.ErrUnavailable, which component.ErrUnavailable is): the
// registry could not be reached, or failed (a server error, too many requests); credentials
// it refuses are not one.
type transient struct{ error }

func (t transient) Unwrap() error { return t.error }

// Is makes a transient failure outage.ErrUnavailable (component.ErrUnavailable).
func (transient) Is(target error) bool { return target == outage.ErrUnavailable }

// byID returns the schema with the given id.
func (g *Registry) ByID(ctx context.Context, id int) (sr.Schema, error) {
	var s sr.Schema
	err := g.do(ctx, fmt.Sprintf("fetching schema id %d", id), func(ctx context.Context) error {
		var err error
		s, err = g.cl.SchemaByID(ctx, id)
		return err
	})
	return s, err
}

// latest returns the latest version of subject.
func (g *Registry) Latest(ctx context.Context, subject string) (sr.SubjectSchema, error) {
	var s sr.SubjectSchema
	err := g.do(ctx, fmt.Sprintf("fetching the latest schema of subject %q", subject), func(ctx context.Context) error {
		var err error
		s, err = g.cl.SchemaByVersion(ctx, subject, -1)
		return err
	})
	return s, err
}

// register registers schema under subject (the registry returns the id it already has for the
// same schema), or with lookupOnly only looks it up, and returns its id.
func (g *Registry) Register(ctx context.Context, subject string, schema sr.Schema, lookupOnly bool) (int, error) {
	var id int
	what := fmt.Sprintf("registering the schema under subject %q", subject)
	if lookupOnly {
		what = fmt.Sprintf("looking up the schema under subject %q (auto.register.schemas is false)", subject)
	}
	err := g.do(ctx, what, func(ctx context.Context) error {
		if lookupOnly {
			ss, err := g.cl.LookupSchema(ctx, subject, schema)
			id = ss.ID
			return err
		}
		var err error
		id, err = g.cl.RegisterSchema(ctx, subject, schema, -1, -1)
		return err
	})
	return id, err
}

// subjectFor returns the subject of a topic's values under Confluent's default
// TopicNameStrategy.
func SubjectFor(topic string) string { return topic + "-value" }

// URL returns the registry's URLs without credentials, for messages.
func (g *Registry) URL() string { return g.shown }

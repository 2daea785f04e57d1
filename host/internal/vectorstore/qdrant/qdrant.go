// Package qdrant is the vectorstore.Store kept in a Qdrant server, reached over gRPC
// with the official client.
//
// Each embedding model has its own collection, named by a prefix, the model name made
// safe for Qdrant and a hash of the raw name; it is created on the model's first
// Upsert with that Upsert's dimension and cosine distance. A point's id is the
// chunk's UUID and its payload {"paper_id": "<uuid>"}, indexed as a keyword so
// searches filter and DeletePaper deletes by paper cheaply.
package qdrant

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"
	qc "github.com/qdrant/go-client/qdrant"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lectern-research/lectern/host/internal/vectorstore"
)

// DefaultPrefix starts the name of every collection a Store creates, unless
// WithCollectionPrefix says otherwise.
const DefaultPrefix = "lectern_"

// DefaultPort is Qdrant's gRPC port, used when the URL names none.
const DefaultPort = 6334

const (
	// payloadPaperID is the payload key holding the chunk's paper UUID.
	payloadPaperID = "paper_id"
	// upsertBatch bounds the points sent in one Upsert request, to stay well under
	// gRPC's message size limit whatever the dimension.
	upsertBatch = 256
	// maxModelPart bounds the sanitised model name inside a collection name.
	maxModelPart = 100
)

// Store is a vectorstore.Store backed by Qdrant. It is safe for concurrent use.
type Store struct {
	client *qc.Client
	prefix string

	mu    sync.Mutex
	sizes map[string]uint64 // collection name → vector size, of collections known to exist
}

var _ vectorstore.Store = (*Store)(nil)

// Option configures a Store made by New.
type Option func(*config) error

type config struct {
	prefix string
}

// WithCollectionPrefix sets the prefix of the Store's collection names (default
// DefaultPrefix). It must be 1 to 64 characters of [a-z0-9_]. DeletePaper touches
// every collection whose name starts with it.
func WithCollectionPrefix(prefix string) Option {
	return func(c *config) error {
		if prefix == "" || len(prefix) > 64 || strings.IndexFunc(prefix, func(r rune) bool { return !nameRune(r) }) >= 0 {
			return fmt.Errorf("qdrant: collection prefix %q must be 1 to 64 characters of [a-z0-9_]", prefix)
		}
		c.prefix = prefix
		return nil
	}
}

// New returns a Store talking to the Qdrant whose gRPC endpoint is rawURL, such as
// "http://localhost:6334" (https means TLS; the port defaults to 6334). apiKey may be
// empty. No connection is made until the first call.
func New(rawURL, apiKey string, opts ...Option) (*Store, error) {
	cfg := config{prefix: DefaultPrefix}
	for _, o := range opts {
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	host, port, useTLS, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	client, err := qc.NewClient(&qc.Config{
		Host:   host,
		Port:   port,
		APIKey: apiKey,
		UseTLS: useTLS,
		// The check is a blocking health call at construction that only logs; skip it
		// so New never waits on the network.
		SkipCompatibilityCheck: true,
	})
	if err != nil {
		return nil, fmt.Errorf("qdrant: connect to %s:%d: %w", host, port, err)
	}
	return &Store{client: client, prefix: cfg.prefix, sizes: make(map[string]uint64)}, nil
}

// Close closes the connections to Qdrant.
func (s *Store) Close() error {
	if err := s.client.Close(); err != nil {
		return fmt.Errorf("qdrant: close: %w", err)
	}
	return nil
}

// Upsert adds or replaces the vectors of items under model, creating the model's
// collection with the items' dimension if it does not exist yet.
func (s *Store) Upsert(ctx context.Context, model string, items []vectorstore.Item) error {
	if err := vectorstore.ValidateUpsert(model, items); err != nil {
		return err
	}
	if len(items) == 0 {
		return nil
	}
	name := collectionName(s.prefix, model)
	dim := uint64(len(items[0].Vector))
	for attempt := 0; ; attempt++ {
		err := s.upsert(ctx, name, dim, items)
		if attempt == 0 && isNotFound(err) {
			// The collection was dropped behind our back: forget it and create it anew.
			s.forget(name)
			continue
		}
		return err
	}
}

func (s *Store) upsert(ctx context.Context, name string, dim uint64, items []vectorstore.Item) error {
	size, err := s.ensureCollection(ctx, name, dim)
	if err != nil {
		return err
	}
	if size != dim {
		return fmt.Errorf("qdrant: collection %s: %w: it holds %d dimensions, the items have %d", name, vectorstore.ErrDimension, size, dim)
	}
	for start := 0; start < len(items); start += upsertBatch {
		batch := items[start:min(start+upsertBatch, len(items))]
		points := make([]*qc.PointStruct, len(batch))
		for i, it := range batch {
			points[i] = &qc.PointStruct{
				Id:      qc.NewIDUUID(it.ChunkID.String()),
				Vectors: qc.NewVectorsDense(it.Vector),
				Payload: map[string]*qc.Value{payloadPaperID: qc.NewValueString(it.PaperID.String())},
			}
		}
		_, err := s.client.Upsert(ctx, &qc.UpsertPoints{
			CollectionName: name,
			Wait:           qc.PtrOf(true),
			Points:         points,
		})
		if isDimensionErr(err) {
			// The collection was re-created with another size since we cached it.
			s.forget(name)
			return fmt.Errorf("qdrant: upsert into %s: %w: %w", name, vectorstore.ErrDimension, err)
		}
		if err != nil {
			return fmt.Errorf("qdrant: upsert into %s: %w", name, err)
		}
	}
	return nil
}

// Delete removes the vectors of these chunks under model; unknown ids and an unknown
// model are ignored.
func (s *Store) Delete(ctx context.Context, model string, chunkIDs []uuid.UUID) error {
	if err := vectorstore.ValidateUpsert(model, nil); err != nil {
		return err
	}
	if len(chunkIDs) == 0 {
		return nil
	}
	name := collectionName(s.prefix, model)
	if _, ok, err := s.collectionSize(ctx, name); err != nil || !ok {
		return err
	}
	ids := make([]*qc.PointId, len(chunkIDs))
	for i, id := range chunkIDs {
		ids[i] = qc.NewIDUUID(id.String())
	}
	_, err := s.client.Delete(ctx, &qc.DeletePoints{
		CollectionName: name,
		Wait:           qc.PtrOf(true),
		Points:         qc.NewPointsSelectorIDs(ids),
	})
	if isNotFound(err) {
		s.forget(name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("qdrant: delete from %s: %w", name, err)
	}
	return nil
}

// DeletePaper removes every vector of a paper from every collection whose name starts
// with the Store's prefix.
func (s *Store) DeletePaper(ctx context.Context, paperID uuid.UUID) error {
	names, err := s.client.ListCollections(ctx)
	if err != nil {
		return fmt.Errorf("qdrant: list collections: %w", err)
	}
	filter := &qc.Filter{Must: []*qc.Condition{qc.NewMatchKeyword(payloadPaperID, paperID.String())}}
	for _, name := range names {
		if !strings.HasPrefix(name, s.prefix) {
			continue
		}
		_, err := s.client.Delete(ctx, &qc.DeletePoints{
			CollectionName: name,
			Wait:           qc.PtrOf(true),
			Points:         qc.NewPointsSelectorFilter(filter),
		})
		if isNotFound(err) {
			s.forget(name)
			continue
		}
		if err != nil {
			return fmt.Errorf("qdrant: delete paper %s from %s: %w", paperID, name, err)
		}
	}
	return nil
}

// Search returns at most k chunks of model nearest to query by cosine, best first.
// A model with no collection yet has no hits.
func (s *Store) Search(ctx context.Context, model string, query []float32, k int, f vectorstore.Filter) ([]vectorstore.Hit, error) {
	if err := vectorstore.ValidateSearch(model, query, k); err != nil {
		return nil, err
	}
	name := collectionName(s.prefix, model)
	size, ok, err := s.collectionSize(ctx, name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return []vectorstore.Hit{}, nil
	}
	if size != uint64(len(query)) {
		return nil, fmt.Errorf("qdrant: collection %s: %w: it holds %d dimensions, the query has %d", name, vectorstore.ErrDimension, size, len(query))
	}
	req := &qc.QueryPoints{
		CollectionName: name,
		Query:          qc.NewQueryDense(query),
		Limit:          qc.PtrOf(uint64(k)),
		WithPayload:    qc.NewWithPayloadInclude(payloadPaperID),
	}
	if len(f.PaperIDs) > 0 {
		ids := make([]string, len(f.PaperIDs))
		for i, id := range f.PaperIDs {
			ids[i] = id.String()
		}
		req.Filter = &qc.Filter{Must: []*qc.Condition{qc.NewMatchKeywords(payloadPaperID, ids...)}}
	}
	points, err := s.client.Query(ctx, req)
	switch {
	case isNotFound(err):
		s.forget(name)
		return []vectorstore.Hit{}, nil
	case isDimensionErr(err):
		// The collection was re-created with another size since we cached it.
		s.forget(name)
		return nil, fmt.Errorf("qdrant: query %s: %w: %w", name, vectorstore.ErrDimension, err)
	case err != nil:
		return nil, fmt.Errorf("qdrant: query %s: %w", name, err)
	}
	hits := make([]vectorstore.Hit, 0, len(points))
	for _, p := range points {
		chunkID, err := uuid.Parse(p.GetId().GetUuid())
		if err != nil {
			return nil, fmt.Errorf("qdrant: collection %s holds point %v, not a chunk UUID: %w", name, p.GetId(), err)
		}
		paperID, err := uuid.Parse(p.GetPayload()[payloadPaperID].GetStringValue())
		if err != nil {
			return nil, fmt.Errorf("qdrant: point %s in %s has no valid paper_id: %w", chunkID, name, err)
		}
		hits = append(hits, vectorstore.Hit{ChunkID: chunkID, PaperID: paperID, Score: p.GetScore()})
	}
	return hits, nil
}

// ensureCollection returns the vector size of collection name, creating it with size
// dim (cosine distance, a keyword index on paper_id) if it does not exist.
func (s *Store) ensureCollection(ctx context.Context, name string, dim uint64) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if size, ok := s.sizes[name]; ok {
		return size, nil
	}
	size, ok, err := s.fetchSize(ctx, name)
	if err != nil {
		return 0, err
	}
	if !ok {
		err := s.client.CreateCollection(ctx, &qc.CreateCollection{
			CollectionName: name,
			VectorsConfig:  qc.NewVectorsConfig(&qc.VectorParams{Size: dim, Distance: qc.Distance_Cosine}),
		})
		switch {
		case err != nil && (status.Code(err) == codes.AlreadyExists || strings.Contains(strings.ToLower(err.Error()), "already exists")):
			// Another process created it first: use what it made.
			if size, ok, err = s.fetchSize(ctx, name); err != nil {
				return 0, err
			}
			if !ok {
				return 0, fmt.Errorf("qdrant: collection %s exists yet cannot be read", name)
			}
		case err != nil:
			return 0, fmt.Errorf("qdrant: create collection %s: %w", name, err)
		default:
			size = dim
		}
		// Creating an existing index is a no-op, so a racing creator does no harm.
		if _, err := s.client.CreateFieldIndex(ctx, &qc.CreateFieldIndexCollection{
			CollectionName: name,
			Wait:           qc.PtrOf(true),
			FieldName:      payloadPaperID,
			FieldType:      qc.FieldType_FieldTypeKeyword.Enum(),
		}); err != nil {
			return 0, fmt.Errorf("qdrant: index paper_id of %s: %w", name, err)
		}
	}
	s.sizes[name] = size
	return size, nil
}

// collectionSize returns the vector size of collection name and whether it exists.
func (s *Store) collectionSize(ctx context.Context, name string) (uint64, bool, error) {
	s.mu.Lock()
	size, ok := s.sizes[name]
	s.mu.Unlock()
	if ok {
		return size, true, nil
	}
	size, ok, err := s.fetchSize(ctx, name)
	if err != nil || !ok {
		return 0, false, err
	}
	s.mu.Lock()
	s.sizes[name] = size
	s.mu.Unlock()
	return size, true, nil
}

// fetchSize asks Qdrant for the vector size of collection name and whether it exists.
func (s *Store) fetchSize(ctx context.Context, name string) (uint64, bool, error) {
	info, err := s.client.GetCollectionInfo(ctx, name)
	if isNotFound(err) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("qdrant: read collection %s: %w", name, err)
	}
	params := info.GetConfig().GetParams().GetVectorsConfig().GetParams()
	if params == nil || params.GetSize() == 0 {
		return 0, false, fmt.Errorf("qdrant: collection %s has no single unnamed dense vector", name)
	}
	return params.GetSize(), true, nil
}

// forget drops the cached size of collection name.
func (s *Store) forget(name string) {
	s.mu.Lock()
	delete(s.sizes, name)
	s.mu.Unlock()
}

// isNotFound reports whether err is Qdrant's answer about a missing collection.
func isNotFound(err error) bool {
	if err == nil {
		return false
	}
	if status.Code(err) == codes.NotFound {
		return true
	}
	// Some versions answer a missing collection with InvalidArgument or Unknown and
	// say so in the message.
	var st interface{ GRPCStatus() *status.Status }
	if errors.As(err, &st) {
		msg := strings.ToLower(st.GRPCStatus().Message())
		return strings.Contains(msg, "not found") || strings.Contains(msg, "doesn't exist") || strings.Contains(msg, "does not exist")
	}
	return false
}

// isDimensionErr reports whether err is Qdrant refusing a vector of the wrong size.
func isDimensionErr(err error) bool {
	return status.Code(err) == codes.InvalidArgument && strings.Contains(strings.ToLower(err.Error()), "dimension")
}

// collectionName is the Qdrant collection holding model's vectors: prefix, the model
// name lowercased with every rune outside [a-z0-9_] replaced by '_' (at most 100 of
// them), '_' and 8 hex digits of the FNV-1a hash of the raw name, so models that
// sanitise alike still differ.
func collectionName(prefix, model string) string {
	var b strings.Builder
	b.WriteString(prefix)
	n := 0
	for _, r := range strings.ToLower(model) {
		if n == maxModelPart {
			break
		}
		if !nameRune(r) {
			r = '_'
		}
		b.WriteRune(r)
		n++
	}
	h := fnv.New32a()
	h.Write([]byte(model))
	fmt.Fprintf(&b, "_%08x", h.Sum32())
	return b.String()
}

func nameRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_'
}

// parseURL splits a Qdrant gRPC URL such as "http://localhost:6334" into host, port
// and whether to use TLS (https).
func parseURL(rawURL string) (host string, port int, useTLS bool, err error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return "", 0, false, fmt.Errorf("qdrant: parse URL %q: %w", rawURL, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
	case "https":
		useTLS = true
	default:
		return "", 0, false, fmt.Errorf("qdrant: URL %q must start with http:// or https://", rawURL)
	}
	host = u.Hostname()
	if host == "" {
		return "", 0, false, fmt.Errorf("qdrant: URL %q names no host", rawURL)
	}
	if u.User != nil || (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return "", 0, false, fmt.Errorf("qdrant: URL %q must be only scheme, host and port (pass the API key apart)", rawURL)
	}
	port = DefaultPort
	if p := u.Port(); p != "" {
		port, err = strconv.Atoi(p)
		if err != nil || port < 1 || port > 65535 {
			return "", 0, false, fmt.Errorf("qdrant: URL %q has an invalid port", rawURL)
		}
	}
	// The client joins host and port as "host:port", so an IPv6 literal keeps its
	// brackets.
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return host, port, useTLS, nil
}

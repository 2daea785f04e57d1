package search

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/sdk/paper"
	"github.com/lectern-research/lectern/sdk/protocol"
	"github.com/lectern-research/lectern/sdk/source"
)

// ErrUnresolved means no running source knows the identifier.
var ErrUnresolved = errors.New("search: no source knows this paper")

// ErrSourcesUnreachable means a source that could look the identifier up failed or
// did not answer in time, and no other source found the paper. When every source
// failed, nobody said whether the paper exists; when some answered that they do not
// know it, the error is ErrUnresolved too, and the one that failed might have known
// it: either way it is worth asking again later.
var ErrSourcesUnreachable = errors.New("search: the paper sources could not be reached")

// healthTimeout bounds writing source health after a lookup, on a context of its
// own: the lookup's deadline may have passed, and its outcome must still be kept.
const healthTimeout = 5 * time.Second

// Resolve finds a paper the corpus does not hold yet by DOI or arXiv id, asking the
// running sources one after another (in plugins.toml order) until one knows it, and
// adds its public record to the corpus. It returns the corpus id.
func (s *Service) Resolve(ctx context.Context, userID uuid.UUID, doi, arxivID string) (uuid.UUID, error) {
	ids := paper.IDs{DOI: doi, ArXivID: arxivID}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	var lastErr error
	answered := false
	for _, n := range s.sources() {
		g, ok := n.Searcher.(Getter)
		if !ok {
			continue
		}
		start := time.Now()
		resp, err := g.Get(ctx, &source.GetRequest{IDs: ids})
		o := outcome{report: SourceReport{Name: n.Name, Status: StatusOK, DurationMS: time.Since(start).Milliseconds()}}
		switch {
		case err == nil:
			answered = true
		case errors.Is(err, protocol.ErrNotFound), errors.Is(err, protocol.ErrBadRequest):
			// The source answered: it does not know this identifier.
			answered = true
			continue
		case errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil:
			o.report.Status, o.report.Error = StatusTimeout, fmt.Sprintf("no answer within %s", s.timeout)
			lastErr = err
		default:
			o.report.Status, o.report.Error = StatusFailed, failureText(err)
			lastErr = err
		}
		// The lookup's deadline may have passed; the health is written regardless.
		hctx, hcancel := context.WithTimeout(context.WithoutCancel(ctx), healthTimeout)
		herr := s.recordHealth(hctx, userID, []outcome{o})
		hcancel()
		if herr != nil {
			return uuid.Nil, herr
		}
		if err != nil {
			continue
		}
		var id uuid.UUID
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			var err error
			id, _, err = papers.UpsertTx(ctx, tx, Input(resp.Paper, n.Name), &userID)
			return err
		})
		if err != nil {
			return uuid.Nil, fmt.Errorf("search: resolve: %w", err)
		}
		return id, nil
	}
	if lastErr != nil && !answered {
		return uuid.Nil, fmt.Errorf("%w: %w", ErrSourcesUnreachable, lastErr)
	}
	if lastErr != nil {
		return uuid.Nil, fmt.Errorf("%w, %w: %w", ErrUnresolved, ErrSourcesUnreachable, lastErr)
	}
	return uuid.Nil, ErrUnresolved
}

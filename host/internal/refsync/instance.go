package refsync

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lectern-research/lectern/host/internal/papers"
	"github.com/lectern-research/lectern/host/internal/search"
	"github.com/lectern-research/lectern/sdk/refmanager"
)

// InstanceAccount is what the instance's sync runs with: the admin's key and the
// group libraries it reads for everyone.
type InstanceAccount struct {
	Credentials map[string]string
	// Libraries are the group libraries to sync ("groups/42").
	Libraries []string
}

// ErrInstanceNotConfigured means no admin has set up group libraries for the
// instance.
var ErrInstanceNotConfigured = errors.New("no Zotero group library is set up for this instance: an admin can add one under Admin, Zotero")

// MaxInstanceLibraries bounds the group libraries one instance syncs.
const MaxInstanceLibraries = 20

// RunInstance syncs the instance's group libraries once, each on its own
// cursor, and records each outcome. What they bring is an instance-level
// discovery (discovered_by NULL): a shared paper everyone can find, in nobody's
// library. Notes stay in Zotero: a note is a person's, and these are nobody's.
// A library that fails does not stop the others; the first error is returned.
func (s *Syncer) RunInstance(ctx context.Context) ([]Report, error) {
	if s.Instance == nil {
		return nil, ErrInstanceNotConfigured
	}
	acct, err := s.Instance(ctx)
	if err != nil {
		return nil, err
	}
	if len(acct.Libraries) == 0 {
		return nil, ErrInstanceNotConfigured
	}
	m, err := s.Manager()
	if err != nil {
		return nil, fmt.Errorf("%w (%w)", ErrNoPlugin, err)
	}
	var reports []Report
	var first error
	for _, lib := range acct.Libraries {
		rep, err := s.runInstanceLibrary(ctx, m, acct.Credentials, lib)
		words := ""
		if err != nil {
			words = failureWords(err)
			s.logFailure("instance", lib, err)
			if first == nil {
				first = fmt.Errorf("library %s: %w", lib, err)
			}
		}
		if rerr := recordInstanceRun(context.WithoutCancel(ctx), s.Pool, lib, s.now(), rep, words); rerr != nil && first == nil {
			first = rerr
		}
		reports = append(reports, rep)
	}
	return reports, first
}

// runInstanceLibrary brings one group library's changes since its cursor into
// the corpus (pull).
func (s *Syncer) runInstanceLibrary(ctx context.Context, m refmanager.Manager, creds map[string]string, lib string) (Report, error) {
	return s.pull(ctx, m, creds, lib, groupLibrary{pool: s.Pool, lib: lib})
}

// groupLibrary is a pull of a group library into the instance's corpus: no notes
// (they stay in Zotero).
type groupLibrary struct {
	pool *pgxpool.Pool
	lib  string
}

func (g groupLibrary) since(ctx context.Context) (int64, error) {
	return instanceVersionOf(ctx, g.pool, g.lib)
}

func (groupLibrary) read(context.Context, refmanager.Manager, map[string]string, []refmanager.Item) error {
	return nil
}

func (g groupLibrary) known(ctx context.Context, tx pgx.Tx, key string) (bool, error) {
	_, known, err := instanceLinkTx(ctx, tx, g.lib, key)
	return known, err
}

func (g groupLibrary) apply(ctx context.Context, tx pgx.Tx, it refmanager.Item, rep *Report) error {
	return applyInstance(ctx, tx, g.lib, it, rep)
}

func (g groupLibrary) advance(ctx context.Context, tx pgx.Tx, through int64) error {
	return advanceInstanceTx(ctx, tx, g.lib, through)
}

// applyInstance makes one listed item of a group library true in the corpus. A
// remote deletion forgets the item but keeps the paper: it is shared, and
// whoever saved it to their library keeps it there.
func applyInstance(ctx context.Context, tx pgx.Tx, lib string, it refmanager.Item, rep *Report) error {
	prior, known, err := instanceLinkTx(ctx, tx, lib, it.Key)
	if err != nil {
		return err
	}
	if it.Deleted {
		if known {
			rep.Removed++
			return dropInstanceLinkTx(ctx, tx, lib, it.Key)
		}
		return nil
	}
	if strings.TrimSpace(it.Paper.Title) == "" {
		// A standalone note or attachment listed as an item: nothing to discover.
		return nil
	}
	paperID, isNew, err := papers.UpsertTx(ctx, tx, search.Input(it.Paper, "zotero"), nil)
	if err != nil {
		return fmt.Errorf("refsync: item %s (%q): %w", it.Key, it.Paper.Title, err)
	}
	switch {
	case !known:
		if isNew {
			rep.Added++
		} else {
			rep.Updated++
		}
	case prior.version != it.Version || prior.paperID != paperID:
		rep.Updated++
	}
	return putInstanceLinkTx(ctx, tx, lib, it.Key, paperID, it.Version)
}

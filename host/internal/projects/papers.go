package projects

import (
	"context"
	"fmt"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// PaperIDs returns the ids of the papers linked to userID's project; ErrNotFound
// when the project is not theirs or does not exist. (Other areas, rag's project
// scope among them, ask this instead of reading project_papers.)
func PaperIDs(ctx context.Context, pool *pgxpool.Pool, userID, projectID uuid.UUID) ([]uuid.UUID, error) {
	var ok bool
	if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projects WHERE id = $2 AND user_id = $1)`,
		userID, projectID).Scan(&ok); err != nil {
		return nil, fmt.Errorf("projects: paper ids: %w", err)
	}
	if !ok {
		return nil, ErrNotFound
	}
	rows, err := pool.Query(ctx, `SELECT paper_id FROM project_papers WHERE project_id = $2 AND user_id = $1`, userID, projectID)
	if err != nil {
		return nil, fmt.Errorf("projects: paper ids: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[uuid.UUID])
	if err != nil {
		return nil, fmt.Errorf("projects: paper ids: %w", err)
	}
	return ids, nil
}

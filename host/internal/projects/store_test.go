package projects

import (
	"context"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/lectern-research/lectern/host/internal/dbtest"
)

// TestProjectListCountsOpenTasksFromAnIndex checks that the projects list counts
// each project's open tasks through the partial index of open tasks (migration
// 0026), and that the counts are right. Once vacuum has marked the tasks' pages
// visible, the count reads the index alone instead of a heap page a task.
func TestProjectListCountsOpenTasksFromAnIndex(t *testing.T) {
	t.Parallel()
	pool := dbtest.NewDB(t)
	ctx := context.Background()
	_, err := pool.Exec(ctx, `
		INSERT INTO users (email) SELECT 'user' || g || '@example.org' FROM generate_series(1, 200) g;
		INSERT INTO projects (user_id, name) SELECT u.id, 'Project ' || g FROM users u, generate_series(1, 8) g;
		INSERT INTO tasks (user_id, project_id, title, status, completed_at)
		SELECT p.user_id, p.id, 'Task ' || g, CASE WHEN g <= 3 THEN 'done' ELSE 'todo' END, CASE WHEN g <= 3 THEN now() END
		  FROM projects p, generate_series(1, 10) g ORDER BY random()`)
	require.NoError(t, err)
	_, err = pool.Exec(ctx, `VACUUM ANALYZE`)
	require.NoError(t, err)
	var owner uuid.UUID
	require.NoError(t, pool.QueryRow(ctx, `SELECT id FROM users ORDER BY email LIMIT 1`).Scan(&owner))

	plan := dbtest.Plan(t, pool, listProjectsSQL, owner, "")
	require.Regexp(t, `Scan (using|on) tasks_project_open`, plan, "the open tasks are counted from their index:\n%s", plan)

	list, err := New(pool).Projects(ctx, owner, "")
	require.NoError(t, err)
	require.Len(t, list, 8)
	for _, p := range list {
		require.Equal(t, 7, p.OpenTasks, "project %s", p.Name)
	}
}

package app

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func decode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(body, &v), string(body))
	return v
}

func TestProjectsTasksMilestones(t *testing.T) {
	t.Parallel()
	f := newCorpus(t)
	b, ann := f.b, f.ann
	type obj = map[string]any

	rec := b.do(t, req{method: http.MethodPost, path: "/api/projects", cookie: ann, body: obj{"name": "  Thesis ", "deadline": "2027-06-30", "color": "#3366CC"}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	p := decode[obj](t, rec.Body.Bytes())
	require.Equal(t, "Thesis", p["name"])
	require.Equal(t, "active", p["status"])
	require.Equal(t, "2027-06-30", p["deadline"])
	require.Equal(t, "#3366cc", p["color"])
	pid := p["id"].(string)

	rec = b.do(t, req{method: http.MethodPost, path: "/api/projects", cookie: ann, body: obj{"name": "", "status": "frozen", "color": "blue", "deadline": "June", "extra": 1}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	body := decode[struct {
		Fields []struct{ Field string } `json:"fields"`
	}](t, rec.Body.Bytes())
	var fields []string
	for _, fe := range body.Fields {
		fields = append(fields, fe.Field)
	}
	require.Equal(t, []string{"color", "deadline", "extra", "name", "status"}, fields, "every bad field is named")

	rec = b.do(t, req{method: http.MethodPatch, path: "/api/projects/" + pid, cookie: ann, body: obj{"status": "paused", "color": nil}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	p = decode[obj](t, rec.Body.Bytes())
	require.Equal(t, "paused", p["status"])
	require.NotContains(t, p, "color", "null clears")
	require.Equal(t, "Thesis", p["name"], "absent fields stay")

	// Tasks: done stamps completed_at, reopening clears it.
	rec = b.do(t, req{method: http.MethodPost, path: "/api/projects/" + pid + "/tasks", cookie: ann, body: obj{"title": "Write chapter 1", "priority": 1, "due_at": "2027-01-15T17:00:00Z"}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	task := decode[obj](t, rec.Body.Bytes())
	require.Equal(t, "todo", task["status"])
	tid := task["id"].(string)
	rec = b.do(t, req{method: http.MethodPost, path: "/api/projects/" + pid + "/tasks", cookie: ann, body: obj{"title": "Outline", "parent_task_id": tid}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())

	rec = b.do(t, req{method: http.MethodPatch, path: "/api/tasks/" + tid, cookie: ann, body: obj{"status": "done"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NotNil(t, decode[obj](t, rec.Body.Bytes())["completed_at"])
	rec = b.do(t, req{method: http.MethodPatch, path: "/api/tasks/" + tid, cookie: ann, body: obj{"status": "in_progress"}})
	require.Nil(t, decode[obj](t, rec.Body.Bytes())["completed_at"])
	rec = b.do(t, req{method: http.MethodPatch, path: "/api/tasks/" + tid, cookie: ann, body: obj{"priority": 9}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)

	rec = b.do(t, req{method: http.MethodGet, path: "/api/projects/" + pid + "/tasks", cookie: ann})
	require.Len(t, decode[struct{ Items []obj }](t, rec.Body.Bytes()).Items, 2)

	// Milestones.
	rec = b.do(t, req{method: http.MethodPost, path: "/api/projects/" + pid + "/milestones", cookie: ann, body: obj{"title": "Draft to supervisor", "due_date": "2027-03-01"}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	mid := decode[obj](t, rec.Body.Bytes())["id"].(string)
	rec = b.do(t, req{method: http.MethodPatch, path: "/api/milestones/" + mid, cookie: ann, body: obj{"completed": true}})
	require.NotNil(t, decode[obj](t, rec.Body.Bytes())["completed_at"])
	rec = b.do(t, req{method: http.MethodPost, path: "/api/projects/" + pid + "/milestones", cookie: ann, body: obj{"title": "No date"}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)

	rec = b.do(t, req{method: http.MethodGet, path: "/api/projects/" + pid, cookie: ann})
	p = decode[obj](t, rec.Body.Bytes())
	require.EqualValues(t, 2, p["open_tasks"])

	// Deleting the project takes its tasks and milestones with it.
	rec = b.do(t, req{method: http.MethodDelete, path: "/api/projects/" + pid, cookie: ann})
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Equal(t, http.StatusNotFound, b.do(t, req{method: http.MethodGet, path: "/api/tasks/" + tid, cookie: ann}).Code)
	require.Equal(t, http.StatusNotFound, b.do(t, req{method: http.MethodGet, path: "/api/milestones/" + mid, cookie: ann}).Code)
	require.Equal(t, http.StatusNotFound, b.do(t, req{method: http.MethodGet, path: "/api/projects/not-a-uuid", cookie: ann}).Code)
}

func TestLinkingAPaperAddsItToTheLibraryInOneTransaction(t *testing.T) {
	t.Parallel()
	f := newCorpus(t)
	b, ann := f.b, f.ann
	ctx := context.Background()
	rec := b.do(t, req{method: http.MethodPost, path: "/api/projects", cookie: ann, body: map[string]any{"name": "Review"}})
	pid := decode[map[string]any](t, rec.Body.Bytes())["id"].(string)
	inLibrary := func(title string) bool {
		var ok bool
		require.NoError(t, b.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM user_library WHERE user_id = $1 AND paper_id = $2)`,
			f.annID, f.ids[title]).Scan(&ok))
		return ok
	}
	require.False(t, inLibrary("P6"))

	rec = b.do(t, req{method: http.MethodPost, path: "/api/projects/" + pid + "/papers", cookie: ann, body: map[string]any{"paper_id": f.ids["P6"].String()}})
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.True(t, inLibrary("P6"), "a manual link adds the paper to the library")
	var via string
	require.NoError(t, b.pool.QueryRow(ctx, `SELECT added_via FROM user_library WHERE user_id = $1 AND paper_id = $2`, f.annID, f.ids["P6"]).Scan(&via))
	require.Equal(t, "project_link", via)

	rec = b.do(t, req{method: http.MethodGet, path: "/api/projects/" + pid + "/papers", cookie: ann})
	require.Len(t, decode[struct{ Items []map[string]any }](t, rec.Body.Bytes()).Items, 1)

	// Make the link itself fail after the library insert: neither may remain.
	_, err := b.pool.Exec(ctx, `
		CREATE FUNCTION refuse_link() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$;
		CREATE TRIGGER refuse_link BEFORE INSERT ON project_papers FOR EACH ROW EXECUTE FUNCTION refuse_link();`)
	require.NoError(t, err)
	_, err = b.pool.Exec(ctx, `DELETE FROM paper_user_state WHERE user_id = $1 AND paper_id = $2`, f.annID, f.ids["P5"])
	require.NoError(t, err)
	_, err = b.pool.Exec(ctx, `DELETE FROM user_library WHERE user_id = $1 AND paper_id = $2`, f.annID, f.ids["P5"])
	require.NoError(t, err)
	rec = b.do(t, req{method: http.MethodPost, path: "/api/projects/" + pid + "/papers", cookie: ann, body: map[string]any{"paper_id": f.ids["P5"].String()}})
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.False(t, inLibrary("P5"), "the failed link left no library row behind")

	// Bob's private upload cannot be linked by Ann.
	rec = b.do(t, req{method: http.MethodPost, path: "/api/projects/" + pid + "/papers", cookie: f.bob, body: map[string]any{"paper_id": f.ids["P1"].String()}})
	require.Equal(t, http.StatusNotFound, rec.Code, "Bob cannot link into Ann's project")
	rec = b.do(t, req{method: http.MethodPost, path: "/api/projects/" + pid + "/papers", cookie: ann, body: map[string]any{"paper_id": "nope"}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)

	rec = b.do(t, req{method: http.MethodDelete, path: "/api/projects/" + pid + "/papers/" + f.ids["P6"].String(), cookie: ann})
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.True(t, inLibrary("P6"), "unlinking keeps the paper in the library")
}

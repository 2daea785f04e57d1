-- 0024_milestones_by_project: milestones are read by project (the projects list's
-- next open milestone of each project, a project's page, the cascade when a project
-- is deleted), and no index led with project_id: every project of a list scanned
-- the whole table. With 200 users of 8 projects and 3 milestones each, the list
-- read 38,400 rows for 8 answers (docs/benchmarks.md, issue 18).
CREATE INDEX milestones_project ON milestones (project_id, due_date);

-- 0026_library_by_paper_and_user: two reads that looked up rows through an index
-- holding only half of what they ask.
--
-- Every page of papers (the feed, search results, a paper's page) asks, for each
-- paper, whether it is in the caller's library: user_library by (user_id,
-- paper_id). The planner took user_library_paper, which B-tree deduplication keeps
-- small, and filtered by user among every library holding the paper: 22 rows read
-- for each of a feed page's 21 papers, 0.6 of its 1.5 ms (docs/benchmarks.md, issue
-- 18). With the user in the index it reads the one row it wants, and the index still
-- serves what needs only the paper (the cascade when a paper goes, the visibility
-- triggers of 0025).
DROP INDEX user_library_paper;
CREATE INDEX user_library_paper ON user_library (paper_id, user_id);

-- The projects list counts each project's open tasks. tasks_project leads with
-- project_id but every task is on a page of its own, so the count read a heap page
-- a task. A partial index of the open tasks answers the count from the index.
CREATE INDEX tasks_project_open ON tasks (project_id) WHERE status <> 'done';

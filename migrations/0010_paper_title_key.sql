-- 0010_paper_title_key: an import matches titles through an index, not a scan.
--
-- An imported entry without a shared identifier is the same work as a paper of the
-- user's library with the same title, compared without case, spaces or punctuation
-- (papers.libraryTitleMatchSQL). Without an index each entry recomputed that
-- key for every paper of the library: 4,000 entries against a library of 20,000 took
-- 27 s (docs/benchmarks.md, "Import"). The expression must stay exactly the one in
-- papers.libraryTitleMatchSQL for the planner to use the index.

CREATE INDEX papers_title_key ON papers ((lower(regexp_replace(title, '[^[:alnum:]]+', '', 'g'))));

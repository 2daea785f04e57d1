-- 0026_public_papers_by_discovery: the corpus feed reads the public papers newest
-- first from an index that holds only them.
--
-- A corpus page is the papers every user may see (papers.publicPredicate) merged
-- with the caller's own private ones (papers.corpusPageSQL). Read from
-- papers_discovered, the public side walked past every private upload newer than
-- the page, other users' included: 420 of them before the first page of the bench's
-- data (about 2 ms a page under load, docs/benchmarks.md, issue 18), more with every
-- upload. papers_discovered stays for the reads that want every paper.
CREATE INDEX papers_public_discovered ON papers (discovered_at DESC, id DESC)
 WHERE visibility = 'public' OR discovered_by IS NULL;

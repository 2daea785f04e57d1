-- 0025_library_private_papers: a user's library rows say which of their papers
-- are private, so that reading those few needs neither the whole library nor
-- every private paper of the instance.
--
-- Every passage search reads the private papers the caller may see (the lexical
-- index keeps the public ones; papers.SearchInputs), and every visibility test
-- (papers.visiblePredicate) asked whether a paper was in the caller's library by
-- hashing all of it. With 427 private papers among 10k and libraries of 2,000, the
-- first cost 2.9 ms a search under load and the second about 1 ms a page
-- (docs/benchmarks.md, issue 18), and both grow with every user's uploads and
-- every paper saved. A library row now carries whether its paper is public
-- (papers.publicPredicate: public, or from an instance-level feed), kept equal by
-- triggers as the sort keys are (0012): on a new or moved library row, and on
-- every change of a paper's visibility or discoverer. A row that ever disagreed
-- would hide a private paper from its own reader, never show one to anybody else:
-- the tests hold it equal (papers, TestLibraryRowsKnowWhichPapersArePrivate).
ALTER TABLE user_library ADD COLUMN paper_public boolean NOT NULL DEFAULT true;

UPDATE user_library ul SET paper_public = false
  FROM papers p
 WHERE p.id = ul.paper_id AND NOT (p.visibility = 'public' OR p.discovered_by IS NULL);

CREATE INDEX user_library_private ON user_library (user_id, paper_id) WHERE NOT paper_public;

CREATE OR REPLACE FUNCTION user_library_sort_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT coalesce(p.publication_date, DATE '0001-01-01'), lower(p.title),
           p.visibility = 'public' OR p.discovered_by IS NULL
      INTO NEW.sort_year, NEW.sort_title, NEW.paper_public
      FROM papers p WHERE p.id = NEW.paper_id;
    RETURN NEW;
END $$;

CREATE FUNCTION papers_library_public() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE user_library SET paper_public = (NEW.visibility = 'public' OR NEW.discovered_by IS NULL)
     WHERE paper_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER papers_library_public AFTER UPDATE OF visibility, discovered_by ON papers
    FOR EACH ROW
    WHEN (OLD.visibility IS DISTINCT FROM NEW.visibility OR OLD.discovered_by IS DISTINCT FROM NEW.discovered_by)
    EXECUTE FUNCTION papers_library_public();

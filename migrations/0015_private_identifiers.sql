-- An identifier (DOI, arXiv, OpenAlex, Semantic Scholar, PubMed id) names one
-- shared paper (public, or brought in by the instance), and separately at most one
-- private paper per user: a user's upload or import keeps the identifiers it
-- carries without blocking the shared row a public source describes, and a public
-- record never has to be merged into (and so publish) someone's private copy to
-- find its place. See docs/decisions.md, "A public record never touches a private
-- paper".
--
-- One index per identifier holds both rules: the identifier first (so a lookup by
-- identifier alone still reads it), then the owner of a private row, or NULL for a
-- shared row, with NULLs not distinct.
DROP INDEX papers_doi_key, papers_arxiv_key, papers_openalex_key, papers_s2_key, papers_pubmed_key;

CREATE UNIQUE INDEX papers_doi_key ON papers (doi,
    (CASE WHEN visibility = 'private' THEN discovered_by END)) NULLS NOT DISTINCT WHERE doi IS NOT NULL;
CREATE UNIQUE INDEX papers_arxiv_key ON papers (arxiv_id,
    (CASE WHEN visibility = 'private' THEN discovered_by END)) NULLS NOT DISTINCT WHERE arxiv_id IS NOT NULL;
CREATE UNIQUE INDEX papers_openalex_key ON papers (openalex_id,
    (CASE WHEN visibility = 'private' THEN discovered_by END)) NULLS NOT DISTINCT WHERE openalex_id IS NOT NULL;
CREATE UNIQUE INDEX papers_s2_key ON papers (semantic_scholar_id,
    (CASE WHEN visibility = 'private' THEN discovered_by END)) NULLS NOT DISTINCT WHERE semantic_scholar_id IS NOT NULL;
CREATE UNIQUE INDEX papers_pubmed_key ON papers (pubmed_id,
    (CASE WHEN visibility = 'private' THEN discovered_by END)) NULLS NOT DISTINCT WHERE pubmed_id IS NOT NULL;

-- 0011_paper_provenance: where each bibliographic field of a paper came from.
--
-- An upload's title, authors, abstract, year, venue, DOI and arXiv id are first read
-- from its PDF by heuristics (pdftext), then checked against the paper sources by the
-- paper.enrich job (issue 16 item 2). provenance maps each such field to where its
-- value came from: 'pdf' (read from the PDF, not yet checked against a source) or the
-- name of the source plugin whose public record gave it ('crossref', 'arxiv', ...).
-- A field with no entry came with the row's own source (papers.source), as every
-- field of a search result does.
ALTER TABLE papers ADD COLUMN provenance jsonb NOT NULL DEFAULT '{}'::jsonb
    CHECK (jsonb_typeof(provenance) = 'object');

-- Uploads read before this release took their fields from the PDF alone.
UPDATE papers SET provenance = jsonb_strip_nulls(jsonb_build_object(
         'title', 'pdf',
         'authors', CASE WHEN authors <> '[]'::jsonb THEN 'pdf' END,
         'abstract', CASE WHEN abstract IS NOT NULL THEN 'pdf' END,
         'year', CASE WHEN publication_date IS NOT NULL THEN 'pdf' END,
         'venue', CASE WHEN venue IS NOT NULL THEN 'pdf' END,
         'doi', CASE WHEN doi IS NOT NULL THEN 'pdf' END,
         'arxiv_id', CASE WHEN arxiv_id IS NOT NULL THEN 'pdf' END))
 WHERE source = 'upload' AND visibility = 'private' AND NOT metadata ? 'version_of';

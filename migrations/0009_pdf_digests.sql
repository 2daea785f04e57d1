-- 0009_pdf_digests: a PDF is found by its SHA-256, and a shared paper keeps no
-- caller's link.
--
-- An upload answers with the paper that already holds the same PDF (issue 14 item 5):
-- for the uploader, through paper_texts.sha256 or the pending upload's digest in
-- papers.metadata; for another user, through paper_texts.sha256 of a shared paper.
-- Releasing a refused PDF looks up the same digests before it deletes the file. Each
-- lookup was a scan of the table; these indexes make it one probe.
CREATE INDEX paper_texts_sha256 ON paper_texts (sha256);
CREATE INDEX papers_upload_sha256 ON papers ((metadata->'upload'->>'sha256'));
CREATE INDEX papers_download_sha256 ON papers ((metadata->'download'->>'sha256'));

-- Before this release POST /api/papers/{id}/ingest wrote the caller's own link into a
-- shared paper's metadata, where every reader saw it. A shared paper's download is
-- now only ever its recorded pdf_url: drop any other link (the digest stays, so the
-- file it names is still known to be in use).
UPDATE papers
   SET metadata = metadata #- '{download,url}'
 WHERE (visibility = 'public' OR discovered_by IS NULL)
   AND metadata->'download'->>'url' IS NOT NULL
   AND metadata->'download'->>'url' IS DISTINCT FROM pdf_url;

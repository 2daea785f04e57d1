-- 0012_library_sort_keys_raw_text: the library sorts by year and title through an
-- index, and a paper's text keeps the way back to the words as printed.
--
-- Sort keys. The feed's year and title sorts ordered a user's whole library by keys
-- on papers while the rows are on user_library, so every page joined and sorted the
-- whole library (27-30 ms p50 for 10k papers, docs/benchmarks.md). Each library row
-- now carries its paper's keys, exactly as the feed orders by them
-- (papers.feedOrderOf), in an index per sort. Triggers keep them equal to the
-- paper's title and date: on a new or moved library row, and on every change of a
-- paper's title or date.
ALTER TABLE user_library
    ADD COLUMN sort_year  date NOT NULL DEFAULT DATE '0001-01-01',
    ADD COLUMN sort_title text NOT NULL DEFAULT '';

UPDATE user_library ul
   SET sort_year = coalesce(p.publication_date, DATE '0001-01-01'), sort_title = lower(p.title)
  FROM papers p
 WHERE p.id = ul.paper_id;

CREATE INDEX user_library_by_year ON user_library (user_id, sort_year DESC, paper_id DESC);
CREATE INDEX user_library_by_title ON user_library (user_id, sort_title, paper_id);

CREATE FUNCTION user_library_sort_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT coalesce(p.publication_date, DATE '0001-01-01'), lower(p.title)
      INTO NEW.sort_year, NEW.sort_title
      FROM papers p WHERE p.id = NEW.paper_id;
    RETURN NEW;
END $$;
CREATE TRIGGER user_library_sort_keys BEFORE INSERT OR UPDATE OF paper_id ON user_library
    FOR EACH ROW EXECUTE FUNCTION user_library_sort_keys();

CREATE FUNCTION papers_library_sort_keys() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE user_library
       SET sort_year = coalesce(NEW.publication_date, DATE '0001-01-01'), sort_title = lower(NEW.title)
     WHERE paper_id = NEW.id;
    RETURN NULL;
END $$;
CREATE TRIGGER papers_library_sort_keys AFTER UPDATE OF title, publication_date ON papers
    FOR EACH ROW
    WHEN (OLD.title IS DISTINCT FROM NEW.title OR OLD.publication_date IS DISTINCT FROM NEW.publication_date)
    EXECUTE FUNCTION papers_library_sort_keys();

-- Raw text. paper_texts.content is the clean text every reader uses (running
-- headers dropped, line-break hyphens joined, ligatures spelled out, small capitals
-- rejoined). raw_content is the text as pdftotext extracted it, laid out the same
-- way (pages joined by a form feed), raw_page_offsets where each of its pages
-- starts, and offset_map the map from content back to it: four integers a segment
-- (content start, length, raw start, length), in content order (pdftext.OffsetMap).
-- A passage's raw_start and raw_end are the span of raw_content its words were
-- printed in. All offsets are UTF-8 byte offsets, as char_start and page_offsets
-- are. Texts read before this release have none until read again.
ALTER TABLE paper_texts
    ADD COLUMN raw_content      text,
    ADD COLUMN raw_page_offsets integer[] NOT NULL DEFAULT '{}',
    ADD COLUMN offset_map       integer[] NOT NULL DEFAULT '{}';

ALTER TABLE paper_chunks
    ADD COLUMN raw_start integer CHECK (raw_start >= 0),
    ADD COLUMN raw_end   integer,
    ADD CONSTRAINT paper_chunks_raw_span CHECK (raw_end >= raw_start);

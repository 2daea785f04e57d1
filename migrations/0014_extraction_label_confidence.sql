-- How sure the extractor was of an item's label (claim, method, dataset, result,
-- limitation), from 0 to 1; NULL when it did not say (items extracted before this
-- release, or a model that gives none). The dashboard shows a label below the
-- floor (llm.LabelConfidenceFloor) as "unlabelled" rather than risk a wrong one.
ALTER TABLE paper_extraction_items
    ADD COLUMN label_confidence real CHECK (label_confidence BETWEEN 0 AND 1);

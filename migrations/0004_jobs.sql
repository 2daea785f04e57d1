-- 0004_jobs: the envelope layer over River's job queue (host/internal/jobs,
-- docs/jobs.md).
--
-- River's own tables (river_job, river_queue, ...) are not created here: River's
-- migrator creates them (jobs.Migrate), run by the host right after these numbered
-- migrations. Job owners live in river_job.metadata ("lectern_owner").
--
-- job_progress (0001) keeps a job's progress events. Every new event is announced
-- on the channel lectern_job_progress as "<job_id>:<seq>", so the streams of that
-- job wake up on any host at once. A stream then reads the rows themselves, so a
-- lost notification costs latency, never an event.

CREATE FUNCTION job_progress_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('lectern_job_progress', NEW.job_id::text || ':' || NEW.seq::text);
    RETURN NULL;
END
$$;

CREATE TRIGGER job_progress_notify AFTER INSERT ON job_progress
    FOR EACH ROW EXECUTE FUNCTION job_progress_notify();

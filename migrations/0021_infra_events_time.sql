-- 0021_infra_events_time: /infra-events (issue 22 item 4) stores the time an event
-- happened, which may differ from when it arrived (a shipper retrying a batch an
-- hour later). Events the shipper sends without one keep it NULL. The seven-day
-- purge goes by received_at (index infra_events_received, 0001).
ALTER TABLE infra_events ADD COLUMN occurred_at timestamptz;

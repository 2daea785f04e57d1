-- 0020_messenger_deliveries: what the messenger bot's scheduler delivered, so a
-- scheduled message goes out at most once per user, kind and local date.
--
-- The pairing tables (0001) already hold one user to one chat both ways: the
-- user is the primary key of messenger_user_pairings and chat_id is UNIQUE. This
-- adds the ledger the scheduler claims before it sends. A row is claimed
-- (claimed_at) in the same statement that checks the key is free, and marked
-- sent (sent_at, message_id) only after the messenger confirmed the message; a
-- failed send deletes its claim so the next tick tries again. ref tells apart
-- several deliveries of one kind on one date (the id of a failed job).
CREATE TABLE messenger_deliveries (
    user_id    uuid NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    kind       text NOT NULL CHECK (kind ~ '^[a-z_]{1,32}$'),
    local_date date NOT NULL,
    ref        text NOT NULL DEFAULT '' CHECK (length(ref) <= 64),
    chat_id    text NOT NULL CHECK (length(chat_id) BETWEEN 1 AND 64),
    claimed_at timestamptz NOT NULL DEFAULT now(),
    sent_at    timestamptz,
    message_id text CHECK (length(message_id) <= 64),
    PRIMARY KEY (user_id, kind, local_date, ref)
);
CREATE INDEX messenger_deliveries_claimed ON messenger_deliveries (claimed_at);

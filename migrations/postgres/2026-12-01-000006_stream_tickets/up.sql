-- Stream tickets: short-lived, single-use credentials for `EventSource`, which cannot send
-- an Authorization header. Only a SHA-256 of the ticket is kept, so the table gives nothing
-- away; a ticket is deleted when it is redeemed.
CREATE TABLE stream_tickets (
    ticket_hash TEXT PRIMARY KEY NOT NULL,
    account_id  TEXT NOT NULL,
    game_id     TEXT NOT NULL,
    expires_at  TIMESTAMP NOT NULL
);
CREATE INDEX stream_tickets_expiry ON stream_tickets (expires_at);

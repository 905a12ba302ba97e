-- The player platform: results of finished games per person, ratings per ruleset, and the
-- checkpoints of the projections that build them from the event log.

-- One row per person (account) and finished game: place, total, whether they resigned,
-- and whether the game was public and rated. Profiles and game histories read it.
CREATE TABLE player_results (
    game_id       TEXT NOT NULL,
    account_id    TEXT NOT NULL,
    ruleset       TEXT NOT NULL,
    seat          INTEGER NOT NULL,
    place         INTEGER NOT NULL,
    players       INTEGER NOT NULL,
    total         INTEGER NOT NULL,
    rounds        INTEGER NOT NULL,
    won           BOOLEAN NOT NULL,
    resigned      BOOLEAN NOT NULL,
    public        BOOLEAN NOT NULL,
    rated         BOOLEAN NOT NULL,
    rating_after  DOUBLE PRECISION,
    finished_at   TIMESTAMP NOT NULL,
    PRIMARY KEY (game_id, account_id)
);
CREATE INDEX player_results_account ON player_results (account_id, finished_at);

-- Weng-Lin ratings per registered account and ruleset. score = rating - 3 * uncertainty,
-- the conservative estimate the leaderboard sorts by.
CREATE TABLE ratings (
    account_id  TEXT NOT NULL,
    ruleset     TEXT NOT NULL,
    rating      DOUBLE PRECISION NOT NULL,
    uncertainty DOUBLE PRECISION NOT NULL,
    score       DOUBLE PRECISION NOT NULL,
    games       INTEGER NOT NULL,
    PRIMARY KEY (account_id, ruleset)
);
CREATE INDEX ratings_board ON ratings (ruleset, score, account_id);

-- How far each projection has read the analysts' feed (an opaque feed cursor).
CREATE TABLE projections (
    name       TEXT PRIMARY KEY NOT NULL,
    checkpoint TEXT NOT NULL
);

-- Lobbies with room: the lobby list filters by free seats.
ALTER TABLE games ADD COLUMN free_seats INTEGER NOT NULL DEFAULT 0;

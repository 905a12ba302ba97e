-- A profile's figures per ruleset, kept by the ratings projection with the results it
-- writes, so that a profile reads a few rows instead of every result of the player (a
-- regular's profile took 7× as long at 3×10⁵ games as at 10⁴: docs/scaling.md). One row
-- per account, ruleset and whether the games were public (a profile shows others the
-- public games only).
CREATE TABLE player_stats (
    account_id  TEXT NOT NULL,
    ruleset     TEXT NOT NULL,
    public      BOOLEAN NOT NULL,
    games       BIGINT NOT NULL,
    wins        BIGINT NOT NULL,
    total       BIGINT NOT NULL,
    rounds      BIGINT NOT NULL,
    resigned    BIGINT NOT NULL,
    PRIMARY KEY (account_id, ruleset, public)
);
INSERT INTO player_stats
SELECT account_id, ruleset, public, count(*), count(*) FILTER (WHERE won), sum(total),
       sum(rounds), count(*) FILTER (WHERE resigned)
FROM player_results
GROUP BY account_id, ruleset, public;

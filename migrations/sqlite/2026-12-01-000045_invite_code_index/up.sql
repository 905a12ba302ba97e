-- Joining by an invite code alone (POST /v1/invites/{code}/join) looks the game up by it.
CREATE INDEX games_invite_code ON games (invite_code) WHERE invite_code IS NOT NULL;

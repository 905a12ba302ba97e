DROP INDEX games_invite_code;

DROP INDEX games_host_status;

DROP INDEX games_host_status;
DROP TABLE stream_leases;
DROP TABLE rate_counters;

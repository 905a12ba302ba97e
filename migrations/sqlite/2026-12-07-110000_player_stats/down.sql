DROP TABLE player_stats;

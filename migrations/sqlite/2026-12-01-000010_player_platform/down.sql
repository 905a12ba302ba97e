ALTER TABLE games DROP COLUMN free_seats;
DROP TABLE projections;
DROP TABLE ratings;
DROP TABLE player_results;

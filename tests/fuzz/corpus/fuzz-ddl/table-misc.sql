CREATE TABLE IF NOT EXISTS w.t (id long NOT NULL, p decimal(10, 2), f fixed(16), s varchar(20) NULL, j json);
PAUSE LINK a.l; RESUME LINK l; DROP LINK x;
SELECT * FROM system.links; SELECT * FROM system.streams;

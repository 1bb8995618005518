-- GET /tournaments reads each tournament's last status event (server.tournaments.statuses):
-- a few such events among thousands of standings per tournament, found through this index.
CREATE INDEX table_events_tournament_status ON table_events (table_id, seq)
    WHERE kind IN ('registration_opened', 'registration_closed', 'started', 'paused', 'resumed', 'finished',
                   'cancelled');

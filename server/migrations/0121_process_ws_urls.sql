-- Where each process takes its players' websockets (CASINO_WS_URL, or what `casino serve
-- --workers N --worker-ports` gives each worker): the lobby sends a table's players to its
-- owner's, so their commands are not forwarded through the broker and the owner's frames
-- reach one process (issue 14; SCALING.md). NULL: the process names none (its clients use
-- the address they reached the floor by).
ALTER TABLE casino_processes ADD COLUMN ws_url text;
